import SQLite
import CSQLite3

/// An append-only, per-game event log in one SQLite file (WAL mode).
///
/// Threads: an `EventStore` is one SQLite connection. Use it from one thread at a time (it is not
/// `Sendable`); the server gives it to `EventWriter`'s thread. Several stores (connections, even
/// processes) may share a file: writes serialize on SQLite's lock and the compare-and-set check
/// reads the current version inside the write transaction.
public final class EventStore {
    let connection: SQLiteConnection
    let options: StoreOptions
    let path: String
    /// The WAL's identity when `filesMovedError` first looked; nil before.
    var walIdentity: (device: UInt64, inode: UInt64)?
    /// Set once the log's files were found moved or deleted: every commit after is refused.
    var filesMoved: StorageError?
    /// When `filesMovedError` last looked.
    var filesCheckedAt: ContinuousClock.Instant?
    /// Game versions known to this connection; only trusted while `PRAGMA data_version` says no
    /// other connection has committed since, dropped entirely after a failed transaction.
    var versionCache: [String: Int64] = [:]
    var cachedDataVersion: Int64 = -1
    /// Failed commits whose record (`failed_commits`) could not be made durable yet: the next
    /// commit that succeeds writes them (at most `maxUnrecordedFailures`, the last the latest).
    var unrecordedFailures: [(at: Int64, error: String)] = []
    static let maxUnrecordedFailures = 100
    /// Per game, the highest epoch of a request that failed or conflicted: later requests of
    /// that epoch or an earlier one are refused unwritten (see `AppendRequest.epoch`).
    var fencedEpochs: [String: UInt64] = [:]
    /// The file's schema: the current one, except for a read-only store on a file that only
    /// `bq serve` will migrate (reads then use that schema's tables).
    public private(set) var schemaVersion = Schema.currentVersion
    /// The schema this build writes; a log at a newer one is refused, an older one migrated.
    public static var currentSchemaVersion: Int64 { Schema.currentVersion }
    /// The schema an existing log had before this open migrated it (nil: it was current, or new):
    /// a bq older than this one can no longer open it.
    public private(set) var migratedFrom: Int64?

    /// Opens (creating if needed) the database at `path`, checks its integrity (`quick_check`) and
    /// migrates its schema. Throws a `StorageError` for an unreadable or corrupt file and for a
    /// file written by a newer schema than this code knows.
    public init(path: String, options: StoreOptions = .init()) throws(StorageError) {
        self.options = options
        self.path = path
        // Before SQLite opens the log: its first connection rebuilds the WAL's index.
        let framesLost = options.checksWALBeforeOpening ? try Self.framesLostBeforeOpening(path) : 0
        connection = try options.readOnly
            ? SQLiteConnection.openToRead(path, busyTimeoutMilliseconds: options.busyTimeoutMilliseconds)
            : SQLiteConnection(path: path, readOnly: false)
        do {
            try configure()
        } catch {
            // The connection leaves the files as they were: a refused log is not rewritten.
            connection.close()
            throw error
        }
        walFramesLost = framesLost
        connection.checkpointOnClose(true)
    }

    /// Frames (page writes) of commits that the WAL held when the log was last written (its
    /// index says so) and that are not there now: the WAL was cut short (or lost them to a power
    /// cut under a `synchronous` setting that does not sync each commit). The log reads as it
    /// was before them. 0 when none were, or when the store did not look
    /// (`StoreOptions.checksWALBeforeOpening`, `EventStore+WALCheck`).
    public private(set) var walFramesLost = 0

    /// Whether the log at `path` has a WAL beside it that holds commits (not yet copied into the
    /// main file: a server that did not stop cleanly, or one running now).
    public static func walHoldsCommits(logPath path: String) -> Bool {
        SQLiteConnection.fileHoldsBytes(path + "-wal")
    }

    /// How long a statement waits for another connection's lock before it fails with
    /// SQLITE_BUSY; 0 fails at once. Set at opening from `StoreOptions.busyTimeoutMilliseconds`.
    public func setBusyTimeout(milliseconds: Int32) {
        connection.setBusyTimeout(milliseconds: milliseconds)
    }

