import Foundation
import SQLite
import Testing
@testable import EventLog

/// A WAL deleted, cut short or damaged after a crash loses its commits, and SQLite reads the log
/// as it was before them without a word. The index the last writer left beside it (`-shm`)
/// still says how far the WAL reached: a store opened on such a log (the first of its process)
/// refuses it when the WAL is gone (it may be put back) or cut inside what a checkpoint passed
/// (the main file and it no longer hold together), and counts what was lost when the WAL was
/// cut after that.
@Suite struct WALLossTests {
    static let firstCommits = 3
    static let laterCommits = 6
    static var allCommits: Int64 { Int64(firstCommits + laterCommits) }

    /// A log as a crash leaves it, its commits in the WAL and the WAL's index describing them.
    /// `checkpointed`: a checkpoint got through the first commits (a reader holds it back from
    /// the later ones, and so the WAL from starting over, as a reader of the server's may).
    private static func crashedLog(at path: String, checkpointed: Bool = true) throws -> WALIndexHeader {
        let store = try EventStore(path: path, options: StoreOptions(synchronous: .off))
        for n in 0..<firstCommits {
            #expect(store.append(request("main", expected: Int64(n), first: n)) == .committed(version: Int64(n + 1)))
        }
        let reader = try EventStore(path: path, options: StoreOptions(readOnly: true))
        try reader.executeForTesting("BEGIN")
        #expect(try reader.version(game: "main") == Int64(firstCommits))
        for n in firstCommits..<(firstCommits + laterCommits) {
            #expect(store.append(request("main", expected: Int64(n), first: n)) == .committed(version: Int64(n + 1)))
        }
        if checkpointed { try store.executeForTesting("PRAGMA wal_checkpoint(PASSIVE)") }
        try reader.executeForTesting("COMMIT")
        reader.closeLeavingFilesAsFound()
        store.closeLeavingFilesAsFound()
        let index = try #require(WALIndexHeader.read(logPath: path))
        try #require(index.framesOnlyInWAL > 0 && (index.copied > 0) == checkpointed, "\(index)")
        return index
    }

    /// Keeps the WAL's header and its first `frames` frames.
    private static func cutWAL(_ path: String, keeping frames: Int, pageSize: Int) throws {
        let wal = try FileHandle(forWritingTo: URL(fileURLWithPath: path + "-wal"))
        try wal.truncate(atOffset: UInt64(32 + frames * (24 + pageSize)))
        try wal.close()
    }

    private static func contents(_ path: String) -> [Data?] {
        ["", "-wal", "-shm"].map { FileManager.default.contents(atPath: path + $0) }
    }

    /// A store that looks for lost commits, as the first one a process opens on a log does.
    private static func opened(_ path: String, readOnly: Bool = false) throws(StorageError) -> EventStore {
        try EventStore(path: path, options: StoreOptions(readOnly: readOnly, checksWALBeforeOpening: true))
    }

