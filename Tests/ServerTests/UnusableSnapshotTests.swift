import Foundation
import JSON
import Testing
@testable import EventLog
import Server

/// A snapshot only shortens a replay: one that cannot be read (damaged, or written by a build
/// whose state had other fields) is passed over, and the log, which is the game, is replayed
/// from its first event instead of the server refusing to start.
@Suite struct UnusableSnapshotTests {
    @Test func aServerStartsAndResumesFromTheLogWhenItsSnapshotsCannotBeRead() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let configure: (inout ServerConfig) -> Void = { $0.synchronous = .normal; $0.snapshotEvery = 4 }
        let first = try ServerHarness(dataDirectory: dir.path, configure: configure)
        let admin = try first.connect()
        try admin.ok("admin", ["key": .string(ServerHarness.adminKey)])
        let mia = try first.connect()
        try mia.ok("claim", ["character": "mia", "device": "phone"])
        try mia.subscribe()
        let resumeFrom = mia.mirrorVersion
        let oldView = try #require(mia.mirror)
        for delta in 1...5 { try admin.ok("adjust_points", ["delta": .int(delta), "reason": .string("round \(delta)")]) }
        // Read up to here: the view of a version past the first snapshot, to resume from.
        try mia.ok("state")
        let laterFrom = mia.mirrorVersion
        let laterView = try #require(mia.mirror)
        for delta in 6...9 { try admin.ok("adjust_points", ["delta": .int(delta), "reason": .string("round \(delta)")]) }
        let before = try admin.ok("state")
        try first.stop()

        let path = dir.path + "/birthdayquest.sqlite"
        let store = try EventStore(path: path, options: StoreOptions(synchronous: .full))
        let damaged = try store.snapshots(game: "main")
        try #require(damaged.count >= 2, "the play wrote several snapshots")
        try #require(damaged.first.map { $0.version <= laterFrom } == true, "a resume meets a damaged snapshot")
        try store.executeForTesting("UPDATE snapshots SET state = '{\"written_by\":\"another build\"}' WHERE game = 'main'")
        store.close()

        let second = try ServerHarness(dataDirectory: dir.path, configure: configure)
        let admin2 = try second.connect()
        try admin2.ok("admin", ["key": .string(ServerHarness.adminKey)])
        let after = try admin2.ok("state")
        #expect(after["version"] == before["version"])
        let sameState = after["result"] == before["result"]
        #expect(sameState, "the game replayed from the log is the game that was played")

        // Resumes from before the snapshots and from past the first one (whose rebuild meets
        // an unreadable snapshot) are rebuilt from the log.
        for (from, view) in [(resumeFrom, oldView), (laterFrom, laterView)] {
            let resuming = try second.connect()
            try resuming.ok("claim", ["character": "mia", "device": "phone"])
            resuming.adoptMirror(view, version: from)
            let resumed = try resuming.subscribe(since: from)
            #expect(resumed["result"]?["mode"] == .string("patch"), "from version \(from)")
            try resuming.checkMirror(step: "after the resume from \(from)")
            #expect(resuming.problems == [])
        }

        // The next change writes a snapshot that the next start-up can use.
        try admin2.ok("adjust_points", ["delta": 1, "reason": "after the restart"])
        try second.stop()
        let reopened = try EventStore(path: path, options: StoreOptions(synchronous: .full))
        defer { reopened.close() }
        let newest = try #require(try reopened.latestSnapshot(game: "main"))
        #expect(newest.version > damaged.last!.version)
        #expect(!newest.state.contains("another build"))
    }
}