    private func configure() throws(StorageError) {
        connection.setBusyTimeout(milliseconds: options.busyTimeoutMilliseconds)
        // The first statement to read the file: a file that is not a database fails here.
        if !options.readOnly {
            let mode = try textPragma("PRAGMA journal_mode=WAL")
            guard mode.lowercased() == "wal" else {
                throw StorageError(code: SQLITE_ERROR, message: "cannot switch to WAL mode (got \(mode))",
                                   sql: "PRAGMA journal_mode=WAL")
            }
        }
        if options.checkIntegrity { try checkIntegrity() }
        if !options.readOnly {
            // A WAL that a long read held from starting over (a backup, say) keeps its peak size
            // on disk otherwise, until the server stops: SQLite cuts it back to this when it
            // starts over, which it does only after a checkpoint, never inside a busy stretch.
            let pageSize = try connection.integer("PRAGMA page_size")
            let limit = Int64(options.walCheckpointPages) * Int64(StoreOptions.walSoftLimitFactor) * pageSize
            try connection.execute("PRAGMA journal_size_limit=\(limit)")
        }
        try connection.execute("PRAGMA synchronous=\(options.synchronous.rawValue.uppercased())")
        connection.installWALHook()
        try migrate()
    }

    private func checkIntegrity() throws(StorageError) {
        let sql = "PRAGMA quick_check"
        let statement = try connection.statement(sql)
        defer { statement.reset() }
        var problems: [String] = []
        while try statement.step() { problems.append(statement.string(0)) }
        guard problems == ["ok"] else {
            throw .corrupt("database failed its integrity check: " + problems.prefix(5).joined(separator: "; "),
                           sql: sql)
        }
    }

