import Foundation
import JSON
import Testing
import UV
import POSIXSupport

/// Each configured limit, gone over with a small value.
@Suite struct LimitTests {
    @Test func extraConnectionIsRefusedWithAnErrorLine() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path) { $0.limits.maxConnections = 3 }
        let held = try (0..<3).map { _ in try server.connect() }
        let extra = try BlockingLineSocket(host: "127.0.0.1", port: server.port)
        var lines: [JSONValue] = []
        while let line = try extra.readLine(timeoutMilliseconds: 10_000) { lines.append(try JSONParser.parse(line)) }
        #expect(lines.count == 2, "hello, one error line, then the server hangs up")
        #expect(lines.first?["push"] == "hello", "hello is the first line of every connection")
        #expect(lines.last?["ok"] == .bool(false))
        #expect(lines.last?["id"] == .null)
        #expect(lines.last?["error"]?["code"] == "unavailable")
        for client in held { try client.ok("ping") }
        try server.stop()
    }

    /// Reading pauses at the limit and resumes once half of it is answered; with a limit of 1
    /// that half is nothing at all, which must still resume. (Limits 2 and 3 pass either way,
    /// the six lines arriving in one read: they stand beside 1 as the ordinary case.)
    @Test(arguments: [1, 2, 3])
    func pipelinedRequestsPastThePendingLimitAreAllAnswered(limit: Int) throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path) { $0.limits.maxPendingRequests = limit }
        let admin = try server.connect()
        try admin.signInAsAdmin()
        let batch = (1...6).map { #"{"id": \#($0), "op": "adjust_points", "delta": 1, "reason": "pipelined"}"# }
        try admin.sendRaw(Array((batch.joined(separator: "\n") + "\n").utf8))
        let replies = try (1...6).map { _ in try admin.nextReply() }
        #expect(replies.map { $0["ok"] } == Array(repeating: .bool(true), count: 6), "\(replies.map { $0.serialized() })")
        #expect(try admin.ok("state")["result"]?["state"]?["game"]?["points"] == 6)
        try server.stop()
    }

    @Test func requestsOverTheRateAreRateLimited() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path) { $0.limits.requestsPerSecond = 5 }
        let client = try server.connect()
        // One send of 50 pings: the burst is the rate, so most are refused.
        let batch = (1...50).map { #"{"id": \#($0), "op": "ping"}"# }.joined(separator: "\n") + "\n"
        try client.sendRaw(Array(batch.utf8))
        let replies = try (1...50).map { _ in try client.nextReply() }
        let limited = replies.filter { $0["error"]?["code"] == .string("rate_limited") }
        #expect(!limited.isEmpty)
        #expect(replies.filter { $0["ok"] == .bool(true) }.count >= 5)
        #expect(replies.count == 50, "every request got an answer")
        // Rate limiting is not a bad line: 45 of them did not end the connection.
        #expect(client.byeReason == nil)
        try server.stop()
    }

    @Test
    func rateLimitedReplyCarriesTheRequestID() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path) { $0.limits.requestsPerSecond = 1 }
        let client = try server.connect()
        try client.sendRaw(Array(#"{"id": "first", "op": "ping"}\#n{"id": "second", "op": "ping"}\#n"#.utf8))
        #expect(try client.nextReply()["id"] == .string("first"))
        let limited = try client.nextReply()
        #expect(limited["error"]?["code"] == .string("rate_limited"))
        #expect(limited["id"] == .string("second"))
        try server.stop()
    }

    @Test func textLengthsAreBounded() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        let priya = try server.connect()
        try priya.ok("claim", ["character": "priya", "device": "phone"])
        let version = try priya.ok("ping")["version"]
        let long = try priya.call("save_secret", ["title": .string(String(repeating: "t", count: 121)), "description": "d", "points": 25])
        #expect(long["error"]?["code"] == .string("bad_request"))
        #expect(long["error"]?["message"]?.stringValue?.contains("title") == true)
        let longText = try priya.call("save_secret", ["title": "t", "description": .string(String(repeating: "d", count: 2001)), "points": 25])
        #expect(longText["error"]?["code"] == .string("bad_request"))
        #expect(try priya.refusal("save_secret", ["title": "t", "description": "d", "points": 30]) == "bad_request")
        #expect(try priya.refusal("save_secret", ["title": "", "description": "d", "points": 25]) == "bad_request")
        #expect(try priya.ok("ping")["version"] == version, "refused, nothing committed")
        try priya.ok("save_secret", ["title": .string(String(repeating: "t", count: 120)), "description": .string(String(repeating: "d", count: 2000)), "points": 25])
        let admin = try server.connect()
        try admin.ok("admin", ["key": .string(ServerHarness.adminKey)])
        #expect(try admin.refusal("adjust_points", ["delta": 1_000_000_001, "reason": "x"]) == "bad_request")
        #expect(try admin.refusal("adjust_points", ["delta": 0, "reason": "x"]) == "bad_request")
        #expect(try admin.refusal("adjust_points", ["delta": 1, "reason": .string(String(repeating: "r", count: 201))]) == "bad_request")
        #expect(try admin.refusal("set_day", ["day": 367]) == "bad_request")
        #expect(try admin.refusal("claim", ["character": "theo", "device": .string(String(repeating: "d", count: 129))]) == "bad_request")
        try server.stop()
    }
}

