import CSQLite3
import SQLite

/// Commits lost with a WAL after a crash. SQLite reads a WAL up to its first frame that fails
/// its checksum, and the first connection to open a log rebuilds the WAL's index (`-shm`) from
/// what it read, without a word about the rest. The index the last writer left says how far the
/// WAL reached and how much of it a checkpoint had already copied into the main file
/// (`WALIndexHeader`): read before SQLite opens the log, and again after, it tells what was lost.
extension EventStore {
    /// Before SQLite opens the log at `path`. Returns the index to compare with SQLite's rebuilt
    /// one (nil: nothing to compare), and the frames already known lost. Throws, with nothing
    /// changed, for a WAL that is gone while its index says it held commits (it may have been
    /// moved, and can be put back), and for one cut short below what was copied into the main
    /// file (SQLite would lay its older pages over the main file's newer ones).
    static func checkWALBeforeOpening(_ path: String, options: StoreOptions)
        throws(StorageError) -> (recorded: WALIndexHeader?, lost: Int) {
        // An index beside no main file (or an empty one, a log begun anew) was left by a log
        // deleted to start again, and says nothing of this one.
        guard SQLiteConnection.fileHoldsBytes(path), let index = WALIndexHeader.read(logPath: path),
              index.frames > 0 else { return (nil, 0) }
        let salt = WALIndexHeader.walSalt(logPath: path)
        // Another WAL than the one the index describes: nothing to compare them by.
        if let salt, salt != index.salt { return (nil, 0) }
        // Gone with every frame copied: nothing is lost, and SQLite starts a new WAL.
        let gone = salt == nil && index.framesOnlyInWAL > 0
        let cutBelowCopied = salt != nil && index.framesInWAL(logPath: path) < Int(index.copied)
        guard gone || cutBelowCopied else { return (salt == nil ? nil : index, 0) }
        // A clean close marks every frame copied, or deletes the index, before it deletes or cuts
        // its WAL: an index that changed meanwhile is of a writer closing now, not of a crash.
        guard WALIndexHeader.read(logPath: path) == index else { return (nil, 0) }
        if cutBelowCopied { throw walCutBelowCheckpoint(path, frames: index.frames - UInt32(index.framesInWAL(logPath: path))) }
        // Where commits are not synced one by one, a power cut can lose a new WAL whose index
        // reached the disk: lost either way, and said, but no reason to keep the game from going
        // on. (A checkpoint syncs the WAL first: one that copied any of it was not lost so.)
        if options.synchronous != .full, index.copied == 0 { return (nil, Int(index.framesOnlyInWAL)) }
        throw walMissing(path, index: index)
    }

    /// After this connection's first read, which made SQLite rebuild the index from the WAL if it
    /// was the first to open the log: the frames `recorded` counted that are not there now.
    func framesLostInRebuild(since recorded: WALIndexHeader) throws(StorageError) -> Int {
        connection.setBusyTimeout(milliseconds: options.busyTimeoutMilliseconds)
        _ = try connection.integer("PRAGMA schema_version")
        guard let rebuilt = WALIndexHeader.read(logPath: path), rebuilt.salt == recorded.salt,
              rebuilt.frames < recorded.frames else { return 0 }
        // Damaged inside what was copied (the size check saw none missing). The index is rebuilt
        // by now: a later open can no longer tell, so this one must refuse.
        if rebuilt.frames < recorded.copied { throw Self.walCutBelowCheckpoint(path, frames: recorded.frames - rebuilt.frames) }
        return Int(recorded.frames - rebuilt.frames)
    }

    // A checkpoint copies into the main file only the pages whose newest frame it reaches: once
    // it has copied any, the main file alone is a mix of older and newer pages, which may not
    // hold together. Only the whole WAL, or a backup, gives the game back then.

    private static func walMissing(_ path: String, index: WALIndexHeader) -> StorageError {
        let goOn = index.copied == 0
            ? "To go on without them (the game as it was when that -wal began), move \(path)-shm aside too"
            : "Without it, \(path) alone may not hold together (a checkpoint had copied some of the -wal's pages into it): "
                + "if the -wal cannot be put back, restore the log from a backup (bq backup makes them)"
        return StorageError(code: SQLITE_CANTOPEN, message: """
            the write-ahead log \(path)-wal is missing or empty, though its index \(path)-shm says it held \
            \(index.framesOnlyInWAL) frames (page writes) of commits that are not in \(path): they are lost unless that -wal \
            is put back. Nothing was changed. \(goOn)
            """)
    }

    /// Not `SQLITE_CORRUPT`: the advice for a damaged main file does not fit.
    private static func walCutBelowCheckpoint(_ path: String, frames: UInt32) -> StorageError {
        StorageError(code: SQLITE_CANTOPEN, message: """
            the write-ahead log \(path)-wal was cut short or damaged inside the part a checkpoint had already copied into \
            \(path), and the two no longer hold together: \(frames) frames (page writes) of commits are missing. Nothing \
            was changed. Put the whole -wal back; if it cannot be, restore the log from a backup (bq backup makes them)
            """)
    }
}
