import Foundation
import JSON
import Testing

/// Requests sent back to back in one write are answered in order, and reads see the
/// mutations sent before them; `expect` equal to the current version commits.
@Suite struct PipeliningTests {
    static func line(_ id: Int, _ op: String, _ args: [String: JSONValue] = [:]) -> String {
        var fields = args
        fields["id"] = .int(id)
        fields["op"] = .string(op)
        return JSONValue.object(fields).serialized() + "\n"
    }

    @Test func mixedRequestsInOneWriteAreAnsweredInOrder() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        defer { try? server.stop() }
        let client = try server.connect()
        client.label = "pipeliner"
        try client.signInAsAdmin()
        let start = try client.currentVersion()

        // Ids far from TestClient's own counter, so its bookkeeping ignores these replies.
        let batch = Self.line(101, "adjust_points", ["delta": 7, "reason": "first"])
            + Self.line(102, "state")
            + Self.line(103, "adjust_points", ["delta": 5, "reason": "second"])
            + Self.line(104, "subscribe")
            + Self.line(105, "ping")
        try client.sendRaw(Array(batch.utf8))

        var received: [JSONValue] = []
        while received.filter({ $0["push"] == nil }).count < 5 {
            guard let message = try client.readMessage() else { throw HarnessError("EOF in the middle of the pipeline") }
            received.append(message)
        }
        let shape = received.map { $0["push"]?.stringValue ?? "reply \($0["id"]?.intValue ?? -1)" }
        #expect(shape == ["reply 101", "reply 102", "reply 103", "reply 104", "snapshot", "reply 105"])
        guard shape.count == 6 else { return }

        #expect(received[0]["ok"] == true)
        #expect(received[0].versionNumber == start + 1)
        #expect(received[1].versionNumber == start + 1, "the state reflects the first mutation")
        #expect(received[1]["result"]?["state"]?["game"]?["points"] == 7)
        #expect(received[2].versionNumber == start + 2)
        #expect(received[2]["result"] == ["points": 12])
        #expect(received[3]["result"] == ["mode": "snapshot"])
        #expect(received[3].versionNumber == start + 2)
        #expect(received[4]["version"] == .int(start + 2))
        #expect(received[4]["state"]?["game"]?["points"] == 12)
        #expect(received[5].versionNumber == start + 2)

        // The next commit reaches the new subscriber as a patch chained on its snapshot.
        let other = try server.connect()
        try other.signInAsAdmin()
        try other.ok("adjust_points", ["delta": 1, "reason": "later"])
        let patch = try client.waitForPush("patch")
        #expect(patch["from"] == .int(start + 2))
        #expect(patch["to"] == .int(start + 3))
        #expect(client.mirrorVersion == start + 3)
        #expect(client.mirror?["game"]?["points"] == 13)
        #expect(client.problems == [])
    }

    @Test func aReadBehindAFailingMutationStillAnswersInOrder() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        defer { try? server.stop() }
        let client = try server.connect()
        try client.signInAsAdmin()
        let start = try client.currentVersion()
        let batch = Self.line(201, "adjust_points", ["delta": -5, "reason": "too much"])
            + Self.line(202, "adjust_points", ["delta": 3, "reason": "fine"])
            + Self.line(203, "whoami")
            + Self.line(204, "force_complete", ["challenge": "nope"])
            + Self.line(205, "ping")
        try client.sendRaw(Array(batch.utf8))
        var replies: [JSONValue] = []
        for _ in 0..<5 { replies.append(try client.nextReply()) }
        #expect(replies.map { $0["id"]?.intValue ?? -1 } == [201, 202, 203, 204, 205])
        #expect(replies.map { $0.errorCode ?? "ok" } == ["insufficient_points", "ok", "ok", "not_found", "ok"])
        #expect(replies[1].versionNumber == start + 1)
        #expect(replies[4].versionNumber == start + 1)
    }

    @Test func expectEqualToTheCurrentVersionCommits() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        defer { try? server.stop() }
        let admin = try server.connect()
        try admin.signInAsAdmin()
        try admin.subscribe()

        // One event.
        var expect = try admin.currentVersion()
        let adjusted = try admin.ok("adjust_points", ["delta": 100, "reason": "cas", "expect": .int(expect)])
        #expect(adjusted.versionNumber == expect + 1)

        // Unlock every reward but one, then the last with `expect`: two events (unlock and badge).
        for reward in ["r01", "r02", "r03", "r04", "r05", "r06", "r07", "r08"] {
            try admin.ok("force_unlock", ["reward": .string(reward), "deduct": false])
        }
        expect = try admin.currentVersion()
        let last = try admin.ok("force_unlock", ["reward": "r09", "deduct": false, "expect": .int(expect)])
        let committed = try admin.ok("events", ["after": .int(expect)])["result"]?["events"]?.arrayValue ?? []
        #expect(committed.count == 2)
        #expect(last.versionNumber == expect + committed.count, "the reply's version is expect + its events")
        #expect(committed.map { $0["type"]?.stringValue ?? "?" } == ["reward_unlocked", "final_badge_unlocked"])

        // A stale expect now is a conflict that names the current version, and commits nothing.
        let stale = try admin.call("adjust_points", ["delta": 1, "reason": "late", "expect": .int(expect)])
        #expect(stale.errorCode == "version_conflict")
        #expect(try admin.currentVersion() == expect + 2)
        // A replay is answered before `expect` is checked.
        let keyed: [String: JSONValue] = ["delta": 2, "reason": "keyed", "idem": "cas-key"]
        var first = keyed
        first["expect"] = .int(expect + 2)
        let original = try admin.ok("adjust_points", first)
        #expect(original.versionNumber == expect + 3)
        var stalely = keyed
        stalely["expect"] = .int(expect)
        let replay = try admin.ok("adjust_points", stalely)
        #expect(replay["replayed"] == true)
        #expect(replay.versionNumber == expect + 3)
        expect += 1
        // A mutation that changes nothing with a matching expect answers at the current version.
        let sameDay = try admin.ok("set_day", ["day": 1, "expect": .int(expect + 2)])
        #expect(sameDay.versionNumber == expect + 2)
        try admin.checkMirror(step: "after expect")
        #expect(admin.problems == [])
    }
}
