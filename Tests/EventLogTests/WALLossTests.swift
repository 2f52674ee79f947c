import Foundation
import SQLite
import Testing
@testable import EventLog

/// A WAL deleted, cut short or damaged after a crash loses its commits, and SQLite reads the log
/// as it was before them without a word. The index the last writer left beside it (`-shm`)
/// still says how far the WAL reached: a store opened on such a log refuses it when the WAL is
/// gone (it may be put back), and counts what was lost when the WAL was cut short.
@Suite struct WALLossTests {
    static let copiedCommits = 3
    static let laterCommits = 6

    /// A log as a crash leaves it: the first commits copied into the main file by a checkpoint,
    /// the later ones in the WAL alone, and the WAL's index still describing them.
    private static func crashedLog(at path: String) throws -> WALIndexHeader {
        let store = try EventStore(path: path, options: StoreOptions(synchronous: .off))
        for n in 0..<copiedCommits {
            #expect(store.append(request("main", expected: Int64(n), first: n)) == .committed(version: Int64(n + 1)))
        }
        try store.executeForTesting("PRAGMA wal_checkpoint(PASSIVE)")
        for n in copiedCommits..<(copiedCommits + laterCommits) {
            #expect(store.append(request("main", expected: Int64(n), first: n)) == .committed(version: Int64(n + 1)))
        }
        store.closeLeavingFilesAsFound()
        let index = try #require(WALIndexHeader.read(logPath: path))
        try #require(index.framesOnlyInWAL > 0, "the later commits are in the WAL alone")
        return index
    }

    private static func pageSize(_ path: String) -> Int {
        let data = FileManager.default.contents(atPath: path) ?? Data()
        let size = Int(data[16]) << 8 | Int(data[17])
        return size == 1 ? 65_536 : size
    }

    @Test(arguments: [false, true])
    func aWALCutShortAfterACrashIsCountedAsLost(readOnly: Bool) throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/log.sqlite"
            let index = try Self.crashedLog(at: path)
            // Keep the WAL's header and the frames up to just past those already copied.
            let frameSize = 24 + Self.pageSize(path)
            let kept = Int(index.copied) + 1
            let wal = try FileHandle(forWritingTo: URL(fileURLWithPath: path + "-wal"))
            try wal.truncate(atOffset: UInt64(32 + kept * frameSize))
            try wal.close()

            let store = try EventStore(path: path, options: StoreOptions(readOnly: readOnly))
            defer { store.close() }
            let version = try store.version(game: "main")
            #expect(version >= Int64(Self.copiedCommits) && version < Int64(Self.copiedCommits + Self.laterCommits))
            #expect(store.walFramesLost > 0 && store.walFramesLost <= Int(index.framesOnlyInWAL), "\(store.walFramesLost)")
        }
    }

    @Test(arguments: [false, true])
    func aWALDeletedAfterACrashIsRefusedAndNothingIsChanged(emptiedInstead: Bool) throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/log.sqlite"
            let index = try Self.crashedLog(at: path)
            if emptiedInstead {
                try Data().write(to: URL(fileURLWithPath: path + "-wal"))
            } else {
                try FileManager.default.removeItem(atPath: path + "-wal")
            }
            let main = FileManager.default.contents(atPath: path), shm = FileManager.default.contents(atPath: path + "-shm")

            for readOnly in [false, true] {
                #expect {
                    try EventStore(path: path, options: StoreOptions(readOnly: readOnly))
                } throws: { error in
                    "\(error)".contains("the write-ahead log \(path)-wal is missing or empty, though its index \(path)-shm says "
                        + "it held \(index.framesOnlyInWAL) pages of commits that are not in \(path)")
                }
            }
            #expect(FileManager.default.contents(atPath: path) == main)
            #expect(FileManager.default.contents(atPath: path + "-shm") == shm)
            #expect(FileManager.default.fileExists(atPath: path + "-wal") == emptiedInstead)

            // As the refusal says: with the index moved aside too, the log opens as the main file has it.
            try FileManager.default.moveItem(atPath: path + "-shm", toPath: dir + "/aside-shm")
            let store = try EventStore(path: path)
            defer { store.close() }
            #expect(try store.version(game: "main") == Int64(Self.copiedCommits))
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
            let store = try EventStore(path: path)
            defer { store.close() }
            #expect(try store.version(game: "main") == 0)
            #expect(store.walFramesLost == 0)
        }
    }

    /// No loss is claimed where there is none: a whole WAL after a crash, a cleanly closed log,
    /// and a second connection opened while the first writes.
    @Test func aWholeWALAStoppedLogAndALiveOneLoseNothing() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/log.sqlite"
            _ = try Self.crashedLog(at: path)
            let recovered = try EventStore(path: path)
            #expect(recovered.walFramesLost == 0)
            #expect(try recovered.version(game: "main") == Int64(Self.copiedCommits + Self.laterCommits))

            let reader = try EventStore(path: path, options: StoreOptions(readOnly: true))
            #expect(reader.walFramesLost == 0)
            #expect(recovered.append(request("main", expected: 9, first: 9)) == .committed(version: 10))
            let another = try EventStore(path: path)
            #expect(another.walFramesLost == 0)
            reader.close()
            another.close()
            recovered.close()

            let reopened = try EventStore(path: path)
            defer { reopened.close() }
            #expect(reopened.walFramesLost == 0)
            #expect(try reopened.version(game: "main") == 10)
        }
    }
}
