/// An event to append: the log stores it as given and assigns the version.
public struct NewEvent: Sendable, Equatable {
    /// The event's kind, as the domain names it.
    public var type: String
    /// Who caused it (a player identity, "admin", "seed", ...).
    public var actor: String
    /// Server time in milliseconds since the Unix epoch, UTC.
    public var at: Int64
    /// The idempotency key of the request that produced the event, if any.
    public var idempotencyKey: String?
    /// The event's body as JSON text; the log never parses it.
    public var payload: String

    public init(type: String, actor: String, at: Int64, idempotencyKey: String? = nil, payload: String) {
        self.type = type
        self.actor = actor
        self.at = at
        self.idempotencyKey = idempotencyKey
        self.payload = payload
    }
}

/// An event as stored: a `NewEvent` plus its game and gapless version (from 1).
public struct StoredEvent: Sendable, Equatable {
    public var game: String
    public var version: Int64
    public var type: String
    public var actor: String
    public var at: Int64
    public var idempotencyKey: String?
    public var payload: String

    public init(game: String, version: Int64, type: String, actor: String, at: Int64,
                idempotencyKey: String?, payload: String) {
        self.game = game
        self.version = version
        self.type = type
        self.actor = actor
        self.at = at
        self.idempotencyKey = idempotencyKey
        self.payload = payload
    }
}

/// The remembered outcome of one request, so that a retry with the same key gets the same reply.
/// Uniqueness of `(identity, key)` is decided in memory by the server before a command reaches the
/// log (its idempotency memory, on the loop thread), not by an index.
public struct IdempotencyRecord: Sendable, Equatable {
    /// Who sent the request.
    public var identity: String
    /// The client's idempotency key.
    public var key: String
    /// A fingerprint of the request body: a retry with the same key but another body is detectable.
    public var fingerprint: String
    /// The reply that was sent, as JSON text.
    public var reply: String
    /// The game version after the request's commit.
    public var version: Int64
    /// The request committed no event (`set_day` to the current day, say): its record is kept
    /// apart from the events, and the game's version did not move for it.
    public var changedNothing: Bool

    public init(identity: String, key: String, fingerprint: String, reply: String, version: Int64,
                changedNothing: Bool = false) {
        self.identity = identity
        self.key = key
        self.fingerprint = fingerprint
        self.reply = reply
        self.version = version
        self.changedNothing = changedNothing
    }
}

/// A game's folded state at a version, as text the domain can decode.
public struct Snapshot: Sendable, Equatable {
    public var version: Int64
    public var state: String

    public init(version: Int64, state: String) {
        self.version = version
        self.state = state
    }
}

/// One compare-and-set append: commits only if `game` is still at version `expected`.
public struct AppendRequest: Sendable {
    public var game: String
    /// The version the caller decided against; 0 for a game with no events.
    public var expected: Int64
    /// Stored with versions `expected + 1 ... expected + events.count`.
    public var events: [NewEvent]
    /// Written in the same transaction as the events.
    public var idempotency: [IdempotencyRecord]
    /// Written in the same transaction if present; its version must be in `1 ... expected + events.count`.
    public var snapshot: Snapshot?
    /// For a caller that decides requests on top of others still on their way to disk. Once a
    /// request of a game with an epoch fails or conflicts, the store refuses (`.failed`, nothing
    /// written) every later request of that game whose epoch is not higher: they were decided
    /// on a state that did not become durable. The version check alone does not catch one
    /// decided behind a failed request without events (a keyed command that changed nothing:
    /// its record failed, but the version it expected is still the game's). The caller moves
    /// to a higher epoch once it has learned of the failure. nil: each request stands alone.
    public var epoch: UInt64?

    public init(game: String, expected: Int64, events: [NewEvent],
                idempotency: [IdempotencyRecord] = [], snapshot: Snapshot? = nil, epoch: UInt64? = nil) {
        self.game = game
        self.expected = expected
        self.events = events
        self.idempotency = idempotency
        self.snapshot = snapshot
        self.epoch = epoch
    }
}

/// The outcome of one `AppendRequest`.
public enum AppendResult: Sendable, Equatable {
    /// Durable; `version` is the game's version after the request.
    case committed(version: Int64)
    /// The game had moved on (or is behind `expected`); nothing of the request was written.
    case conflict(expected: Int64, actual: Int64)
    /// Nothing of the request was written because storage failed (or the request was malformed).
    case failed(StorageError)
    /// The commit failed while being synced to disk and the log could not be made to say for
    /// sure that it did not happen: after a crash it may turn out committed. Only a retry with
    /// the same idempotency key is safe.
    case uncertain(StorageError)
}

/// How hard SQLite syncs a commit. `.full` survives power loss; `.normal` in WAL mode survives a
/// process crash but may lose the last commits on power loss.
public enum SyncMode: String, Sendable {
    case full, normal, off
}

/// Connection settings of an `EventStore`.
public struct StoreOptions: Sendable {
    public var synchronous: SyncMode
    /// How long a connection waits for another connection's write lock before failing with SQLITE_BUSY.
    public var busyTimeoutMilliseconds: Int32
    /// SQLite's automatic checkpoint is off (it would land inside a commit and set the p99).
    /// Past this many pages in the WAL, `EventWriter` has its checkpointer thread copy the WAL
    /// into the database, and checkpoints itself between batches only past
    /// `walSoftLimitFactor` times as many; a bare store checkpoints in `checkpointIfNeeded()`.
    public var walCheckpointPages: Int
    /// How far past `walCheckpointPages` the WAL may grow before the writer checkpoints itself
    /// (and the size SQLite truncates the WAL back to).
    static let walSoftLimitFactor = 4
    /// Opens without write access: no schema creation or migration, appends fail.
    public var readOnly: Bool
    /// Runs `PRAGMA quick_check` on open. Its cost grows with the file, so a process that opens
    /// several connections to one file checks with the first and skips it on the others.
    public var checkIntegrity: Bool
    /// How often, at most, a commit first checks that the log's files are still where they were
    /// opened (`EventStore.filesMovedError`): two `stat`s, which every commit need not pay for.
    public var filesCheckMilliseconds: Int
    /// Looks, before opening, for commits lost with the WAL after a crash (`EventStore+WALCheck`).
    /// Only for the first connection a process opens to the file: the look opens and closes the
    /// WAL's index, and closing any descriptor of a file drops every lock the process holds on
    /// it, SQLite's on the index included.
    public var checksWALBeforeOpening: Bool

    public init(synchronous: SyncMode = .full, busyTimeoutMilliseconds: Int32 = 5000,
                walCheckpointPages: Int = 4000, readOnly: Bool = false, checkIntegrity: Bool = true,
                filesCheckMilliseconds: Int = 100, checksWALBeforeOpening: Bool = false) {
        self.checksWALBeforeOpening = checksWALBeforeOpening
        self.filesCheckMilliseconds = filesCheckMilliseconds
        self.checkIntegrity = checkIntegrity
        self.synchronous = synchronous
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        self.walCheckpointPages = walCheckpointPages
        self.readOnly = readOnly
    }
}
