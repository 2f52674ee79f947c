import CSQLite3
import Glibc

/// The code that calls `sqlite3_*`, but for `FailingSyncVFS`, a failing disk for the crash tests.
/// `package` access: the event log is its one user (its tests and the crash child aside).
///
/// Threads: a connection (and every `Statement` it hands out) is opened in SQLite's multi-thread
/// mode (`SQLITE_OPEN_NOMUTEX`): it must be used by one thread at a time. Callers confine it.
///
/// Memory: the connection owns the `sqlite3*` handle and every cached statement; `close()`
/// finalizes the statements before closing the handle. Strings go in and come out as copies
/// (`SQLITE_TRANSIENT` on bind, `String(decoding:)` on read), so no Swift buffer is ever borrowed
/// by SQLite beyond a single call.
package final class SQLiteConnection {
    /// Owned; nil once closed.
    private var handle: OpaquePointer?
    private var statements: [String: Statement] = [:]
    /// Heap box the WAL hook writes into; its address is handed to SQLite as the hook's context
    /// and stays valid until `close()` unregisters the hook.
    private let walState = WALState()

    final class WALState {
        /// Frames in the WAL after the latest commit of this connection (SQLite's own count).
        var pages: Int32 = 0
    }

    /// `immutable`: read-only, trusting that no one writes the file while it is open, so SQLite
    /// takes no lock and reads no WAL: the one way to read a WAL-mode file in a directory this
    /// process may not write (`-shm` cannot be made). Only for a file with no WAL beside it.
    package init(path: String, readOnly: Bool, immutable: Bool = false) throws(SQLiteError) {
        // The log's connections live on four threads; a library built without any locking
        // (SQLITE_THREADSAFE=0) would share its global state among them unguarded.
        guard sqlite3_threadsafe() != 0 else {
            throw SQLiteError(code: SQLITE_MISUSE, extendedCode: SQLITE_MISUSE,
                               message: "this SQLite library was built without thread support (SQLITE_THREADSAFE=0)")
        }
        var db: OpaquePointer?
        let flags = (readOnly || immutable ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE))
            | SQLITE_OPEN_NOMUTEX | (immutable ? SQLITE_OPEN_URI : 0)
        let rc = sqlite3_open_v2(immutable ? Self.immutableURI(path) : path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            // sqlite3_open_v2 may hand back a handle even on failure; it still has to be closed.
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open database"
            sqlite3_close_v2(db)
            throw SQLiteError(code: rc & 0xff, extendedCode: rc, message: "\(message) (\(path))")
        }
        // A file or directory the process may not write is opened read-only without a word;
        // every commit would then fail. Said here, at start-up, instead.
        if !readOnly, sqlite3_db_readonly(db, "main") == 1 {
            sqlite3_close_v2(db)
            throw SQLiteError(code: SQLITE_READONLY, message: "the file can only be read: this process may not write it; "
                + "check its owner and mode")
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        // Until its owner has checked the file (`checkpointOnClose`): a close after a failed
        // check would otherwise copy the WAL into the main file and delete it, rewriting a log
        // the check refused (a main file put back from a backup beside another log's WAL).
        _ = bq_sqlite_checkpoint_on_close(db, 0)
    }

    /// A read-only connection, also where this process may not write the file's directory (a
    /// backup on read-only media, a server's directory read by another user). SQLite reads a
    /// WAL-mode file through its `-shm` index, which it cannot create there. A file with neither
    /// a WAL nor an index beside it is whole and open to no one (a writer keeps both while it
    /// has the file open), and is read as immutable; any other is refused, saying what to do.
    /// `busyTimeoutMilliseconds`: how long the first read waits for a writer's lock (a server
    /// stopping, or recovering its WAL after a crash).
    package static func openToRead(_ path: String, busyTimeoutMilliseconds: Int32) throws(SQLiteError) -> SQLiteConnection {
        let connection = try SQLiteConnection(path: path, readOnly: true)
        connection.setBusyTimeout(milliseconds: busyTimeoutMilliseconds)
        do {
            // The first read of the file: in WAL mode it needs the -shm.
            _ = try connection.integer("PRAGMA schema_version")
            return connection
        } catch {
            connection.close()
            // The file opened, so its -shm is what failed: it could not be made (read-only
            // directory), or it and the -wal cannot be read by this user.
            guard error.code == SQLITE_READONLY || error.code == SQLITE_CANTOPEN else { throw error }
            guard !fileHoldsBytes(path + "-wal"), fileSize(path + "-shm") == nil else {
                throw SQLiteError(code: error.code, extendedCode: error.extendedCode, message: "\(path) is read through its "
                    + "-wal and -shm files, which this user can neither read nor create: run this as the user that writes "
                    + "the log, or copy the whole directory somewhere you may write", sql: error.sql)
            }
            return try SQLiteConnection(path: path, readOnly: true, immutable: true)
        }
    }

    /// Whether a file is at `path` and holds at least one byte (a WAL that holds commits).
    package static func fileHoldsBytes(_ path: String) -> Bool { (fileSize(path) ?? 0) > 0 }

    /// The size of the file at `path`; nil when there is none.
    private static func fileSize(_ path: String) -> Int64? {
        var status = stat()
        return stat(path, &status) == 0 ? Int64(status.st_size) : nil
    }

    /// `path` as a URI with `immutable=1`. The three characters a URI gives a meaning to are
    /// escaped; an absolute path gets an empty authority, so that one starting `//` stays a path.
    static func immutableURI(_ path: String) -> String {
        var uri = path.hasPrefix("/") ? "file://" : "file:"
        for character in path {
            switch character {
            case "%": uri += "%25"
            case "?": uri += "%3F"
            case "#": uri += "%23"
            default: uri.append(character)
            }
        }
        return uri + "?immutable=1"
    }

    /// Whether closing the last connection to the file copies the WAL into the main file and
    /// deletes it (SQLite's way, once the file is known good). Off from opening until called.
    package func checkpointOnClose(_ on: Bool) {
        guard let handle else { return }
        _ = bq_sqlite_checkpoint_on_close(handle, on ? 1 : 0)
    }

    /// Counts WAL pages after each commit, for `checkpointIfNeeded`. Installing it also turns
    /// SQLite's automatic checkpoint off (which would land inside a commit); and since
    /// `PRAGMA wal_autocheckpoint` replaces any hook, call this after every such pragma.
    package func installWALHook() {
        guard let handle else { return }
        // The hook runs on the committing thread (the one thread using this connection), inside
        // sqlite3_step of COMMIT; the context is `walState`, owned by self and alive until close().
        let context = Unmanaged.passUnretained(walState).toOpaque()
        sqlite3_wal_hook(handle, { context, _, _, pages in
            guard let context else { return SQLITE_OK }
            Unmanaged<WALState>.fromOpaque(context).takeUnretainedValue().pages = pages
            return SQLITE_OK
        }, context)
    }

    deinit { close() }

    package var isOpen: Bool { handle != nil }

    /// Whether the main file was deleted, renamed or replaced since it was opened: SQLite
    /// compares the file at the path with the one it has open (`SQLITE_FCNTL_HAS_MOVED`).
    package var mainFileHasMoved: Bool {
        guard let handle else { return false }
        var moved: Int32 = 0
        return sqlite3_file_control(handle, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK && moved != 0
    }

    /// The device and inode of the file at the WAL's path (the main file's path and `-wal`),
    /// nil when there is none: compared over time, it tells a WAL deleted or replaced.
    package var walFileIdentity: (device: UInt64, inode: UInt64)? {
        guard let handle, let name = sqlite3_db_filename(handle, "main") else { return nil }
        var status = stat()
        guard stat(String(cString: name) + "-wal", &status) == 0 else { return nil }
        return (UInt64(status.st_dev), UInt64(status.st_ino))
    }

    /// Pages in the WAL as of this connection's latest commit.
    package var walPages: Int { Int(walState.pages) }

    /// True outside an explicit transaction (SQLite rolls back by itself after some errors).
    package var isAutocommit: Bool {
        guard let handle else { return true }
        return sqlite3_get_autocommit(handle) != 0
    }

    /// Finalizes every statement and closes the handle. Idempotent.
    package func close() {
        guard let db = handle else { return }
        for statement in statements.values { statement.finalize() }
        statements.removeAll()
        sqlite3_wal_hook(db, nil, nil)
        sqlite3_close_v2(db)
        handle = nil
    }

    package func setBusyTimeout(milliseconds: Int32) {
        guard let handle else { return }
        sqlite3_busy_timeout(handle, milliseconds)
    }

    /// Runs one or more statements that return no rows we need (pragmas, DDL, BEGIN/COMMIT).
    package func execute(_ sql: String) throws(SQLiteError) {
        let db = try openHandle(sql: sql)
        let rc = sqlite3_exec(db, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc, sql: sql) }
    }

    /// Runs one statement that returns no rows through the statement cache: for the statements
    /// every transaction repeats (BEGIN, COMMIT), which `execute` would parse again each time.
    package func run(_ sql: String) throws(SQLiteError) {
        try statement(sql).run()
    }

    /// A prepared statement for `sql`, prepared on first use and reused afterwards.
    package func statement(_ sql: String) throws(SQLiteError) -> Statement {
        if let cached = statements[sql] { return cached }
        let db = try openHandle(sql: sql)
        var raw: OpaquePointer?
        let rc = sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &raw, nil)
        guard rc == SQLITE_OK, let raw else {
            sqlite3_finalize(raw)
            throw error(rc, sql: sql)
        }
        let statement = Statement(raw: raw, sql: sql, connection: self)
        statements[sql] = statement
        return statement
    }

    /// Reads a pragma (or any single-value query) as an integer.
    package func integer(_ sql: String) throws(SQLiteError) -> Int64 {
        let statement = try statement(sql)
        defer { statement.reset() }
        guard try statement.step() else { return 0 }
        return statement.int64(0)
    }

    /// Runs a passive checkpoint: copies as much of the WAL into the database as readers allow.
    package func checkpoint() throws(SQLiteError) {
        let db = try openHandle(sql: nil)
        var logFrames: Int32 = 0
        var copied: Int32 = 0
        let rc = sqlite3_wal_checkpoint_v2(db, nil, SQLITE_CHECKPOINT_PASSIVE, &logFrames, &copied)
        guard rc == SQLITE_OK else { throw error(rc, sql: "wal_checkpoint(PASSIVE)") }
        // -1: this connection has not opened the WAL, so nothing was checkpointed at all.
        guard logFrames >= 0 else {
            throw SQLiteError(code: SQLITE_MISUSE, message: "checkpoint on a connection that has not opened the WAL",
                               sql: "wal_checkpoint(PASSIVE)")
        }
        // Once everything is copied the next writer restarts the WAL from its beginning.
        walState.pages = logFrames == copied ? 0 : logFrames
    }

    /// The error for result code `rc`, with SQLite's message for the latest failure.
    package func error(_ rc: Int32, sql: String?) -> SQLiteError {
        guard let handle else {
            return SQLiteError(code: SQLITE_MISUSE, message: "connection is closed", sql: sql)
        }
        let extended = sqlite3_extended_errcode(handle)
        let message = String(cString: sqlite3_errmsg(handle))
        // After a failed step the handle's code is the step's; otherwise trust rc.
        let code = (extended & 0xff) == (rc & 0xff) ? extended : rc
        return SQLiteError(code: code & 0xff, extendedCode: code, message: message, sql: sql)
    }

    private func openHandle(sql: String?) throws(SQLiteError) -> OpaquePointer {
        guard let handle else {
            throw SQLiteError(code: SQLITE_MISUSE, message: "connection is closed", sql: sql)
        }
        return handle
    }
}

