import JSON
import Protocol
import Testing

/// A keyed request's fingerprint is what a retry is compared with, also after a restart against
/// fingerprints stored by earlier versions: its bytes must never change.
@Suite struct RequestFingerprintTests {
    private func decode(_ line: String) throws -> Request {
        let json = try JSONParser.parse(Array(line.utf8))
        return try RequestDecoder.decode(json).get()
    }

    @Test func isTheSortedRequestWithoutItsEnvelope() throws {
        let request = try decode(#"{"op":"complete_challenge","id":7,"idem":"k1","expect":3,"proof":{"url":"https://x.test/p.jpg","kind":"photo"},"challenge":"c2"}"#)
        #expect(request.canonicalText == #"{"challenge":"c2","op":"complete_challenge","proof":{"kind":"photo","url":"https://x.test/p.jpg"}}"#)
    }

    /// Pinned bytes: escapes, non-ASCII, nested objects in arrays, numbers, literals, and an `id`
    /// below the top level, which stays.
    @Test func pinnedCanonicalBytes() throws {
        let line = #"{"id":9,"op":"complete_challenge","idem":"k","expect":1,"challenge":"c1","#
            + #""proof":{"text":"Say \"hi\"\n\u0001 \u00dcn\u00ef \u2713","kind":"text"},"#
            + #""zz":[{"b":1,"a":2.5,"id":"inner"},null,true,false,-3]}"#
        let expected = #"{"challenge":"c1","op":"complete_challenge","proof":{"kind":"text","text":"Say \"hi\"\n\u0001 "#
            + "\u{dc}n\u{ef} \u{2713}" + #""},"zz":[{"a":2.5,"b":1,"id":"inner"},null,true,false,-3]}"#
        #expect(try decode(line).canonicalText == expected)
    }

    @Test func matchesTheObjectWithThoseKeysRemoved() throws {
        let lines = [
            #"{"id":"a","op":"adjust_points","idem":"x","delta":-5,"reason":"late \"again\"\n"}"#,
            #"{"id":1,"op":"save_secret","idem":"y","title":"T","description":"Ünïcode ✓","points":50}"#,
            #"{"expect":0,"id":2,"op":"unlock_reward","idem":"z","reward":"r1"}"#,
        ]
        for line in lines {
            guard case .object(var fields) = try JSONParser.parse(Array(line.utf8)) else { Issue.record("not an object"); continue }
            for key in ["id", "idem", "expect"] { fields[key] = nil }
            #expect(try decode(line).canonicalText == JSONValue.object(fields).serialized(sortedKeys: true))
        }
    }

    @Test func ignoresTheEnvelopeAndTheOrderOfFields() throws {
        let first = try decode(#"{"id":1,"op":"unlock_reward","idem":"a","reward":"r1"}"#)
        let second = try decode(#"{"reward":"r1","idem":"b","expect":9,"op":"unlock_reward","id":"other"}"#)
        #expect(first.canonicalText == second.canonicalText)
        #expect(try decode(#"{"id":1,"op":"unlock_reward","reward":"r1"}"#).canonicalText == "")
    }
}
