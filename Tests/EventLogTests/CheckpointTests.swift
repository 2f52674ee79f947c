import Foundation
import Testing
@testable import EventLog

/// The writer checkpoints between batches instead of SQLite inside a commit; that only
/// works if the WAL hook that counts pages survives the connection's configuration.
@Suite struct CheckpointTests {
    @Test func theWALStaysBoundedWhenTheWriterCheckpoints() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/wal.db"
            let store = try EventStore(path: path, options: StoreOptions(walCheckpointPages: 10))
            defer { store.close() }
            for version in 0..<300 {
                let event = NewEvent(type: "t", actor: "a", at: 1, payload: String(repeating: "x", count: 2_000))
                let result = store.append(AppendRequest(game: "g", expected: Int64(version), events: [event]))
                #expect(result == .committed(version: Int64(version + 1)))
                store.checkpointIfNeeded()
            }
            #expect(store.connection.walPages > 0, "the WAL hook never ran")
            let walBytes = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? 0
            // 300 commits of 2 KB without checkpoints leave a WAL of several MiB.
            #expect(walBytes < 1 << 20, "the WAL grew to \(walBytes) bytes")
        }
    }
}
