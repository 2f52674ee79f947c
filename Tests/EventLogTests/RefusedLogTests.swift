import Foundation
import Testing
@testable import EventLog

/// A log the store refuses to open is left as it was found: the person who restores a backup
/// over a crashed server's main file, beside that server's WAL, still has both afterwards.
@Suite struct RefusedLogTests {
    private func append(_ store: EventStore, _ count: Int, payload: String) {
        for version in 0..<count {
            let event = NewEvent(type: "t", actor: "a", at: 1, payload: #"{"text":"\#(payload) \#(version)"}"#)
            #expect(store.append(AppendRequest(game: "g", expected: Int64(version), events: [event])) == .committed(version: Int64(version + 1)))
        }
    }

    @Test func aLogThatFailsItsCheckIsNotRewrittenAndKeepsItsWAL() throws {
        try withTemporaryDirectory { dir in
            let backup = dir + "/backup.sqlite"
            do {
                let store = try EventStore(path: backup, options: StoreOptions(synchronous: .off))
                append(store, 20, payload: String(repeating: "b", count: 300))
                store.close()
            }
            // A live log, most of it copied into its main file and the newest events still in
            // its WAL, copied as a crash would leave it.
            let live = dir + "/live.sqlite"
            let crashed = dir + "/crashed.sqlite"
            let store = try EventStore(path: live, options: StoreOptions(synchronous: .off, walCheckpointPages: 100))
            append(store, 700, payload: String(repeating: "w", count: 2_000))
            try store.checkpointIfNeeded()
            for version in 700..<1_000 {
                let event = NewEvent(type: "t", actor: "a", at: 1, payload: #"{"text":"more \#(version)"}"#)
                #expect(store.append(AppendRequest(game: "g", expected: Int64(version), events: [event])) == .committed(version: Int64(version + 1)))
            }
            try FileManager.default.copyItem(atPath: live, toPath: crashed)
            try FileManager.default.copyItem(atPath: live + "-wal", toPath: crashed + "-wal")
            store.close()

            // The backup put back over the main file; the WAL of the crashed log stays beside it.
            try FileManager.default.removeItem(atPath: crashed)
            try FileManager.default.copyItem(atPath: backup, toPath: crashed)
            let mainBefore = try Data(contentsOf: URL(fileURLWithPath: crashed))
            let walBefore = try Data(contentsOf: URL(fileURLWithPath: crashed + "-wal"))
            try #require(walBefore.count > 0)

            #expect(throws: StorageError.self) { try EventStore(path: crashed) }
            #expect(try Data(contentsOf: URL(fileURLWithPath: crashed)) == mainBefore, "the refused main file was rewritten")
            #expect(FileManager.default.fileExists(atPath: crashed + "-wal"), "the refused log's WAL was deleted")
            #expect(try Data(contentsOf: URL(fileURLWithPath: crashed + "-wal")) == walBefore)
        }
    }
}

/// The log's files deleted or moved while a store writes them: a commit then would go into a
/// file no restart finds, so none is taken, and the refusal says how to keep what there is.
@Suite struct MovedLogTests {
    private func commit(_ store: EventStore, at version: Int64) -> AppendResult {
        store.append(AppendRequest(game: "g", expected: version, events: [NewEvent(type: "t", actor: "a", at: 1, payload: "{}")]))
    }

    @Test(arguments: ["-wal", ""])
    func noCommitIsTakenOnceAFileOfTheLogIsGone(suffix: String) throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/log.sqlite"
            let store = try EventStore(path: path, options: StoreOptions(synchronous: .off, filesCheckMilliseconds: 0))
            defer { store.close() }
            #expect(commit(store, at: 0) == .committed(version: 1))
            try FileManager.default.moveItem(atPath: path + suffix, toPath: dir + "/aside" + suffix)
            for _ in 0..<2 {
                guard case .failed(let error) = commit(store, at: 1) else {
                    Issue.record("a commit was taken into a file that is gone")
                    return
                }
                #expect(error.message.contains("\(path + suffix) was deleted, moved or replaced"), "\(error)")
                #expect(error.meansFilesMoved)
            }
        }
    }

    @Test func aWALStartedOverByCheckpointsIsStillTheLogs() throws {
        try withTemporaryDirectory { dir in
            let store = try EventStore(path: dir + "/log.sqlite",
                                       options: StoreOptions(synchronous: .off, walCheckpointPages: 2, filesCheckMilliseconds: 0))
            defer { store.close() }
            for version in 0..<50 {
                #expect(commit(store, at: Int64(version)) == .committed(version: Int64(version + 1)))
                try store.checkpointIfNeeded()
            }
        }
    }
}
