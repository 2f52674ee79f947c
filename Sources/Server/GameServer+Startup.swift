import Domain
import EventLog
import Foundation
import Logging
import UV
import POSIXSupport

/// Start-up: what the server checks and makes in its data directory before it takes a
/// connection (the seed, the directory and the log file with their modes, the admin key, the
/// listening address), and how it opens and loads the log.
extension GameServer {
    /// A first launch needs the seed: a bad one is refused before anything is created.
    static func checkSeedForFirstLaunch(_ seed: GameLoader.Seed, config: ServerConfig) throws {
        guard !FileManager.default.fileExists(atPath: config.databasePath) else { return }
        if !seed.isBuiltIn, !FileManager.default.isReadableFile(atPath: config.seedPath), !config.seedPath.hasPrefix("/") {
            throw ServerError.startup("\(config.seedPath): cannot read the seed file (a relative path is read from the "
                + "working directory, \(FileManager.default.currentDirectoryPath); with no seed named, the copy built into bq is used)")
        }
        _ = try seed.content()
    }

    static func warnAboutSynchronous(_ mode: SyncMode, logger: Logger) {
        switch mode {
        case .full: break
        case .normal:
            logger.warning("synchronous is normal: an acknowledged change survives a crash of bq serve, not a power loss")
        case .off:
            logger.warning("synchronous is off: an acknowledged change may be lost in a crash; for tests and benchmarks only")
        }
    }

    /// The configured key, or the one kept in (or first made in) the data directory.
    static func provideAdminKey(_ config: ServerConfig, logger: Logger) throws -> String {
        let key = try Secrets.adminKey(configured: config.adminKey, path: config.adminKeyPath)
        if let file = key.file {
            if let mode = modeOthersMayRead(file) {
                logger.warning("the admin key in \(file) may be read by other users (mode \(mode)): chmod go= it")
            } else {
                logger.notice("admin key is in \(file) (readable by its owner only)")
            }
        } else if let kept = FileManager.default.contents(atPath: config.adminKeyPath),
                  String(decoding: kept, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) != key.key {
            // `bq admin --data DIR` reads that file: it would sign in with the wrong key.
            logger.warning("""
                the admin key is the configured one (admin_key or BQ_ADMIN_KEY), not the one in \(config.adminKeyPath): \
                bq admin --data signs in with that file's key, which this server refuses; give bq admin the key in BQ_ADMIN_KEY \
                instead (or --key, which other users of this machine can read in the process list), or remove the file
                """)
        }
        return key.key
    }

    static func openLog(_ config: ServerConfig) throws -> EventStore {
        do {
            return try EventStore(path: config.databasePath, options: storeOptions(config))
        } catch {
            throw ServerError.startup("Cannot open the event log \(config.databasePath): \(error)"
                + fullDiskHint(config.dataDirectory) + damagedLogHint(error, databasePath: config.databasePath))
        }
    }

    /// What to do about a log SQLite finds damaged. Both files are left as they were
    /// (`EventStore` does not checkpoint a log it refused), so the person can still choose.
    static func damagedLogHint(_ error: any Error, databasePath: String) -> String {
        guard let storage = error as? StorageError, storage.meansDamagedFile else { return "" }
        let advice = ". Nothing was changed; copy the whole data directory before trying anything. "
        guard EventStore.walHoldsCommits(logPath: databasePath) else {
            return advice + "The file is damaged, or is not an event log: put the log back from a backup (bq backup makes "
                + "one), or move the file aside to start a new game"
        }
        // SQLite reads a main file through the WAL beside it, whichever log that WAL came from: a
        // backup put back over the main file of a server that did not stop cleanly reads as damaged.
        return advice + "The write-ahead log \(databasePath)-wal is part of the log: if the main file was put back from a "
            + "backup, the -wal beside it belongs to the log it replaced; move that -wal and the -shm beside it aside "
            + "(keep them) to start from the backup. Otherwise the log is damaged"
    }

