import Foundation
import JSON
import Testing

/// Bad lines get a documented code, change nothing and leave the connection usable;
/// too many in a row end it.
@Suite struct BadInputTests {
    struct Case: CustomStringConvertible, Sendable {
        let description: String
        let bytes: [UInt8]
        let code: String
        /// Text the error message must contain (the field it names).
        var mentions: String?
        /// Whether the reply echoes an id (1) or carries `"id": null`.
        var echoesID = false
    }

    static let cases: [Case] = [
        Case(description: "not JSON", bytes: Array("hello there".utf8), code: "bad_json"),
        Case(description: "truncated JSON", bytes: Array(#"{"id": 1, "op": "ping""#.utf8), code: "bad_json"),
        Case(description: "an array", bytes: Array(#"[1, 2, 3]"#.utf8), code: "bad_json"),
        Case(description: "a string", bytes: Array(#""ping""#.utf8), code: "bad_json"),
        Case(description: "a number", bytes: Array("42".utf8), code: "bad_json"),
        Case(description: "missing id", bytes: Array(#"{"op": "ping"}"#.utf8), code: "bad_request", mentions: "id"),
        Case(description: "missing op", bytes: Array(#"{"id": 1}"#.utf8), code: "bad_request", mentions: "op", echoesID: true),
        Case(description: "unknown op", bytes: Array(#"{"id": 1, "op": "make_cake"}"#.utf8), code: "unknown_op", echoesID: true),
        Case(description: "reward of the wrong type", bytes: Array(#"{"id": 1, "op": "unlock_reward", "reward": 5}"#.utf8),
             code: "bad_request", mentions: "reward", echoesID: true),
        Case(description: "delta of the wrong type", bytes: Array(#"{"id": 1, "op": "adjust_points", "delta": "5", "reason": "x"}"#.utf8),
             code: "bad_request", mentions: "delta", echoesID: true),
        Case(description: "idem too long", bytes: Array(#"{"id": 1, "op": "adjust_points", "delta": 5, "reason": "x", "idem": "\#(String(repeating: "k", count: 129))"}"#.utf8),
             code: "bad_request", mentions: "idem", echoesID: true),
        Case(description: "idem of 129 code points that look like one letter",
             bytes: Array(#"{"id": 1, "op": "adjust_points", "delta": 5, "reason": "x", "idem": "k\#(String(repeating: "\u{301}", count: 128))"}"#.utf8),
             code: "bad_request", mentions: "idem", echoesID: true),
        Case(description: "an id beyond 64 bits", bytes: Array(#"{"id": 99999999999999999999999, "op": "ping"}"#.utf8),
             code: "bad_request", mentions: "64 bits"),
        Case(description: "invalid UTF-8", bytes: Array(#"{"id": 1, "op": "ping", "x": ""#.utf8) + [0xFF, 0xFE] + Array(#""}"#.utf8),
             code: "bad_json"),
        Case(description: "100,000 nested brackets", bytes: [UInt8](repeating: UInt8(ascii: "["), count: 100_000), code: "bad_json"),
        Case(description: "100,000 nested objects", bytes: Array(String(repeating: #"{"a":"#, count: 100_000).utf8), code: "bad_json"),
        Case(description: "a line over the limit", bytes: Array(#"{"id": 1, "op": "ping", "pad": ""#.utf8)
             + [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20) + Array(#""}"#.utf8), code: "line_too_long"),
    ]

    @Test(arguments: cases)
    func badLineIsAnsweredAndChangesNothing(_ badCase: Case) throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        // The line limit sits above the nesting cases, so those test the depth guard, not the length one.
        let server = try ServerHarness(dataDirectory: dir.path) { $0.limits.maxLineBytes = 768 << 10 }
        let admin = try server.connect()
        try admin.ok("admin", ["key": .string(ServerHarness.adminKey)])
        let before = try admin.ok("state")

        try admin.sendRaw(badCase.bytes + [0x0A])
        let reply = try admin.nextReply()

        #expect(reply["ok"] == .bool(false))
        #expect(reply["error"]?["code"] == .string(badCase.code), "\(reply.serialized().prefix(300))")
        #expect(reply["id"] == (badCase.echoesID ? .int(1) : .null), "\(reply.serialized().prefix(300))")
        if let mentions = badCase.mentions {
            let message = reply["error"]?["message"]?.stringValue ?? ""
            #expect(message.contains(mentions), "message names \(mentions): \(message)")
        }
        let after = try admin.ok("state")
        let unchanged = after["version"] == before["version"] && after["result"] == before["result"]
        #expect(unchanged, "a bad line changes nothing")
        #expect(admin.problems == [])
        try server.stop()
    }

    @Test func twentyBadLinesInARowEndTheConnection() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        let client = try server.connect()
        // Nineteen, then an ok reply resets the count.
        func sendBad(_ line: String, times: Int) throws {
            for _ in 0..<times { try client.sendLine(line) }
            for _ in 0..<times { #expect(try client.nextReply()["ok"] == .bool(false)) }
        }
        try sendBad("nonsense", times: 19)
        try client.ok("ping")
        try sendBad(#"{"id": "x", "op": "no_such_op"}"#, times: 19)
        try client.ok("ping")
        // A refusal that is not a bad line (unauthenticated) neither counts nor resets.
        try sendBad("[]", times: 10)
        #expect(try client.refusal("state") == "unauthenticated")
        for _ in 0..<10 { try client.sendLine("[]") }
        let rest = try client.readToEOF()
        let replies = rest.filter { $0["push"] == nil }
        #expect(replies.count == 10, "every bad line got its reply before the bye")
        #expect(rest.last?["push"] == .string("bye"))
        #expect(client.byeReason == "too_many_errors")
    }

    @Test func overLongLineIsSkippedToItsNewline() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path) { $0.limits.maxLineBytes = 1024 }
        let client = try server.connect()
        // The long line arrives in pieces with a valid request right behind it in the same send.
        let long = [UInt8](repeating: UInt8(ascii: "{"), count: 5000)
        try client.sendRaw(long)
        try client.sendRaw(long + [0x0A] + Array(#"{"id": "after", "op": "ping"}"#.utf8) + [0x0A])
        let tooLong = try client.nextReply()
        #expect(tooLong["error"]?["code"] == .string("line_too_long"))
        #expect(tooLong["id"] == .null)
        let ping = try client.nextReply()
        #expect(ping["id"] == .string("after"))
        #expect(ping["ok"] == .bool(true))
        // Exactly at the limit is accepted.
        let prefix = #"{"id": 2, "op": "ping", "pad": ""#
        let line = prefix + String(repeating: "p", count: 1024 - prefix.utf8.count - 2) + #""}"#
        #expect(line.utf8.count == 1024)
        try client.sendLine(line)
        #expect(try client.nextReply()["ok"] == .bool(true))
        try server.stop()
    }
}
