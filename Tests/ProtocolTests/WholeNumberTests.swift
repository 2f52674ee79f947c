import JSON
import Protocol
import Testing

/// JSON has numbers, not integers: a client's library may write the integer 2 as `2.0` or `2e0`
/// (a Python float, say). Such a number, up to 2^53, is the integer it equals; a fraction is not
/// one; a bigger one is out of a small range, and otherwise must be written as a plain integer.
@Suite struct WholeNumberTests {
    private func decode(_ line: String) throws -> Result<Request, RequestFailure> {
        RequestDecoder.decode(try JSONParser.parse(Array(line.utf8)))
    }

    private func request(_ line: String) throws -> Request? {
        guard case .success(let request) = try decode(line) else { return nil }
        return request
    }

    private func failure(_ line: String) throws -> RequestFailure? {
        guard case .failure(let failure) = try decode(line) else { return nil }
        return failure
    }

    @Test(arguments: ["2.0", "2e0", "0.2e1", "20e-1", "2.000"])
    func aWholeNumberWrittenWithAFractionOrExponentIsThatInteger(number: String) throws {
        let request = try #require(try request(#"{"id":\#(number),"op":"set_day","day":\#(number),"expect":\#(number)}"#))
        #expect(request.id == .int(2))
        #expect(request.operation == .mutation(.setDay(2)))
        #expect(request.expect == 2)
    }

    @Test func aFractionIsStillNotAnInteger() throws {
        #expect(try failure(#"{"id":1,"op":"set_day","day":2.5}"#)?.error.message == "Field `day` must be an integer")
        let id = try #require(try failure(#"{"id":1.5,"op":"ping"}"#))
        #expect(id.id == nil)
        #expect(id.error.message == "Field `id` must be a string or an integer (of at most 64 bits)")
    }

    @Test func aWholeNumberBeyond2To53IsOutOfRangeNotOfTheWrongType() throws {
        #expect(try failure(#"{"id":1,"op":"set_day","day":18446744073709551616}"#)?.error.message
                == "Field `day` must be 1 to 366, got 1.8446744073709552e+19")
        #expect(try failure(#"{"id":1,"op":"adjust_points","delta":-1e30,"reason":"r"}"#)?.error.message
                == "Field `delta` must be -1000000000 to 1000000000, got -1e+30")
        #expect(try failure(#"{"id":1,"op":"set_day","day":1e17,"expect":1}"#)?.error.message
                == "Field `day` must be 1 to 366, got 1e+17")
        let bigID = "Field `id` must be a string or an integer of at most 64 bits (at most 2^53 written with a fraction or an exponent)"
        #expect(try failure(#"{"id":99999999999999999999,"op":"ping"}"#)?.error.message == bigID)
        #expect(try failure(#"{"id":1e17,"op":"ping"}"#)?.error.message == bigID)
        #expect(try failure(#"{"id":1,"op":"set_day","day":2,"expect":1e17}"#)?.error.message
                == "Field `expect` must be an integer of at most 64 bits (at most 2^53 written with a fraction or an exponent), got 1e+17")
    }

    /// Between 2^53 and 2^63 a place written with an exponent is past every version, like 1e30.
    @Test func aPlaceBeyond2To53WrittenWithAnExponentIsPastEveryVersion() throws {
        #expect(try request(#"{"id":1,"op":"subscribe","since":1e17}"#)?.operation == .subscribe(since: Int.max))
        #expect(try request(#"{"id":1,"op":"timeline","after":1e17}"#)?.operation == .timeline(after: Int.max, limit: 100))
    }

    /// The idempotency fingerprint holds the integer, however it was spelled: a retry of 5 as
    /// 5.0 is the same request.
    @Test func aRetryMaySpellAnIntegerWithAFraction() throws {
        let first = try #require(try request(#"{"id":1,"op":"adjust_points","delta":5,"reason":"r","idem":"k"}"#))
        let retry = try #require(try request(#"{"id":2,"op":"adjust_points","delta":5.0,"reason":"r","idem":"k"}"#))
        let other = try #require(try request(#"{"id":3,"op":"adjust_points","delta":6,"reason":"r","idem":"k"}"#))
        #expect(first.canonicalText == retry.canonicalText)
        #expect(first.canonicalText != other.canonicalText)
    }
}
