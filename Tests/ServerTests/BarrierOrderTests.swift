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
            var batch = ""
            for index in 0..<20 {
                batch += JSONValue.object(["id": .int(10_000 + round * 100 + index), "op": "adjust_points",
                                           "delta": 1, "reason": .string("round \(round)")]).serialized() + "\n"
            }
            let before = mia.mirrorVersion
            try admin.sendRaw(Array(batch.utf8))
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