    private func migrate() throws(StorageError) {
        let found = try connection.integer("PRAGMA user_version")
        let known = Schema.currentVersion
        guard found <= known else {
            // Not `SQLITE_CORRUPT`: the file is whole, this program is older than it.
            throw StorageError(code: SQLITE_ERROR, message: "database schema version \(found) is newer than this program knows (\(known)): "
                + "run the bq that wrote it", sql: "PRAGMA user_version")
        }
        guard found < known else { return }
        guard !options.readOnly else {
            // An older log can still be read (say, `bq verify` on a backup); an empty file cannot.
            guard found >= 1 else {
                throw StorageError(code: SQLITE_READONLY,
                                   message: "the database has no schema yet, and the store is read-only")
            }
            schemaVersion = found
            return
        }
        try connection.execute("BEGIN IMMEDIATE")
        do {
            // Re-read under the write lock: another process may have migrated meanwhile.
            let current = try connection.integer("PRAGMA user_version")
            for index in Int(current)..<Schema.migrations.count {
                try connection.execute(Schema.migrations[index])
            }
            try connection.execute("PRAGMA user_version=\(known)")
            try connection.execute("COMMIT")
            if current >= 1, current < known { migratedFrom = current }
        } catch {
            rollback()
            throw error
        }
        // A migration that rebuilt a table leaves it all in the WAL; copied now, at start-up,
        // rather than by the writer's first commit. Best effort: the WAL keeps it meanwhile.
        try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    private func textPragma(_ sql: String) throws(StorageError) -> String {
        let statement = try connection.statement(sql)
        defer { statement.reset() }
        guard try statement.step() else { return "" }
        return statement.string(0)
    }

    func rollback() {
        guard !connection.isAutocommit else { return }
        // A failing ROLLBACK leaves nothing better to do: SQLite rolls back when it closes anyway.
        try? connection.execute("ROLLBACK")
    }

    /// The game's version: the number of its events (0 for an unknown game).
    public func version(game: String) throws(StorageError) -> Int64 {
        let statement = try connection.statement("SELECT max(version) FROM events WHERE game = ?1")
        defer { statement.reset() }
        try statement.bind(1, game)
        guard try statement.step() else { return 0 }
        return statement.int64(0)
    }

    /// Every game with at least one event, sorted.
    public func games() throws(StorageError) -> [String] {
        // One index probe per game, rather than a walk of every event (start-up asks): the
        // next name after the last, until there is none.
        let statement = try connection.statement("""
            WITH RECURSIVE names(game) AS (
                SELECT (SELECT min(game) FROM events)
                UNION ALL
                SELECT (SELECT min(game) FROM events WHERE game > names.game) FROM names WHERE names.game IS NOT NULL
            )
            SELECT game FROM names WHERE game IS NOT NULL
            """)
        defer { statement.reset() }
        var games: [String] = []
        while try statement.step() { games.append(statement.string(0)) }
        return games
    }

    /// At most `limit` events with version > `after`, ascending.
    public func events(game: String, after: Int64, limit: Int) throws(StorageError) -> [StoredEvent] {
        let statement = try connection.statement("""
            SELECT version, type, actor, at, idem, payload FROM events
            WHERE game = ?1 AND version > ?2 ORDER BY version LIMIT ?3
            """)
        defer { statement.reset() }
        try statement.bind(1, game)
        try statement.bind(2, after)
        try statement.bind(3, Int64(max(0, limit)))
        return try readEvents(statement, game: game)
    }

    /// The events with `after < version <= through`, ascending.
    public func events(game: String, after: Int64, through: Int64) throws(StorageError) -> [StoredEvent] {
        let statement = try connection.statement("""
            SELECT version, type, actor, at, idem, payload FROM events
            WHERE game = ?1 AND version > ?2 AND version <= ?3 ORDER BY version
            """)
        defer { statement.reset() }
        try statement.bind(1, game)
        try statement.bind(2, after)
        try statement.bind(3, through)
        return try readEvents(statement, game: game)
    }

    private func readEvents(_ statement: Statement, game: String) throws(StorageError) -> [StoredEvent] {
        var events: [StoredEvent] = []
        while try statement.step() {
            events.append(StoredEvent(
                game: game, version: statement.int64(0), type: statement.string(1),
                actor: statement.string(2), at: statement.int64(3),
                idempotencyKey: statement.optionalString(4), payload: statement.string(5)))
        }
        return events
    }

    /// The game's idempotency records for versions after `afterVersion`, in commit order (to
    /// rebuild an in-memory map): those carried by events, and those with a row of their own.
    /// A command's record on its event comes before a record written later at the same version
    /// (a keyed command that changed nothing). With `replies: false` each record's reply is left
    /// empty: the server's start-up keeps only digests and versions, and a window of 100,000
    /// replies would be text made only to be thrown away.
    ///
    /// Of the records of commands that changed nothing, only the newest `unchangedLimit` are
    /// read: they do not move the version, so a window of versions does not bound them.
    public func idempotencyRecords(game: String, afterVersion: Int64 = 0, replies: Bool = true,
                                   unchangedLimit: Int? = nil) throws(StorageError) -> [IdempotencyRecord] {
        // Schema 1 kept every record in the idempotency table; since schema 2 a command's record
        // rides on its last event, and the table keeps the others. Schema 5 marks those of
        // commands that changed nothing; before it, every record counts as a change's.
        let unchanged = schemaVersion >= 5 ? "unchanged" : "0"
        let statement = try connection.statement(schemaVersion < 2 ? """
            SELECT identity, key, fingerprint, reply, version, 0 FROM idempotency
            WHERE game = ?1 AND version > ?2 ORDER BY version, seq
            """ : """
            SELECT identity, key, fingerprint, reply, version, unchanged FROM (
                SELECT idem_identity AS identity, idem AS key, idem_fingerprint AS fingerprint,
                       idem_reply AS reply, version, 0 AS source, seq, 0 AS unchanged
                FROM events WHERE game = ?1 AND version > ?2 AND idem_fingerprint IS NOT NULL
                UNION ALL
                SELECT identity, key, fingerprint, reply, version, 1 AS source, seq, 0 AS unchanged
                FROM idempotency WHERE game = ?1 AND version > ?2 AND NOT \(unchanged)
                UNION ALL
                SELECT * FROM (
                    SELECT identity, key, fingerprint, reply, version, 1 AS source, seq, 1 AS unchanged
                    FROM idempotency WHERE game = ?1 AND version > ?2 AND \(unchanged)
                    ORDER BY seq DESC LIMIT ?3)
            ) ORDER BY version, source, seq
            """)
        defer { statement.reset() }
        try statement.bind(1, game)
        try statement.bind(2, afterVersion)
        if schemaVersion >= 2 {
            // A negative limit is none, to SQLite.
            try statement.bind(3, Int64(unchangedLimit ?? -1))
        }
        var records: [IdempotencyRecord] = []
        while try statement.step() {
            records.append(IdempotencyRecord(
                identity: statement.string(0), key: statement.string(1),
                fingerprint: statement.string(2), reply: replies ? statement.string(3) : "", version: statement.int64(4),
                changedNothing: statement.int64(5) != 0))
        }
        return records
    }

    /// The reply stored with the idempotency record of (`identity`, `key`) at `version`; nil if
    /// there is none.
    public func storedReply(game: String, identity: String, key: String, version: Int64) throws(StorageError) -> String? {
        let statement = try connection.statement(schemaVersion < 2 ? """
            SELECT reply FROM idempotency WHERE game = ?1 AND version = ?2 AND key = ?3 AND identity = ?4
            """ : """
            SELECT idem_reply FROM events
            WHERE game = ?1 AND version = ?2 AND idem = ?3 AND idem_identity = ?4
            UNION ALL
            SELECT reply FROM idempotency
            WHERE game = ?1 AND version = ?2 AND key = ?3 AND identity = ?4
            LIMIT 1
            """)
        defer { statement.reset() }
        try statement.bind(1, game)
        try statement.bind(2, version)
        try statement.bind(3, key)
        try statement.bind(4, identity)
        guard try statement.step() else { return nil }
        return statement.string(0)
    }

    /// The newest snapshot at or before `atOrBefore`, if any.
    public func latestSnapshot(game: String, atOrBefore: Int64 = .max) throws(StorageError) -> Snapshot? {
        let statement = try connection.statement("""
            SELECT version, state FROM snapshots WHERE game = ?1 AND version <= ?2
            ORDER BY version DESC LIMIT 1
            """)
        defer { statement.reset() }
        try statement.bind(1, game)
        try statement.bind(2, atOrBefore)
        guard try statement.step() else { return nil }
        return Snapshot(version: statement.int64(0), state: statement.string(1))
    }

    /// How many commits failed at the disk after writing their last frame (a failed sync, say),
    /// and the time (ms since 1970) of the last: each is recorded where it happened
    /// (`settleFailedCommit`, or the next commit that succeeds), for the operator to hear of.
    public func failedCommits() throws(StorageError) -> (count: Int, lastAt: Int64?) {
        guard schemaVersion >= 4 else { return (0, nil) }
        // The newest record's time, not the greatest: a clock set back makes them differ.
        let statement = try connection.statement(
            "SELECT count(*), (SELECT at FROM failed_commits ORDER BY seq DESC LIMIT 1) FROM failed_commits")
        defer { statement.reset() }
        guard try statement.step() else { return (0, nil) }
        let count = Int(statement.int64(0))
        return (count, count > 0 ? statement.int64(1) : nil)
    }

    /// Every snapshot of the game, ascending by version.
    public func snapshots(game: String) throws(StorageError) -> [Snapshot] {
        let statement = try connection.statement(
            "SELECT version, state FROM snapshots WHERE game = ?1 ORDER BY version")
        defer { statement.reset() }
        try statement.bind(1, game)
        var snapshots: [Snapshot] = []
        while try statement.step() {
            snapshots.append(Snapshot(version: statement.int64(0), state: statement.string(1)))
        }
        return snapshots
    }

    /// Pages in the WAL as of this connection's latest commit (or checkpoint).
    var walPages: Int { connection.walPages }

    /// Checkpoints the WAL into the database once it holds more than `walCheckpointPages` pages.
    /// Call between transactions (`EventWriter` does, past its soft limit; below it a
    /// `BackgroundCheckpointer` does the copying). A failed checkpoint loses nothing (the WAL
    /// keeps the data) and is retried on the next call.
    public func checkpointIfNeeded() throws(StorageError) {
        guard connection.isOpen, connection.walPages > options.walCheckpointPages else { return }
        try connection.checkpoint()
    }

    /// Closes the connection; every later call fails with a "connection is closed" error. Idempotent.
    public func close() {
        connection.close()
        versionCache.removeAll()
    }

    /// Copies the WAL into the main file, then closes. SQLite's own close copies it too, but
    /// says nothing when it cannot (a full disk): the log is then whole only with its -wal, and
    /// whoever tidies up after a clean stop should know. Returns the copy's failure, nil when it
    /// copied what it could. A reader still open may keep some frames from being copied, without
    /// an error; the last connection to close copies them.
    public func closeAfterCopyingWAL() -> StorageError? {
        var failure: StorageError?
        if connection.isOpen {
            do throws(StorageError) { try connection.checkpoint() } catch { failure = error }
        }
        close()
        return failure
    }

    /// Closes without copying the WAL into the main file: for a log refused after it opened (a
    /// game that cannot be replayed), which must be left as it was found, its WAL included.
    public func closeLeavingFilesAsFound() {
        connection.checkpointOnClose(false)
        close()
    }
}

@available(*, unavailable, message: "an EventStore is one SQLite connection: confine it to one thread")
extension EventStore: Sendable {}