    /// Cut just after what the checkpoint passed: the frames after it are counted, and the log
    /// reads as it was at the checkpoint.
    @Test(arguments: [false, true])
    func aWALCutShortAfterACrashIsCountedAsLost(readOnly: Bool) throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/log.sqlite"
            let index = try Self.crashedLog(at: path)
            try Self.cutWAL(path, keeping: Int(index.copied) + 1, pageSize: index.pageSize)
            let store = try Self.opened(path, readOnly: readOnly)
            defer { store.close() }
            #expect(try store.version(game: "main") == Int64(Self.firstCommits))
            #expect(store.walFramesLost == Int(index.frames) - Int(index.copied) - 1)
        }
    }

    /// Cut inside what the checkpoint passed, the WAL's older pages would be read over the main
    /// file's newer ones: refused, with nothing changed.
    @Test(arguments: [false, true])
    func aWALCutInsideItsCheckpointIsRefusedAndNothingIsChanged(readOnly: Bool) throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/log.sqlite"
            let index = try Self.crashedLog(at: path)
            try Self.cutWAL(path, keeping: Int(index.copied) - 1, pageSize: index.pageSize)
            let files = Self.contents(path)
            #expect {
                try Self.opened(path, readOnly: readOnly)
            } throws: { error in
                "\(error)".contains("\(path)-wal was cut short inside the part a checkpoint had copied into \(path)")
                    && "\(error)".contains("\(index.frames - index.copied + 1) frames (page writes) of commits are missing")
            }
            #expect(Self.contents(path) == files)
        }
    }

    /// A crashed log (no checkpoint) opened once since, as a tool or a start would: SQLite has
    /// rebuilt its index.
    private static func rebuiltAfterACrash(at path: String) throws -> WALIndexHeader {
        _ = try crashedLog(at: path, checkpointed: false)
        try EventStore(path: path, options: StoreOptions(readOnly: true)).closeLeavingFilesAsFound()
        return try #require(WALIndexHeader.read(logPath: path))
    }

    /// An earlier open rebuilt the index: it zeroes what a checkpoint copied and marks every
    /// frame as perhaps begun. A `-wal` deleted after that is still refused, with the advice for
    /// a main file that may not hold together alone.
    @Test func aWALDeletedAfterAnEarlierOpenIsStillRefused() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/log.sqlite"
            let rebuilt = try Self.rebuiltAfterACrash(at: path)
            #expect(rebuilt.copied == 0 && rebuilt.copyMayHaveBegun)
            try FileManager.default.removeItem(atPath: path + "-wal")
            #expect { try Self.opened(path) } throws: {
                "\($0)".contains("held \(rebuilt.frames) frames (page writes)") && "\($0)".contains("restore the log from a backup")
            }
        }
    }

    /// Where commits are not synced one by one, a power cut after such an open can lose the
    /// WAL's newest frames, which the rebuild counted as perhaps begun: counted, not refused
    /// (the main file and what is left of the WAL hold together).
    @Test func aWALCutAfterAnEarlierOpenIsCountedNotRefused() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/log.sqlite"
            let rebuilt = try Self.rebuiltAfterACrash(at: path)
            try Self.cutWAL(path, keeping: 3, pageSize: rebuilt.pageSize)
            let store = try Self.opened(path)
            defer { store.close() }
            #expect(store.walFramesLost == Int(rebuilt.frames) - 3)
        }
    }

    @Test(arguments: [false, true])
    func aWALDeletedOrWipedAfterACrashIsRefusedAndNothingIsChanged(wipedInstead: Bool) throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/log.sqlite"
            let index = try Self.crashedLog(at: path)
            try FileManager.default.copyItem(atPath: path + "-wal", toPath: dir + "/aside-wal")
            if wipedInstead {
                let wal = try FileHandle(forWritingTo: URL(fileURLWithPath: path + "-wal"))
                try wal.write(contentsOf: Data(count: 32))
                try wal.close()
            } else {
                try FileManager.default.removeItem(atPath: path + "-wal")
            }
            let files = Self.contents(path)
            for readOnly in [false, true] {
                #expect {
                    try Self.opened(path, readOnly: readOnly)
                } throws: { error in
                    "\(error)".contains("the write-ahead log \(path)-wal is missing or unreadable, though its index \(path)-shm "
                        + "says it held \(index.framesOnlyInWAL) frames (page writes) of commits that are not in \(path)")
                        && "\(error)".contains("restore the log from a backup")
                }
            }
            #expect(Self.contents(path) == files)

            // As the refusal says: put back, the WAL is read whole.
            try? FileManager.default.removeItem(atPath: path + "-wal")
            try FileManager.default.moveItem(atPath: dir + "/aside-wal", toPath: path + "-wal")
            let store = try Self.opened(path)
            defer { store.close() }
            #expect(try store.version(game: "main") == Self.allCommits)
            #expect(store.walFramesLost == 0)
        }
    }

    /// Before any checkpoint, the main file alone is the game as it was when the WAL began: the
    /// refusal says how to go on from it.
    @Test func aWALDeletedBeforeAnyCheckpointCanBeGoneOnWithout() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/log.sqlite"
            _ = try Self.crashedLog(at: path, checkpointed: false)
            try FileManager.default.removeItem(atPath: path + "-wal")
            #expect { try Self.opened(path) } throws: {
                "\($0)".contains("To go on without them (the game as it was when that -wal began), move \(path)-shm aside too")
            }
            try FileManager.default.moveItem(atPath: path + "-shm", toPath: dir + "/aside-shm")
            let store = try Self.opened(path)
            defer { store.close() }
            #expect(store.walFramesLost == 0)
        }
    }

    /// SQLite empties a WAL it has copied whole, and after a power cut the index on disk may be
    /// older than that: an empty WAL is not judged.
    @Test func anEmptyWALIsNotJudged() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/log.sqlite"
            _ = try Self.crashedLog(at: path, checkpointed: false)
            try Data().write(to: URL(fileURLWithPath: path + "-wal"))
            let store = try Self.opened(path)
            defer { store.close() }
            #expect(store.walFramesLost == 0)
        }
    }

    /// A log deleted to start again, with its index left behind: the index is of no log here,
    /// and a new log opens (the server's warnings about a lost log are its own).
    @Test(arguments: [false, true])
    func anIndexLeftBesideNoLogRefusesNothing(mainEmptiedInstead: Bool) throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/log.sqlite"
            _ = try Self.crashedLog(at: path)
            try FileManager.default.removeItem(atPath: path + "-wal")
            if mainEmptiedInstead {
                try Data().write(to: URL(fileURLWithPath: path))
            } else {
                try FileManager.default.removeItem(atPath: path)
            }
            let store = try Self.opened(path)
            defer { store.close() }
            #expect(try store.version(game: "main") == 0)
            #expect(store.walFramesLost == 0)
        }
    }

    /// No loss is claimed where there is none: a whole WAL after a crash, a cleanly closed log,
    /// and connections opened while another writes.
    @Test func aWholeWALAStoppedLogAndALiveOneLoseNothing() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/log.sqlite"
            _ = try Self.crashedLog(at: path)
            let recovered = try Self.opened(path)
            #expect(recovered.walFramesLost == 0)
            #expect(try recovered.version(game: "main") == Self.allCommits)

            // Later connections of the process do not look (it would drop the first one's locks).
            let reader = try EventStore(path: path, options: StoreOptions(readOnly: true))
            #expect(recovered.append(request("main", expected: Self.allCommits, first: 9)) == .committed(version: Self.allCommits + 1))
            let another = try EventStore(path: path)
            reader.close()
            another.close()
            recovered.close()

            let reopened = try Self.opened(path)
            defer { reopened.close() }
            #expect(reopened.walFramesLost == 0)
            #expect(try reopened.version(game: "main") == Self.allCommits + 1)
        }
    }
}
