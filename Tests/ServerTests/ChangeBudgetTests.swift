import Foundation
import JSON
import Testing

/// `changes_per_second`: a player's mutations over all their connections, beyond the budget,
/// are refused and change nothing; the organizer and the admin console are not limited, and a
/// retry answered from its key costs nothing.
@Suite struct ChangeBudgetTests {
    private static func saves(_ count: Int, from first: Int, keyPrefix: String? = nil) -> String {
        (first..<first + count).map { id in
            var fields: [String: JSONValue] = ["id": .int(id), "op": "save_secret", "title": "Loop",
                                               "description": .string("edit \(id)"), "points": 25]
            if let keyPrefix { fields["idem"] = .string("\(keyPrefix)-\(id)") }
            return JSONValue.object(fields).serialized() + "\n"
        }.joined()
    }

    private static func replies(_ client: TestClient, _ count: Int) throws -> [JSONValue] {
        var replies: [JSONValue] = []
        while replies.count < count {
            guard let message = try client.readMessage() else { throw HarnessError("EOF") }
            if message["push"] == nil { replies.append(message) }
        }
        return replies
    }

    @Test func aPlayersFloodOverSeveralConnectionsIsHeldToTheBudget() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path) { $0.limits.changesPerSecond = 5 }
        defer { try? server.stop() }
        let phone = try server.connect()
        let claim = try phone.ok("claim", ["character": "priya", "device": "phone"])
        let token = try #require(claim["result"]?["token"]?.stringValue)
        let laptop = try server.connect()
        try laptop.ok("auth", ["token": .string(token)])
        let start = try phone.currentVersion()

        let first = try phone.ok("save_secret", ["title": "Loop", "description": "first", "points": 25, "idem": "first"])
        try phone.sendRaw(Array(Self.saves(50, from: 1_000).utf8))
        try laptop.sendRaw(Array(Self.saves(50, from: 2_000).utf8))
        let all = try Self.replies(phone, 50) + Self.replies(laptop, 50)
        let committed = all.filter { $0["ok"] == true }.count
        let limited = all.filter { $0.errorCode == "rate_limited" }
        #expect(committed + limited.count == 100, "every other reply is one of the two")
        #expect(!limited.isEmpty && committed < 100)
        #expect(limited.first?["error"]?["message"]?.stringValue?.contains("More than 5 changes a second from this player") == true)
        let end = try phone.currentVersion()
        #expect(end == start + 1 + committed, "a refused change changed nothing")

        // Answered from its key: no budget needed.
        let retry = try phone.ok("save_secret", ["title": "Loop", "description": "first", "points": 25, "idem": "first"])
        #expect(retry["replayed"] == true && retry["version"] == first["version"])

        // The organizer and the admin console are not limited.
        let sam = try server.connect()
        try sam.ok("claim", ["character": "sam", "device": "phone"])
        let admin = try server.connect()
        try admin.signInAsAdmin()
        try sam.sendAdjustments(50, firstID: 5_000, reason: "bonus")
        try admin.sendAdjustments(50, firstID: 5_000, reason: "bonus")
        #expect(try Self.replies(sam, 50).allSatisfy { $0["ok"] == true })
        #expect(try Self.replies(admin, 50).allSatisfy { $0["ok"] == true })
    }

    /// Each claim is an event kept for good, and the device that holds a character may claim it
    /// again and again: it draws on that character's budget. Refused claims write nothing and
    /// draw nothing, so nobody else's refused attempts use up the holder's claims.
    @Test func claimsThatCommitDrawOnTheCharactersBudget() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        // A clock that never moves: the budget never refills, whatever the machine's speed.
        let server = try ServerHarness(dataDirectory: dir.path, configure: { $0.limits.changesPerSecond = 3 },
                                       steadyClock: { 0 })
        defer { try? server.stop() }
        let client = try server.connect()
        try client.ok("claim", ["character": "theo", "device": "phone"])
        for attempt in 0..<5 {
            #expect(try client.refusal("claim", ["character": "theo", "device": .string("other-\(attempt)")]) == "already_claimed")
        }
        let start = try client.currentVersion()
        try client.ok("claim", ["character": "theo", "device": "phone"])
        try client.ok("claim", ["character": "theo", "device": "phone"])
        let limited = try client.call("claim", ["character": "theo", "device": "phone"])
        #expect(limited.errorCode == "rate_limited", "\(limited.serialized())")
        #expect(limited["error"]?["message"]?.stringValue?.contains("claims of theo a second") == true)
        #expect(try client.currentVersion() == start + 2, "the refused claim changed nothing")
        try client.ok("claim", ["character": "mia", "device": "phone"])
        try server.stop()
    }

    /// A change refused for a stale `expect` costs no budget: a client that re-reads the state
    /// and tries again, however often, still has its changes when it gets the version right.
    @Test func aStaleExpectCostsNoBudget() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        // A steady clock that stands still: the budget never refills during the test.
        let server = try ServerHarness(dataDirectory: dir.path, configure: { $0.limits.changesPerSecond = 3 },
                                       steadyClock: { 1_000 })
        defer { try? server.stop() }
        let priya = try server.connect()
        try priya.ok("claim", ["character": "priya", "device": "phone"])
        let version = try priya.currentVersion()
        let stale = (1...10).map { id in
            JSONValue.object(["id": .int(id), "op": "save_secret", "title": "Loop", "description": "stale",
                              "points": 25, "expect": .int(version - 1)]).serialized() + "\n"
        }.joined()
        try priya.sendRaw(Array(stale.utf8))
        let refusals = try Self.replies(priya, 10).map(\.errorCode)
        #expect(refusals == Array(repeating: "version_conflict", count: 10))
        // Three tokens, one of them spent by the claim.
        for attempt in 0..<2 {
            try priya.ok("save_secret", ["title": "Loop", "description": .string("fresh \(attempt)"), "points": 25,
                                         "expect": .int(version + attempt)])
        }
        #expect(try priya.refusal("save_secret", ["title": "Loop", "description": "over", "points": 25]) == "rate_limited",
                "the budget still holds for real changes")
    }
}