    /// Every game's durable state, each seeded first if it has no events yet.
    /// `playedBefore`: the data directory says a game was played with it (its admin key is from
    /// an earlier launch, and the log was not just made anew, which `makeLogFile` warns about).
    static func loadGames(_ config: ServerConfig, from store: EventStore, seed: GameLoader.Seed, now: Millis,
                          playedBefore: Bool = false, logger: Logger) throws -> [String: GameLoader.Loaded] {
        var loaded: [String: GameLoader.Loaded] = [:]
        var played: [String] = []
        var seededNow: [String] = []
        let served = Set(config.games + [config.defaultGame])
        let unserved = try store.games().filter { !served.contains($0) }
        if !unserved.isEmpty {
            // A game dropped from `games`, or misspelt there: its players' tokens would be
            // "unknown" with no word of why.
            logger.warning("""
                the log holds \(unserved.count == 1 ? "a game" : "games") this server does not serve: \
                \(unserved.joined(separator: ", ")) (kept, as every event is; name \(unserved.count == 1 ? "it" : "them") in games, \
                or BQ_GAMES, to serve \(unserved.count == 1 ? "it" : "them") again; a game nobody plays is best left unserved: \
                its free organizer reads every gift of the seed)
                """)
        }
        for game in served {
            let found = try GameLoader.load(game: game, from: store, idempotencyWindow: config.idempotencyWindow)
            if let passedOver = found.passedOver {
                logger.warning("""
                    game \(game): \(passedOver); replayed its \(found.state.version) events from the first instead \
                    (its next change writes a new snapshot; run `bq verify` to look for damage)
                    """)
            }
            for snapshot in found.distrusted {
                logger.warning("""
                    game \(game): \(snapshot): it was damaged or edited, and is passed over by start-up and resumes \
                    (run `bq verify` to look for more)
                    """)
            }
            if let unchecked = found.unchecked {
                logger.warning("game \(game): cannot check the newest snapshot, which is served as it is: \(unchecked) (run `bq verify`)")
            }
            if found.state.version > 0 { played.append(game) }
            let seeded: GameState
            do {
                seeded = try GameLoader.seedIfEmpty(game: game, state: found.state, seed: seed, store: store, now: now)
            } catch ServerError.startup(let message) {
                throw ServerError.startup(message + fullDiskHint(config.dataDirectory))
            }
            if seeded.version != found.state.version {
                logger.notice("seeded game \(game) from \(seed.source)")
                seededNow.append(game)
            }
            loaded[game] = GameLoader.Loaded(state: seeded, idempotency: found.idempotency, snapshotVersion: found.snapshotVersion,
                                             distrusted: found.distrusted)
        }
        warnIfSeedUnused(seed, games: played.sorted(), seededNow: seededNow.sorted(), loaded: loaded, logger: logger)
        if playedBefore, played.isEmpty, unserved.isEmpty {
            // The main file is there but holds no game: its changes lived in a WAL that is gone
            // (deleted, or a copy of the main file alone), or the first launch never finished.
            // (A log whose games are all unserved, `games` renamed, was warned of above.)
            logger.warning("""
                the event log \(config.databasePath) holds no game, though \(config.adminKeyPath) is from an earlier launch: \
                if a game was played with this directory, its changes were lost with the log's -wal file (deleted, or left \
                out of a copy); a new game was seeded
                """)
        }
        return loaded
    }

    /// A seed applies only to a game with no events. An organizer who edits the seed, or names
    /// another one, for a data directory that already holds the game would otherwise play the
    /// old game without a word. (The built-in seed, used when none is named, is not checked.)
    /// `seededNow`: the games this start seeded from it (a game added to `games`): the seed is
    /// used then, and the others keep what they were seeded from.
    private static func warnIfSeedUnused(_ seed: GameLoader.Seed, games played: [String], seededNow: [String],
                                         loaded: [String: GameLoader.Loaded], logger: Logger) {
        guard !played.isEmpty, !seed.isBuiltIn else { return }
        let hash: String
        do {
            hash = try seed.content().hash
        } catch {
            logger.warning("the seed \(seed.source) is not used, and could not be read anyway: \(error)")
            return
        }
        let others = played.filter { loaded[$0]?.state.seedHash != hash }
        guard !others.isEmpty else { return }
        guard seededNow.isEmpty else {
            return logger.notice("""
                the seed \(seed.source) seeded only \(seededNow.joined(separator: ", ")), which had no events: \
                \(others.joined(separator: ", ")) \(others.count == 1 ? "keeps what it was" : "keep what they were") seeded from \
                (a seed applies only to a game with no events; to play it in \(others.count == 1 ? "that one" : "those"), start \
                with a new --data directory)
                """)
        }
        logger.warning("""
            the seed \(seed.source) is not used: \(others.joined(separator: ", ")) already \(others.count == 1 ? "has" : "have") \
            events, seeded from other content. A seed applies only to a game with no events: to change the game \
            being played, use bq admin edit-challenge, edit-reward, add-challenge and add-reward (the game and \
            its points are kept); to start a new game from this seed, start with a new --data directory
            """)
    }