/// Tokens stop working at once when the organizer unclaims or another device takes over.
@Suite struct SessionTests {
    @Test func unclaimSaysByeToEveryConnectionOfTheToken() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        let miaPhone = try server.connect()
        let token = try #require(try miaPhone.ok("claim", ["character": "mia", "device": "phone"])["result"]?["token"])
        let miaTablet = try server.connect()
        try miaTablet.ok("auth", ["token": token])
        try miaTablet.subscribe()
        let sam = try server.connect()
        try sam.ok("claim", ["character": "sam", "device": "sam-phone"])

        try sam.ok("unclaim", ["character": "mia"])

        for client in [miaPhone, miaTablet] {
            _ = try client.readToEOF()
            #expect(client.byeReason == "unclaimed")
        }
        let late = try server.connect()
        #expect(try late.refusal("auth", ["token": token]) == "unauthenticated")
        // Free again: a new device claims without a PIN; unclaiming nobody commits nothing.
        try late.ok("claim", ["character": "mia", "device": "new-phone"])
        let version = try sam.ok("ping")["version"]
        #expect(try sam.ok("unclaim", ["character": "theo"])["version"] == version)
        #expect(try late.refusal("unclaim", ["character": "sam"]) == "forbidden")
        try sam.ok("ping")
        try server.stop()
    }

    @Test func pinTakeoverRevokesEveryEarlierToken() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        let first = try server.connect()
        let oldToken = try #require(try first.ok("claim", ["character": "priya", "device": "old-phone"])["result"]?["token"])
        // The same device may claim again; both of its tokens work.
        let again = try server.connect()
        let secondToken = try #require(try again.ok("claim", ["character": "priya", "device": "old-phone"])["result"]?["token"])
        #expect(secondToken != oldToken)
        let viaToken = try server.connect()
        try viaToken.ok("auth", ["token": oldToken])

        let thief = try server.connect()
        #expect(try thief.refusal("claim", ["character": "priya", "device": "new-phone"]) == "already_claimed")
        #expect(try thief.refusal("claim", ["character": "priya", "device": "new-phone", "pin": "0000"]) == "forbidden")
        let newToken = try #require(try thief.ok("claim", ["character": "priya", "device": "new-phone", "pin": "1964"])["result"]?["token"])

        for client in [first, again, viaToken] {
            _ = try client.readToEOF()
            #expect(client.byeReason == "unclaimed")
        }
        let check = try server.connect()
        #expect(try check.refusal("auth", ["token": oldToken]) == "unauthenticated")
        #expect(try check.refusal("auth", ["token": secondToken]) == "unauthenticated")
        #expect(try check.ok("auth", ["token": newToken])["result"]?["character"] == .string("priya"))
        #expect(try thief.ok("whoami")["result"]?["character"] == .string("priya"))
        try server.stop()
    }
}
