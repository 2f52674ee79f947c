import JSON
import Protocol
import Testing

@Suite struct WireReplyTests {
    /// A keyed command's reply reuses the result bytes encoded for the log.
    @Test func aReplyWithAnEncodedResultIsTheSameReply() throws {
        let result: JSONValue = ["b": 1, "a": ["y": true, "x": "\u{e9}"]]
        var encoded: [UInt8] = []
        result.write(to: &encoded, sortedKeys: true)
        let reused = Wire.reply(id: .int(3), version: 9, encodedResult: encoded, replayed: true)
        #expect(String(decoding: reused, as: UTF8.self)
            == "{\"id\":3,\"ok\":true,\"version\":9,\"replayed\":true,\"result\":{\"a\":{\"x\":\"\u{e9}\",\"y\":true},\"b\":1}}\n")
        let built = Wire.reply(id: .int(3), version: 9, result: result, replayed: true)
        #expect(try JSONParser.parse(Array(reused.dropLast())) == JSONParser.parse(Array(built.dropLast())))
    }

    /// A snapshot from a view encoded once (and kept for the next reader) is the same push.
    @Test func aSnapshotOfAnEncodedStateIsTheSameSnapshot() throws {
        let state: JSONValue = ["game": ["points": 12, "title": "Mia\u{2019}s 30th"], "timeline": [["seq": 1]]]
        var encoded: [UInt8] = []
        state.write(to: &encoded)
        #expect(Wire.snapshot(version: 41, encodedState: encoded) == Wire.snapshot(version: 41, state: state))
    }
}