    /// The first connection to the log checks its integrity and looks for commits lost with its
    /// WAL; the others need not again (and must not look: see `checksWALBeforeOpening`).
    static func storeOptions(_ config: ServerConfig, checkIntegrity: Bool = true) -> StoreOptions {
        StoreOptions(synchronous: config.synchronous, busyTimeoutMilliseconds: Int32(config.busyTimeoutMilliseconds),
                     checkIntegrity: checkIntegrity, checksWALBeforeOpening: checkIntegrity)
    }

    /// The file's mode in octal when users other than its owner may read or write it.
    private static func modeOthersMayRead(_ path: String) -> String? {
        guard let mode = (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int,
              mode & 0o077 != 0 else { return nil }
        return String(mode, radix: 8)
    }

    /// Runs on the writer's or the checkpointer's thread (the log handler is thread-safe).
    static func log(_ report: CheckpointReport, to logger: Logger) {
        switch report {
        case .failing(let error):
            logger.warning("checkpoints are failing; the WAL keeps every commit but grows until one succeeds",
                           metadata: ["error": "\(error)"])
        case .recovered(let failures):
            logger.notice("checkpoints succeed again", metadata: ["failures": "\(failures)"])
        }
    }

    /// SQLite reports a full disk at open as an I/O error; say what it is.
    /// Also said where a commit or the stop's copy of the WAL fails, with their own `advice`.
    public static func fullDiskHint(_ directory: String, advice: String = "free some space and start again") -> String {
        guard let free = availableBytes(at: directory), free < 1 << 20 else { return "" }
        return " (the disk holding \(directory) is full: \(advice))"
    }

    /// The log holds PINs, gift contents and dares, so a data directory this server creates is
    /// its owner's alone, like the admin key and the log (`makeLogFile`).
    static func makeDataDirectory(_ config: ServerConfig) throws {
        // Through symbolic links: a data directory on another disk may be reached by one.
        let target = URL(fileURLWithPath: config.dataDirectory).resolvingSymlinksInPath().path
        if let type = (try? FileManager.default.attributesOfItem(atPath: target))?[.type] as? FileAttributeType {
            guard type == .typeDirectory else {
                throw ServerError.startup("The data directory \(config.dataDirectory) is not a directory: give --data a directory")
            }
            return
        }
        do {
            try FileManager.default.createDirectory(atPath: config.dataDirectory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            // Foundation's own words name no cause ("could not be completed"); the system's do.
            let underlying = ((error as NSError).userInfo[NSUnderlyingErrorKey] as? any Error).map { $0 as NSError }
            let reason = underlying.map { systemErrorText(Int32(truncatingIfNeeded: $0.code)) } ?? "\(error)"
            throw ServerError.startup("Cannot create the data directory \(config.dataDirectory): \(reason)")
        }
    }

    /// Fails here, before the log, the admin key and the seeded game are made, when the address
    /// cannot be listened on (another process holds the port): a start that failed only at its
    /// end left a new data directory behind, seeded, with a fresh key. The real listener binds
    /// at the end, once there is a server to hand connections to; a process that takes the
    /// port in between still makes the start fail there. Port 0 too: the host may be what is
    /// wrong (a name that does not resolve, an address the machine does not have).
    static func checkCanListen(host: String, port: Int) throws {
        let loop = try EventLoop()
        // Runs on failure too: a listener that failed to bind is closed through the loop.
        defer {
            loop.run()
            try? loop.close()
        }
        do {
            try TCPServer(loop: loop, host: host, port: port) { $0.close() }.close()
        } catch {
            throw listenError(error, host: host, port: port)
        }
    }

    /// An address this machine does not have is a typo or an old address (the router gave the
    /// machine another): said in those words, with the ones it has.
    /// A host name that resolves to nothing is said as such, not as the resolver's call.
    static func listenError(_ error: UVError, host: String, port: Int) -> any Error {
        let address = ServerConfig.addressText(host: host, port: port)
        let own = externalInterfaceAddresses()
        let (loopback, every) = host.contains(":") ? ("::1", "::") : ("127.0.0.1", "0.0.0.0")
        let theOnesItHas = own.isEmpty ? "" : " (it has \(own.joined(separator: ", ")), and \(loopback); \(every) is all of them)"
        if error.isAddressNotAvailable {
            return ServerError.startup("cannot listen on \(address): this machine has no address \(host)" + theOnesItHas)
        }
        if error.isUnknownHost {
            return ServerError.startup("cannot listen on \(address): no host is known by the name \(host)" + theOnesItHas)
        }
        return error
    }

    /// The log file, created its owner's alone; SQLite gives the WAL and its index the log's own
    /// mode. Existing files keep the mode someone chose for them, with a warning when others may
    /// read them.
    /// Returns whether the log was made new.
    @discardableResult
    static func makeLogFile(_ config: ServerConfig, logger: Logger) throws -> Bool {
        let path = config.databasePath, wal = config.databasePath + "-wal"
        // SQLite copies commits from the WAL into the log file only from time to time (past
        // thousands of pages, or at a clean shutdown): a weekend's whole game may live in the
        // WAL alone. A new, empty log beside it would make SQLite throw it away.
        if !FileManager.default.fileExists(atPath: path), EventStore.walHoldsCommits(logPath: path) {
            throw ServerError.startup("The event log \(path) is missing, but its write-ahead log \(wal) is there "
                + "and may hold every change of the game. Put the log file back beside it; to start a new game "
                + "instead, move \(wal) away first. Nothing was changed")
        }
        // Created with its final mode in one step (an empty file is a new database to SQLite):
        // no moment when another user could open it.
        let created: Bool
        do {
            created = try createEmptyFile(path, mode: 0o600)
        } catch {
            throw ServerError.startup("Cannot create the event log \(path): \(systemErrorText(error.code))")
        }
        // An empty file is a new database to SQLite, which would seed a new game in it. No launch
        // leaves one (SQLite writes the log's header as it first opens it, and a first launch that
        // cannot open its new log deletes it: `removeLogMadeEmpty`), so it is far more likely a
        // copy that failed or a full disk than a wish. The admin key file is not needed as a sign
        // of an earlier launch: a configured key leaves none.
        if !created, isEmptyFile(path) {
            let why = FileManager.default.fileExists(atPath: config.adminKeyPath)
                ? ", though \(config.adminKeyPath) is from an earlier launch: a copy that failed, or a full disk, may have emptied it"
                : ": a copy that failed, or a full disk, may have emptied it, or it was made by hand"
            throw ServerError.startup("The event log \(path) is empty (0 bytes)\(why). Put the log back from a backup; to start "
                + "a new game instead, delete \(path) first (bq serve makes it). Nothing was changed")
        }
        if created, FileManager.default.fileExists(atPath: config.adminKeyPath) {
            logger.warning("""
                the event log \(path) was missing and is made new, though \(config.adminKeyPath) is from an earlier \
                launch: if a game was played with this directory, its log was moved or deleted
                """)
        }
        for path in [config.dataDirectory, config.databasePath] {
            if let mode = Self.modeOthersMayRead(path) {
                logger.warning("\(path) may be read by other users (mode \(mode)); it holds PINs, gifts and dares: chmod go= it")
            }
        }
        return created
    }

    /// Undoes `makeLogFile` for a first launch that could not open the log it made (a full
    /// disk, say): the empty file left would make every later start refuse it as emptied.
    static func removeLogMadeEmpty(_ config: ServerConfig) {
        if isEmptyFile(config.databasePath) { try? FileManager.default.removeItem(atPath: config.databasePath) }
    }

    private static func isEmptyFile(_ path: String) -> Bool {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int == 0
    }
}
