import EventLog
import UV

/// The per-connection and per-server limits, in one place; each is configurable and each has a
/// test that goes over it. (The lengths of what people type and of the protocol's own fields
/// are fixed, in `Domain.Limits`; the limits on PIN and admin-key guesses are in `GuessGuard`.)
public struct ServerLimits: Sendable, Equatable {
    /// Longest accepted request line, in bytes (PROTOCOL.md: default 64 KiB).
    public var maxLineBytes = 65_536
    /// Open connections at once; the next one is told the server is full and closed.
    public var maxConnections = 4_096
    /// Open connections from one network (an IPv4 address, an IPv6 /64) at once, so that one
    /// party cannot take every connection; peers on this machine (loopback) are not limited.
    public var maxConnectionsPerAddress = 64
    /// Requests per second per connection (token bucket; the burst equals the rate).
    public var requestsPerSecond = 2_000
    /// `subscribe` requests from a past version per second per viewer (a character, or admin),
    /// over all their connections (burst the same): each rebuilds that version's view from the
    /// log, one at a time on the rebuilder's thread, where a flood would delay everyone's.
    public var resumesPerSecond = 100
    /// Mutations decided per second per player (the birthday person and the friends; not the
    /// organizer, not the admin console), over all their connections (burst the same): every
    /// change is kept for good, so one player's loop must not fill the disk. Replays of a key
    /// already answered cost nothing.
    public var changesPerSecond = 20
    /// Bad lines in a row before `bye` `too_many_errors` (PROTOCOL.md: default 20).
    public var maxBadLines = 20
    /// Outbound bytes queued for one connection before its patches are held back.
    public var maxQueuedBytes = 1 << 20
    /// Outbound bytes queued for all connections together; past it, those that do not read what
    /// they asked for are closed, most owed first (`GameServer.closeConnectionsOwingTheMost`),
    /// and subscribers' patches are held.
    public var maxTotalQueuedBytes = 1 << 28
    /// Requests read from one connection but not yet answered before the server stops reading from it.
    public var maxPendingRequests = 1_024
    /// Seconds in which a connection sent no bytes at all before `bye` `idle_timeout`; 0 turns it off.
    public var idleTimeoutSeconds = 0
    /// Nesting depth of a request's JSON.
    public var maxJSONDepth = 32

    public init() {}
}

/// Every setting of `bq serve`, with its default; docs/configuration.md names each one's key in
/// the config file and its environment variable, and `ConfigLoader` reads them.
public struct ServerConfig: Sendable, Equatable {
    /// The address to listen on: an IP literal or a host name (`0.0.0.0` for every interface).
    public var host = "127.0.0.1"
    /// 0 asks the system for a free port (`GameServer.port` tells which).
    public var port = 4747
    /// Holds the log (`birthdayquest.sqlite`), the admin key and the directory's lock.
    public var dataDirectory = "data"
    /// The seed file for games that have no events yet.
    public var seedPath = "seed/birthdayquest.json"
    /// Whether a config file, the environment or a flag named the seed; only an unnamed default
    /// that is missing falls back to the seed built into the executable.
    public var seedIsNamed = false
    /// `host:port` as people and URLs write it: an IPv6 address in brackets.
    public static func addressText(host: String, port: Int) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// The game a request means when it names none.
    public var defaultGame = "main"
    /// The games this server holds besides `defaultGame`; each is seeded on first launch. None
    /// by default: a server whose default game is renamed holds that game alone, not also an
    /// unplayed `main` whose free organizer could read the seed's gifts.
    public var games: [String] = []
    /// From config or BQ_ADMIN_KEY; when nil the server makes one in the data directory.
    public var adminKey: String?
    public var synchronous: SyncMode = .full
    /// A snapshot of a game's state is written every this many events.
    public var snapshotEvery = 1_000
    /// Idempotency keys are remembered for this many of a game's most recent events: a retry
    /// comes seconds or minutes after the first try, and memory must not grow with the log.
    public var idempotencyWindow = 100_000
    /// How long a commit waits for another process's lock on the database before it fails.
    public var busyTimeoutMilliseconds = 5_000
    /// Requests the writer folds into one transaction at most.
    public var maxBatchRequests = 1_024
    public var limits = ServerLimits()
    /// A character with a PIN is claimed only with it, free or not (`CommandContext.claimsNeedPIN`).
    /// Off by default, as PROTOCOL.md has it.
    public var claimsNeedPIN = false
    /// How long a connection being closed (after `bye`, or its peer's end of input) keeps
    /// reading, and dropping, what its peer still sends, waiting for the peer to close its side
    /// (see `TCPConnection.closeAfterFlush`). Not a setting of the config file: tests shorten it,
    /// since their clients hold their sockets open.
    public var lingerMilliseconds = TCPConnection.lingerMilliseconds

    public init() {}

    public var databasePath: String { dataDirectory + "/birthdayquest.sqlite" }
    public var adminKeyPath: String { dataDirectory + "/admin.key" }
}

extension ServerConfig {
    /// How `bq log`, `bq verify` and `bq backup` open the log: to read, waiting for a writer's
    /// lock as the server's commits do.
    public var readerOptions: StoreOptions {
        StoreOptions(busyTimeoutMilliseconds: Int32(clamping: busyTimeoutMilliseconds), readOnly: true,
                     checksWALBeforeOpening: true)
    }
}
