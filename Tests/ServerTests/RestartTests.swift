import Foundation
import JSON
import Testing

/// A second server on the same data directory continues where the first stopped.
@Suite struct RestartTests {
    @Test func stateTokensAndIdempotencySurviveARestart() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let first = try ServerHarness(dataDirectory: dir.path) { $0.synchronous = .normal }
        let admin = try first.connect()
        try admin.ok("admin", ["key": .string(ServerHarness.adminKey)])
        let mia = try first.connect()
        let token = try #require(try mia.ok("claim", ["character": "mia", "device": "phone"])["result"]?["token"])
        try mia.subscribe()
        let resumeFrom = mia.mirrorVersion
        let oldView = try #require(mia.mirror)
        let keyed: [String: JSONValue] = ["challenge": "c06", "proof": ["kind": "text", "text": "thirty, eventually"], "idem": "pushups"]
        let completed = try mia.ok("complete_challenge", keyed)
        try admin.ok("adjust_points", ["delta": 40, "reason": "good sport", "idem": "sport"])
        try mia.ok("unlock_reward", ["reward": "r02"])
        let stateBefore = try admin.ok("state")
        let miaBefore = try mia.ok("state")
        try first.stop()
        #expect(mia.byeReason == nil || mia.byeReason == "server_shutdown")

        let second = try ServerHarness(dataDirectory: dir.path) { $0.synchronous = .normal }
        let admin2 = try second.connect()
        try admin2.ok("admin", ["key": .string(ServerHarness.adminKey)])
        let stateAfter = try admin2.ok("state")
        #expect(stateAfter["version"] == stateBefore["version"])
        let sameState = stateAfter["result"] == stateBefore["result"]
        #expect(sameState, "the admin view is the same after the restart")
        #expect(admin2.hello["version"] == stateBefore["version"])

        let mia2 = try second.connect()
        mia2.recordsLines = true
        #expect(try mia2.ok("auth", ["token": token])["result"]?["character"] == .string("mia"))
        let miaAfter = try mia2.ok("state")
        let sameView = miaAfter["result"] == miaBefore["result"]
        #expect(sameView)

        let replay = try mia2.ok("complete_challenge", keyed)
        #expect(replay["replayed"] == .bool(true))
        #expect(replay["version"] == completed["version"])
        #expect(replay["result"] == completed["result"])
        var changed = keyed
        changed["challenge"] = "c13"
        #expect(try mia2.refusal("complete_challenge", changed) == "idempotency_mismatch")
        #expect(try admin2.ok("adjust_points", ["delta": 40, "reason": "good sport", "idem": "sport"])["replayed"] == .bool(true))
        #expect(try admin2.ok("ping")["version"] == stateBefore["version"], "replays commit nothing")

        // Resuming from a version before the restart is one patch, not a snapshot.
        mia2.adoptMirror(oldView, version: resumeFrom)
        let resumed = try mia2.subscribe(since: resumeFrom)
        #expect(resumed["result"]?["mode"] == .string("patch"))
        #expect(mia2.snapshots == 0)
        #expect(mia2.patches == 1)
        #expect(mia2.lines.last?.message["from"] == .int(resumeFrom))
        let caughtUp = mia2.mirror == miaAfter["result"]?["state"]
        #expect(caughtUp, "the old view plus the resume patch is the current view")
        try mia2.checkMirror(step: "after resume")
        #expect(mia2.problems == [])
        try second.stop()
    }
}
