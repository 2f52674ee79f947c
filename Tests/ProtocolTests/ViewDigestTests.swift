import JSON
import Protocol
import Testing

/// `since_digest`: the digest is defined so that a client in another language can make it from
/// the JSON it holds; the expected value here was made by Python's `json.dumps(view,
/// sort_keys=True, separators=(",", ":"), ensure_ascii=False)` and `hashlib.sha256`.
@Suite struct ViewDigestTests {
    /// Members out of order, whitespace, escapes written as `\u` that need none, controls, a
    /// DEL (not escaped), characters outside the BMP, nulls, negative numbers.
    static let view = #"""
    { "timeline": [ { "title": "Caf\u00e9 \"cr\u00e8me\" \\ 🎂", "subtitle": "tab\there\nnew\u0001\u001f\u007f", "from": null } ],
      "me": { "role": "birthday", "character": "mia" },
      "game": { "points": -5, "final_badge": false, "final_badge_at": null, "day": 2 },
      "characters": { "zoe": { "name": "Zoë" }, "mia": { "urls": ["https://x.test/a/b?c=1&d=<e>"], "name": "Mia" }, "ana": { "name": "Ana" } } }
    """#

    @Test func theDigestIsThatOfTheCanonicalTextAnotherLanguageWrites() throws {
        let view = try JSONParser.parse(Self.view)
        #expect(ViewDigest.of(view) == "60b9396ab90ea173c77ac1953cc61b6b3874e7394676fec79fdf7c1df064abd4")
    }

    @Test func anyChangeChangesIt() throws {
        let view = try JSONParser.parse(Self.view)
        let changed = try JSONParser.parse(Self.view.replacingOccurrences(of: "\"day\": 2", with: "\"day\": 3"))
        #expect(ViewDigest.of(view) != ViewDigest.of(changed))
    }

    private func decode(_ line: String) throws -> Result<Request, RequestFailure> {
        RequestDecoder.decode(try JSONParser.parse(Array(line.utf8)))
    }

    @Test func subscribeTakesADigestInEitherCaseAndKeepsItLowercased() throws {
        let digest = "60B9396AB90EA173C77AC1953CC61B6B3874E7394676FEC79FDF7C1DF064ABD4"
        let request = try decode(#"{"id":1,"op":"subscribe","since":4,"since_digest":"\#(digest)"}"#).get()
        #expect(request.operation == .subscribe(since: 4, sinceDigest: digest.lowercased()))
        #expect(try decode(#"{"id":1,"op":"subscribe","since":4,"since_digest":null}"#).get().operation == .subscribe(since: 4))
    }

    @Test(arguments: [#""""#, #""60b9""#, "\"\(String(repeating: "z", count: 64))\"", "64", "[]"])
    func aDigestThatIsNotOneIsRefusedByName(value: String) throws {
        guard case .failure(let failure) = try decode(#"{"id":1,"op":"subscribe","since":4,"since_digest":\#(value)}"#) else {
            Issue.record("since_digest \(value) was taken")
            return
        }
        #expect(failure.error.code == .badRequest)
        #expect(failure.error.message.contains("since_digest"), "\(failure.error.message)")
    }
}
