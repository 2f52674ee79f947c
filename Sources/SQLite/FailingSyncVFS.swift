import CSQLite3
import Glibc

/// A test double of a failing disk: SQLite's default VFS, except that the WAL's syncs fail on
/// demand with `SQLITE_IOERR_FSYNC`, after SQLite has written its frames, as a real `fdatasync`
/// error leaves them. Registered as the default VFS of this (child) process.
///
/// Threads and memory: for a single-threaded child only. `install()` runs once, before any
/// connection opens; the VFS and method tables it allocates live until the process ends (SQLite
/// keeps pointers to them). The sync callback runs on the thread that commits.
///
/// Only `eventlog-crash-child` uses it (`package` access): it sits here because its callbacks
/// are SQLite's, and the project keeps C callbacks in its thin SQLite and libuv wrappers.
package enum FailingSyncVFS {
    /// How many of the next WAL syncs fail.
    nonisolated(unsafe) private static var syncFailuresLeft = 0
    nonisolated(unsafe) private static var base: UnsafeMutablePointer<sqlite3_vfs>?
    nonisolated(unsafe) private static var realWALMethods: UnsafePointer<sqlite3_io_methods>?
    nonisolated(unsafe) private static var failingWALMethods: UnsafeMutablePointer<sqlite3_io_methods>?

    /// Makes the next `count` WAL syncs fail. Call from the thread that commits.
    package static func failNextSyncs(_ count: Int) {
        syncFailuresLeft = count
    }

    package static func install() {
        guard base == nil, let found = sqlite3_vfs_find(nil) else { return }
        base = found
        let vfs = UnsafeMutablePointer<sqlite3_vfs>.allocate(capacity: 1)
        vfs.initialize(to: found.pointee)
        vfs.pointee.zName = UnsafePointer(strdup("bq-failing-sync"))
        vfs.pointee.xOpen = { _, name, file, flags, outFlags in
            // The file struct is the default VFS's own; only its method table is swapped.
            let rc = FailingSyncVFS.base!.pointee.xOpen(FailingSyncVFS.base, name, file, flags, outFlags)
            guard rc == SQLITE_OK, flags & SQLITE_OPEN_WAL != 0, let file, let real = file.pointee.pMethods else { return rc }
            file.pointee.pMethods = UnsafePointer(FailingSyncVFS.methods(wrapping: real))
            return rc
        }
        sqlite3_vfs_register(vfs, 1)
    }

    private static func methods(wrapping real: UnsafePointer<sqlite3_io_methods>) -> UnsafeMutablePointer<sqlite3_io_methods> {
        if let failingWALMethods { return failingWALMethods }
        realWALMethods = real
        let methods = UnsafeMutablePointer<sqlite3_io_methods>.allocate(capacity: 1)
        methods.initialize(to: real.pointee)
        methods.pointee.xSync = { file, flags in
            if FailingSyncVFS.syncFailuresLeft > 0 {
                FailingSyncVFS.syncFailuresLeft -= 1
                return bq_sqlite_ioerr_fsync()
            }
            return FailingSyncVFS.realWALMethods!.pointee.xSync(file, flags)
        }
        failingWALMethods = methods
        return methods
    }
}
