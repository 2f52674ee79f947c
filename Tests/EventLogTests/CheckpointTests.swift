import Foundation
import SQLite
import Testing
@testable import EventLog

/// The store checkpoints between transactions instead of SQLite inside a commit; that only
/// works if the WAL hook that counts pages survives the connection's configuration.
@Suite struct CheckpointTests {
    @Test func theWALStaysBoundedWhenTheWriterCheckpoints() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/wal.db"
            let store = try EventStore(path: path, options: StoreOptions(walCheckpointPages: 10))
            defer { store.close() }
            var largestCount = 0
            for version in 0..<300 {
                let event = NewEvent(type: "t", actor: "a", at: 1, payload: String(repeating: "x", count: 2_000))
                let result = store.append(AppendRequest(game: "g", expected: Int64(version), events: [event]))
                #expect(result == .committed(version: Int64(version + 1)))
                largestCount = max(largestCount, store.connection.walPages)
                try store.checkpointIfNeeded()
            }
            #expect(largestCount > 0, "the WAL hook never ran")
            let walBytes = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? 0
            // 300 commits of 2 KB without checkpoints leave a WAL of several MiB.
            #expect(walBytes < 1 << 20, "the WAL grew to \(walBytes) bytes")
        }
    }

    /// A long read (a backup) keeps the WAL from starting over, so it grows past any threshold;
    /// once the read ends and a checkpoint catches up, the file is cut back, not left at its peak.
    @Test func aWALThatAReadHeldBackIsCutBackOnceItStartsOver() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/wal.db"
            let pages = 10
            let store = try EventStore(path: path, options: StoreOptions(walCheckpointPages: pages))
            defer { store.close() }
            var version: Int64 = 0
            func commit(_ count: Int) throws {
                for _ in 0..<count {
                    let event = NewEvent(type: "t", actor: "a", at: 1, payload: String(repeating: "x", count: 2_000))
                    #expect(store.append(AppendRequest(game: "g", expected: version, events: [event])) == .committed(version: version + 1))
                    version += 1
                    try store.checkpointIfNeeded()
                }
            }
            func walBytes() throws -> Int { try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? 0 }
            try commit(5)
            let reader = try SQLiteConnection(path: path, readOnly: true)
            try reader.execute("BEGIN")
            _ = try reader.integer("SELECT count(*) FROM events")
            try commit(300)
            let peak = try walBytes()
            #expect(peak > 1 << 20, "the read did not hold the WAL back: \(peak) bytes")
            try reader.execute("COMMIT")
            reader.close()
            try commit(20)
            let limit = pages * StoreOptions.walSoftLimitFactor * 4096
            let after = try walBytes()
            #expect(after <= limit, "the WAL stayed at \(after) bytes (peak \(peak), limit \(limit))")
        }
    }
}

/// Through the writer, checkpoints run on their own thread; the writer steps in only past the
/// hard limit, which is what lets SQLite start the WAL over while commits keep coming.
@Suite struct WriterCheckpointTests {
    @Test func theWALStaysBoundedUnderContinuousCommitsThroughTheWriter() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/wal.db"
            let threshold = 10
            let writer = try EventWriter(path: path, options: StoreOptions(walCheckpointPages: threshold))
            let commits = 400
            let payload = String(repeating: "x", count: 2_000)
            let done = DispatchSemaphore(value: 0)
            let failures = Locked<[String]>([])
            var largestWAL = 0
            for version in 0..<commits {
                let event = NewEvent(type: "t", actor: "a", at: 1, payload: payload)
                // One request at a time: a commit per request, never a quiet moment in between.
                writer.submit(AppendRequest(game: "g", expected: Int64(version), events: [event])) { result in
                    if result != .committed(version: Int64(version + 1)) { failures.withLock { $0.append("\(version): \(result)") } }
                    done.signal()
                }
                try #require(done.wait(timeout: .now() + 30) == .success)
                let size = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? 0
                largestWAL = max(largestWAL, size)
            }
            writer.shutdown()
            #expect(failures.withLock { $0 } == [])
            // 400 commits of 2 KB without checkpoints leave a WAL of about 5 MiB. The hard limit
            // is 4 x 10 pages plus what one commit adds, but it is soft: while the checkpointer
            // thread holds SQLite's checkpoint lock the writer's own attempt fails, and on a
            // machine loaded by other work that thread may wait long for a core (1.1 MiB was
            // seen once, with the suite taking 36 s for what takes 0.3 s alone).
            #expect(largestWAL < 2 << 20, "the WAL grew to \(largestWAL) bytes")
            let store = try EventStore(path: path)
            defer { store.close() }
            #expect(try store.allEvents("g").count == commits)
        }
    }
}

extension WriterCheckpointTests {
    @Test func theCheckpointerThreadCopiesTheWALSoSQLiteStartsItOverWithoutTheWriter() throws {
        try withTemporaryDirectory { dir in
            let threshold = 10
            let writer = try EventWriter(path: dir + "/wal.db", options: StoreOptions(walCheckpointPages: threshold))
            defer { writer.shutdown() }
            let payload = String(repeating: "x", count: 2_000)
            var version: Int64 = 0
            func commitOne() throws {
                let done = DispatchSemaphore(value: 0)
                let outcome = Locked<AppendResult?>(nil)
                writer.submit(AppendRequest(game: "g", expected: version, events: [NewEvent(type: "t", actor: "a", at: 1, payload: payload)])) {
                    result in outcome.withLock { $0 = result }
                    done.signal()
                }
                try #require(done.wait(timeout: .now() + 30) == .success)
                version += 1
                #expect(outcome.withLock { $0 } == .committed(version: version))
            }
            // Runs on the writer thread after the previous batch and its checkpoint decision;
            // nil if the writer did not run it in time.
            func walPages() -> Int? {
                let done = DispatchSemaphore(value: 0)
                let pages = Locked(0)
                writer.perform { store in
                    pages.withLock { $0 = store.walPages }
                    done.signal()
                }
                guard done.wait(timeout: .now() + 30) == .success else { return nil }
                return pages.withLock { $0 }
            }

            while try #require(walPages()) <= threshold { try commitOne() }
            let grown = try #require(walPages())
            #expect(grown <= threshold * StoreOptions.walSoftLimitFactor, "the writer would have checkpointed itself")
            // Past the threshold the writer asked for a pass; with no commit in the way it copies everything.
            #expect(writer.checkpointer.waitForPasses(1, timeout: 30))
            try commitOne()
            let after = try #require(walPages())
            #expect(after < grown, "the WAL was not started over: \(after) pages, \(grown) before")
        }
    }
}
