import Foundation
import JSON
import Testing

/// Many connections asking for the same thing at once: the loop thread decides each against the
/// speculative state, one after another, so exactly one wins and every balance rule holds.
@Suite struct RaceTests {
    /// Sends one request on every client from concurrent threads, then collects the replies.
    static func sendTogether(_ clients: [TestClient], _ op: String, _ args: [String: JSONValue]) throws -> [JSONValue] {
        let ids = LockedBox<[Int: Int]>([:])
        let failures = LockedBox<[String]>([])
        DispatchQueue.concurrentPerform(iterations: clients.count) { index in
            do {
                let id = try clients[index].send(op, args)
                ids.update { $0[index] = id }
            } catch {
                failures.update { $0.append("\(error)") }
            }
        }
        if let failure = failures.value.first { throw HarnessError(failure) }
        return try clients.indices.map { try clients[$0].reply(to: ids.value[$0]!) }
    }

    @Test func twentyConnectionsUnlockTheSameReward() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        let admin = try server.connect()
        try admin.ok("admin", ["key": .string(ServerHarness.adminKey)])
        try admin.ok("adjust_points", ["delta": 100, "reason": "a head start"])
        let first = try server.connect()
        let token = try #require(try first.ok("claim", ["character": "mia", "device": "phone"])["result"]?["token"])
        var clients: [TestClient] = []
        for _ in 0..<20 {
            let client = try server.connect()
            try client.ok("auth", ["token": token])
            clients.append(client)
        }
        let versionBefore = try admin.ok("ping")["version"]?.intValue ?? -1

        let replies = try Self.sendTogether(clients, "unlock_reward", ["reward": "r01"])

        let winners = replies.filter { $0["ok"] == .bool(true) }
        #expect(winners.count == 1)
        let codes = replies.compactMap { $0["error"]?["code"]?.stringValue }
        #expect(codes.count == 19)
        #expect(codes.allSatisfy { $0 == "already_unlocked" || $0 == "insufficient_points" }, "\(codes)")
        #expect(winners.first?["result"]?["points"] == .int(25))
        let state = try admin.ok("state")
        #expect(state["version"]?.intValue == versionBefore + 1, "one commit")
        #expect(state["result"]?["state"]?["game"]?["points"] == .int(25))
        #expect(state["result"]?["state"]?["game"]?["spent"] == .int(75))
        let events = try admin.ok("events", ["after": .int(versionBefore)])["result"]?["events"]?.arrayValue ?? []
        #expect(events.count == 1)
        try server.stop()
    }

    @Test func oneIdempotencyKeyOnTenConnections() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        var clients: [TestClient] = []
        for _ in 0..<10 {
            let client = try server.connect()
            try client.ok("admin", ["key": .string(ServerHarness.adminKey)])
            clients.append(client)
        }
        let versionBefore = try clients[0].ok("ping")["version"]?.intValue ?? -1
        let args: [String: JSONValue] = ["delta": 7, "reason": "birthday cake", "idem": "cake-1"]

        let replies = try Self.sendTogether(clients, "adjust_points", args)

        #expect(replies.allSatisfy { $0["ok"] == .bool(true) }, "\(replies.map { $0.serialized() })")
        #expect(replies.filter { $0["replayed"] == .bool(true) }.count == 9)
        #expect(Set(replies.compactMap { $0["version"]?.intValue }) == [versionBefore + 1], "one commit, same version everywhere")
        #expect(Set(replies.compactMap { $0["result"] }).count == 1, "every copy gets the first reply")
        let state = try clients[0].ok("state")
        #expect(state["version"]?.intValue == versionBefore + 1)
        #expect(state["result"]?["state"]?["game"]?["points"] == .int(7))

        // Later: a replay still says replayed; the same key with other arguments is refused.
        let later = try clients[3].ok("adjust_points", args)
        #expect(later["replayed"] == .bool(true))
        #expect(later["version"]?.intValue == versionBefore + 1)
        var other = args
        other["delta"] = 8
        #expect(try clients[4].refusal("adjust_points", other) == "idempotency_mismatch")
        #expect(try clients[4].refusal("set_day", ["day": 2, "idem": "cake-1"]) == "idempotency_mismatch")
        // A replay is answered before `expect` is checked.
        var stale = args
        stale["expect"] = 0
        #expect(try clients[5].ok("adjust_points", stale)["replayed"] == .bool(true))
        #expect(try clients[0].ok("ping")["version"]?.intValue == versionBefore + 1, "nothing more committed")
        try server.stop()
    }

    @Test func expectWithAStaleVersionIsAConflict() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        let admin = try server.connect()
        try admin.ok("admin", ["key": .string(ServerHarness.adminKey)])
        let version = try admin.ok("ping")["version"]?.intValue ?? -1
        let current = try admin.ok("adjust_points", ["delta": 10, "reason": "first", "expect": .int(version)])
        #expect(current["version"]?.intValue == version + 1)
        let before = try admin.ok("state")

        let answer = try admin.call("adjust_points", ["delta": 10, "reason": "second", "expect": .int(version)])

        #expect(answer["error"]?["code"] == .string("version_conflict"))
        let after = try admin.ok("state")
        let unchanged = after["version"] == before["version"] && after["result"] == before["result"]
        #expect(unchanged, "a conflict changes nothing")
        // A refused keyed request may be retried with the same key.
        let retried = try admin.ok("adjust_points", ["delta": 10, "reason": "second", "expect": .int(version + 1), "idem": "k"])
        #expect(retried["version"]?.intValue == version + 2)
        try server.stop()
    }
}

/// A value shared between threads behind a lock.
final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    var value: Value {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }

    func update(_ change: (inout Value) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        change(&stored)
    }
}
