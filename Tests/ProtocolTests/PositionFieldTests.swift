import JSON
import Protocol
import Testing

/// `since` and `after` name a place in a game's history. PROTOCOL.md: a `since` above the current
/// version means a snapshot; an integer too big for 64 bits is above every version there is.
@Suite struct PositionFieldTests {
    private func decode(_ line: String) throws -> Result<Request, RequestFailure> {
        RequestDecoder.decode(try JSONParser.parse(Array(line.utf8)))
    }

    private func operation(_ line: String) throws -> Operation? {
        guard case .success(let request) = try decode(line) else { return nil }
        return request.operation
    }

    private func message(_ line: String) throws -> String? {
        guard case .failure(let failure) = try decode(line) else { return nil }
        return failure.error.message
    }

    @Test(arguments: ["9223372036854775808", "18446744073709551616", "1e30"])
    func anIntegerBeyond64BitsIsPastEveryVersion(number: String) throws {
        #expect(try operation(#"{"id":1,"op":"subscribe","since":\#(number)}"#) == .subscribe(since: Int.max))
        #expect(try operation(#"{"id":1,"op":"timeline","after":\#(number)}"#) == .timeline(after: Int.max, limit: 100))
        #expect(try operation(#"{"id":1,"op":"events","after":\#(number)}"#) == .events(after: Int.max, limit: 100))
    }

    @Test func anythingElseThatIsNotAPlaceIsStillRefused() throws {
        #expect(try message(#"{"id":1,"op":"subscribe","since":-9223372036854775809}"#)
                == "Field `since` must be an integer of at most 64 bits (at most 2^53 written with a fraction or an exponent), got -9.223372036854776e+18")
        #expect(try message(#"{"id":1,"op":"subscribe","since":-1}"#) == "Field `since` must be 0 to \(Int.max), got -1")
        #expect(try message(#"{"id":1,"op":"subscribe","since":2.5}"#) == "Field `since` must be an integer")
        #expect(try message(#"{"id":1,"op":"timeline","after":1e30,"limit":1e30}"#) == "Field `limit` must be 1 to 500, got 1e+30")
        #expect(try operation(#"{"id":1,"op":"subscribe","since":9223372036854775807}"#) == .subscribe(since: Int.max))
    }
}
