import CSQLite3
import SQLite

/// Commits lost with a WAL after a crash. SQLite reads a WAL up to its first frame that fails
/// its checksum, and the first connection to open a log rebuilds the WAL's index (`-shm`) from
/// what it read, without a word about the rest. The index the last writer left says how far the
/// WAL reached and how far a checkpoint had got (`WALIndexHeader`): read before any connection
/// opens the log, with the WAL's size and header, it tells whether commits were lost.
///
/// What it cannot tell: a WAL damaged inside (not cut short) reads as whole here, and SQLite
/// then stops at the damage; with the index gone too, nothing is left to tell by.
extension EventStore {
    /// Before any connection of this process opens the log at `path`
    /// (`StoreOptions.checksWALBeforeOpening`). Returns the frames found lost (a WAL cut short
    /// after what a checkpoint passed: SQLite reads it as far as it goes, and the log holds
    /// together as it was before them). Throws, with nothing changed, for a WAL that is gone
    /// or unreadable while its index says it held commits (it may have been moved, and can be
    /// put back), and for one cut short inside what a checkpoint passed (SQLite would lay its
    /// older pages over the main file's newer ones). What an earlier open's rebuild of the index
    /// hid (it zeroes `nBackfill`) is not found: a cut below that is counted, not refused.
    static func framesLostBeforeOpening(_ path: String) throws(StorageError) -> Int {
        // An index beside no main file (or an empty one, a log begun anew) was left by a log
        // deleted to start again, and says nothing of this one.
        guard SQLiteConnection.fileHoldsBytes(path), let index = WALIndexHeader.read(logPath: path),
              index.frames > 0 else { return 0 }
        let onDisk = index.framesInWAL(logPath: path)
        switch index.walHeader(logPath: path) {
        case .empty:
            return 0
        case .salt(let salt) where salt != index.salt:
            // Another WAL than the one the index describes: nothing to compare them by.
            return 0
        case .salt:
            guard onDisk < Int(index.frames), stillTheSame(index, path) else { return 0 }
            // Judged by what a checkpoint finished, not by what one began: that the WAL was
            // synced before, so a power cut never cuts below it (where commits are not synced one
            // by one, it can cut below what was only begun, or what a rebuild counted as begun).
            if onDisk < Int(index.copied) { throw walCutInsideCheckpoint(path, missing: Int(index.frames) - onDisk) }
            return Int(index.frames) - onDisk
        case .missing, .unreadable:
            // With every frame copied, nothing is lost: SQLite starts the WAL over.
            guard index.framesOnlyInWAL > 0, stillTheSame(index, path) else { return 0 }
            throw walUnreadable(path, index: index)
        }
    }

    /// A clean close marks every frame copied, or deletes the index, before it deletes or cuts
    /// its WAL: an index that changed meanwhile is of a writer closing now, not of a crash.
    private static func stillTheSame(_ index: WALIndexHeader, _ path: String) -> Bool {
        WALIndexHeader.read(logPath: path) == index
    }

    // A checkpoint copies into the main file only the pages whose newest frame it reaches: once
    // it has begun, the main file alone is a mix of older and newer pages, which may not hold
    // together. Only the whole WAL, or a backup, gives the game back then.

    private static func walUnreadable(_ path: String, index: WALIndexHeader) -> StorageError {
        let goOn = !index.copyMayHaveBegun
            ? "To go on without them (the game as it was when that -wal began), move \(path)-shm aside too"
            : "Without it, \(path) alone may not hold together (a checkpoint may have begun copying the -wal into it): "
                + "if the -wal cannot be put back, restore the log from a backup (bq backup makes them)"
        return StorageError(code: SQLITE_CANTOPEN, message: """
            the write-ahead log \(path)-wal is missing or unreadable, though its index \(path)-shm says it held \
            \(index.framesOnlyInWAL) frames (page writes) of commits that are not in \(path): they are lost unless that \
            -wal is put back. Nothing was changed. \(goOn)
            """)
    }

    /// Not `SQLITE_CORRUPT`: the advice for a damaged main file does not fit.
    private static func walCutInsideCheckpoint(_ path: String, missing: Int) -> StorageError {
        StorageError(code: SQLITE_CANTOPEN, message: """
            the write-ahead log \(path)-wal was cut short inside the part a checkpoint had copied into \(path), \
            and the two no longer hold together: \(missing) frames (page writes) of commits are missing. Nothing was \
            changed. Put the whole -wal back; if it cannot be, restore the log from a backup (bq backup makes them)
            """)
    }
}
