import Foundation
import JSON
import Testing

/// A mutation that commits nothing, decided while other connections' commits are on their way
/// to disk, waits for them and is answered with their version: its connection must get the
/// patch to that version before the reply (PROTOCOL.md: a subscriber's patch comes first).
@Suite struct BarrierOrderTests {
    @Test func aReplyThatWaitedBehindOthersCommitsFollowsThePatchToItsVersion() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        defer { try? server.stop() }
        let admin = try server.connect()
        admin.label = "admin"
        try admin.signInAsAdmin()
        let mia = try server.connect()
        mia.label = "mia"
        try mia.ok("claim", ["character": "mia", "device": "phone"])
        _ = try mia.subscribe()

        var answeredBehindCommits = 0
        for round in 0..<20 {
            // Twenty commits in one write, then at once a discovery that finds nothing and has no
            // `idem`: decided while the commits are pending, it waits for them.
            let before = mia.mirrorVersion
            try admin.sendAdjustments(20, firstID: 10_000 + round * 100, reason: "round \(round)")
            let reply = try mia.ok("discover_secrets")
            #expect(reply["result"]?["found"] == 0)
            if (reply["version"]?.intValue ?? 0) > before { answeredBehindCommits += 1 }
            for _ in 0..<20 { _ = try admin.nextReply() }
        }
        #expect(mia.problems.isEmpty, "\(mia.problems.prefix(3))")
        #expect(admin.problems.isEmpty, "\(admin.problems.prefix(3))")
        // Not every round need catch the commits in flight, but the point of the test is that
        // some do.
        #expect(answeredBehindCommits > 0)
    }
}

/// `events` lists the log only up to the version its reply names: an event the writer has put
/// on disk but whose actor has not been answered yet is not anyone's to see.
@Suite struct EventsBoundTests {
    @Test func eventsNeverListAVersionBeyondTheirReply() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        defer { try? server.stop() }
        let writer = try server.connect()
        try writer.signInAsAdmin()
        let reader = try server.connect()
        try reader.signInAsAdmin()
        var beyond: [String] = []
        var listed = 0
        for round in 0..<40 {
            try writer.sendAdjustments(20, firstID: 10_000 + round * 100, reason: "round \(round)")
            // Asked again and again while the batch is on its way to disk.
            for _ in 0..<5 {
                let reply = try reader.ok("events", ["after": .int(max(0, round * 20 - 5)), "limit": 1000])
                let version = reply["version"]?.intValue ?? -1
                let versions = (reply["result"]?["events"]?.arrayValue ?? []).compactMap { $0["version"]?.intValue }
                listed += versions.count
                if let last = versions.last, last > version { beyond.append("event \(last) in a reply at version \(version)") }
            }
            for _ in 0..<20 { _ = try writer.nextReply() }
        }
        #expect(beyond.isEmpty, "\(beyond.prefix(3))")
        #expect(listed > 0)
    }
}

/// A dare saved again as it stands commits nothing, and its reply still names the dare.
@Suite struct UnchangedDareTests {
    @Test func savingTheSameDraftAgainLeavesTheVersionAndNamesTheDare() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        defer { try? server.stop() }
        let priya = try server.connect()
        try priya.ok("claim", ["character": "priya", "device": "phone"])
        let dare: [String: JSONValue] = ["title": "Sing", "description": "Sing to the ducks", "points": 50]
        let first = try priya.ok("save_secret", dare)
        let again = try priya.ok("save_secret", dare)
        #expect(first["result"] == ["challenge": "dare-priya"] && again["result"] == ["challenge": "dare-priya"])
        #expect(again["version"] == first["version"], "nothing committed")
        var keyed = dare
        keyed["idem"] = "same-again"
        #expect(try priya.ok("save_secret", keyed)["result"] == ["challenge": "dare-priya"])
    }
}