/// A prepared statement owned by its `SQLiteConnection` (same thread rule). Use: bind, step until
/// it returns false, reset. Column reads copy the bytes out before the next step.
package final class Statement {
    /// Owned by the connection's cache; finalized by `SQLiteConnection.close()`.
    private var raw: OpaquePointer?
    package let sql: String
    /// Unowned: the connection owns this statement, never the other way round.
    private unowned let connection: SQLiteConnection

    fileprivate init(raw: OpaquePointer, sql: String, connection: SQLiteConnection) {
        self.raw = raw
        self.sql = sql
        self.connection = connection
    }

    fileprivate func finalize() {
        sqlite3_finalize(raw)
        raw = nil
    }

    /// Clears the bindings and rewinds, ready for the next use. Errors of the previous step were
    /// already reported by `step()`, so the result code is ignored here.
    package func reset() {
        sqlite3_reset(raw)
        sqlite3_clear_bindings(raw)
    }

    package func bind(_ index: Int32, _ value: Int64) throws(SQLiteError) {
        try check(sqlite3_bind_int64(raw, index, value))
    }

    package func bind(_ index: Int32, _ value: String?) throws(SQLiteError) {
        guard let value else {
            try check(sqlite3_bind_null(raw, index))
            return
        }
        // withCString never yields nil (a nil pointer would bind NULL for ""); the byte count keeps
        // embedded NULs; SQLITE_TRANSIENT makes SQLite copy before the closure's buffer dies.
        let rc = value.withCString { pointer in
            sqlite3_bind_text(raw, index, pointer, Int32(value.utf8.count), bq_sqlite_transient())
        }
        try check(rc)
    }

    /// Advances; true when a row is available, false when done.
    package func step() throws(SQLiteError) -> Bool {
        let rc = sqlite3_step(raw)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = connection.error(rc, sql: sql)
            sqlite3_reset(raw)
            throw error
        }
    }

    /// Binds nothing new, steps to completion, resets.
    package func run() throws(SQLiteError) {
        defer { reset() }
        while try step() {}
    }

    package func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(raw, column) }

    package func isNull(_ column: Int32) -> Bool { sqlite3_column_type(raw, column) == SQLITE_NULL }

    /// A copy of the column's text ("" for NULL).
    package func string(_ column: Int32) -> String {
        // column_text first, then column_bytes: the order SQLite documents for a stable length.
        guard let bytes = sqlite3_column_text(raw, column) else { return "" }
        let count = Int(sqlite3_column_bytes(raw, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    package func optionalString(_ column: Int32) -> String? {
        isNull(column) ? nil : string(column)
    }

    private func check(_ rc: Int32) throws(SQLiteError) {
        guard rc == SQLITE_OK else { throw connection.error(rc, sql: sql) }
    }
}
