import Domain
import EventLog
import Foundation
import JSON
import Logging
import Protocol
import UV
import Views
import POSIXSupport

/// The server: one loop thread owns every connection and every game; one writer thread owns the
/// SQLite connection that commits, a checkpointer thread a second one that copies the WAL back,
/// and the view rebuilder's thread a read-only third for `subscribe since`. The loop thread has
/// a fourth, opened first to check, migrate and seed the log, then used for short reads. Create
/// the server, `run()` it, on the same thread.
public final class GameServer {
    public static let version = "0.1.0"
    /// What `hello` names the server as.
    public static let serverName = "bq \(version)"

    public let config: ServerConfig
    let loop: EventLoop
    let logger: Logger
    let clock: @Sendable () -> Millis
    private let steadyClock: (@Sendable () -> UInt64)?
    private(set) var hubs: [String: GameHub] = [:]
    private let writer: EventWriter
    /// Held from start-up until `run()` returns, after the writer has closed the log.
    private let dataLock: DataDirectoryLock
    /// The loop thread's own read connection: `events`, and the stored replies that idempotent
    /// retries are answered with.
    let loopStore: EventStore
    /// Past views for `subscribe since`, off the loop thread.
    private(set) var rebuilder: ViewRebuilder!
    private var rebuildWakeup: AsyncWakeup!
    private var listener: TCPServer?
    private var wakeup: AsyncWakeup!
    private var inbox: Inbox<CommitOutcome>!
    private var turnHook: LoopTurnHook!
    /// Takes up the work of connections that used their share of a turn (`putOff`).
    private var putOffWork: LoopIdleWork!
    /// Connections with lines or reading put off to a later turn, in the order they ran out.
    private var putOffConnections: [ClientConnection] = []
    /// Counts loop turns (ended by `flushDirty`): each connection's share of the loop thread is
    /// counted per turn.
    private(set) var turn: UInt64 = 0
    /// A connection's share of the loop thread in one turn, reading and starting its lines;
    /// at least one line starts whatever it costs. A few hundred commands, or one `events` page
    /// of a thousand events, at a time; the load benchmarks' connections never reach it.
    static let turnBudgetNanoseconds: UInt64 = 2_000_000
    private var signals: [SignalWatcher] = []
    private var idleTimer: LoopTimer?
    /// Reports the tail of a burst of throttled warnings (`LogThrottle`).
    private var logTimer: LoopTimer?
    /// Starts the rebuilds of resumes waiting for their viewer's budget (`GameHub+Resumes`);
    /// runs only while some wait.
    private var resumeTimer: LoopTimer?
    private var resumeTimerRunning = false
    private var stopWakeup: AsyncWakeup!
    private var connections: [ObjectIdentifier: ClientConnection] = [:]
    private var dirty: [ClientConnection] = []
    /// Bytes gathered this turn for the connections' single writes, not yet handed to them.
    var gatheredBytes = 0
    /// Everything owed to all connections, gathered or queued, passes `max_total_queued_bytes`.
    var isOwedTooMuchInAll: Bool { gatheredBytes + loop.queuedWriteBytes > config.limits.maxTotalQueuedBytes }
    /// Commands decided this loop turn, for the writer in one hand-over.
    private var appendsThisTurn: [(request: AppendRequest, game: String, seq: UInt64)] = []
    private var nextConnectionNumber = 0
    /// Looked at with the log reports: a queue for peers that fell by 32 MiB gives the freed
    /// memory back to the system (`returnFreeMemoryToTheSystem`), at most every 10 s.
    private var queueDrain = QueueDrainWatch(threshold: 32 << 20)
    /// Commits waiting on a writer that has stopped finishing them, said in the log.
    private var writerStall = WriterStallWatch(threshold: 5_000)
    /// Commits failed since the last one that succeeded, of each kind.
    private var outage: (failed: Int, uncertain: Int) = (0, 0)
    /// Open connections per peer network (`TCPConnection.peerNetwork`), loopback peers aside.
    private var connectionsPerNetwork: [String: Int] = [:]
    /// Warnings a peer or a failing disk can make happen as often as it likes, each kind said
    /// at most once per interval with the count of the rest (`LogThrottle`).
    var throttled = ThrottledWarnings()
    let adminKey: String
    /// Wrong admin keys per peer network (`TCPConnection.peerNetwork`), when the key is short
    /// enough to guess (a configured one may be; the generated one is 256 bits, and then nothing
    /// is counted). Per network, so that a guesser elsewhere cannot keep the organizer's console
    /// out; a minute at most.
    var adminKeyGuard = GuessGuard(maxLockout: 60 * 1000)
    /// Keys at least this long (in characters) are beyond guessing by trying them all.
    static let guessableAdminKeyLength = 32
    let adminKeyIsGuessable: Bool
    private(set) var shuttingDown = false
    private var finished = false
    private var graceTimer: LoopTimer?
    /// How long `bye` may take to reach slow peers at shutdown before their connections are cut.
    private let shutdownGraceMilliseconds = 3_000

    /// The port the server listens on (the real one when the config asked for 0).
    public private(set) var port = 0
    /// Thread-safe: asks the loop to shut down as SIGTERM would.
    public private(set) var stopper: ServerStopper!

    /// `clock` stamps events (wall time); `steadyClock`, in milliseconds from any start, times
    /// idle connections and guess lockouts (which a wall clock stepped by NTP or a laptop's
    /// sleep would stretch or lift), and is the loop's monotonic clock unless a test brings its own.
    public init(config: ServerConfig, logger: Logger, clock: @escaping @Sendable () -> Millis = GameServer.wallClock,
                steadyClock: (@Sendable () -> UInt64)? = nil) throws {
        self.config = config
        self.logger = logger
        self.clock = clock
        self.steadyClock = steadyClock
        let seed = GameLoader.Seed(path: config.seedPath, named: config.seedIsNamed)
        try Self.checkSeedForFirstLaunch(seed, config: config)
        try Self.makeDataDirectory(config)
        dataLock = try DataDirectoryLock(directory: config.dataDirectory)
        if !dataLock.holdsDirectory {
            let file = DataDirectoryLock.fileName
            logger.notice("this file system cannot lock the data directory itself: deleting \(file) would let a second server start")
        }
        try Self.checkCanListen(host: config.host, port: config.port)
        Self.warnAboutSynchronous(config.synchronous, logger: logger)
        let keyFromAnEarlierLaunch = FileManager.default.fileExists(atPath: config.adminKeyPath)
        let walLeftBehind = EventStore.walHoldsCommits(logPath: config.databasePath)
        // Before the log is made or opened: a start refused after would leave an empty log (which
        // the next start takes for an emptied one) or one migrated for good.
        try Secrets.refuseUnusableKeyFile(configured: config.adminKey, path: config.adminKeyPath)
        let logIsNew = try Self.makeLogFile(config, logger: logger)
        let store: EventStore
        do {
            store = try Self.openLog(config)
        } catch {
            if logIsNew { Self.removeLogMadeEmpty(config) }
            throw error
        }
        // After the log opens, so that a refused log leaves no new key behind: a key file is
        // what later launches take as the sign that a game was played here.
        do {
            adminKey = try Self.provideAdminKey(config, logger: logger)
        } catch {
            store.closeLeavingFilesAsFound()
            throw error
        }
        adminKeyIsGuessable = adminKey.codePointCount < Self.guessableAdminKeyLength
        if adminKeyIsGuessable {
            logger.warning("""
                the admin key has \(adminKey.codePointCount) characters, few enough to guess: wrong keys close the console to \
                their address for a while, the organizer's own included; a key of \(Self.guessableAdminKeyLength) \
                characters or more is never closed
                """)
        }
        if let from = store.migratedFrom {
            logger.notice("""
                the event log was upgraded from schema \(from) to \(store.schemaVersion): \
                a bq older than this one can no longer open it (a bq backup taken before the upgrade can)
                """)
        }
        let loaded: [String: GameLoader.Loaded]
        do {
            loaded = try Self.loadGames(config, from: store, seed: seed, now: clock(),
                                        playedBefore: keyFromAnEarlierLaunch && !logIsNew, logger: logger)
        } catch {
            // A game that cannot be replayed (a backup put back beside another log's WAL can
            // pass SQLite's own check and fail here): a refused log is not rewritten.
            store.closeLeavingFilesAsFound()
            throw error
        }
        // From here this connection reads on the loop thread (`events`, replays), which must
        // never sleep on a lock: a read that finds the log busy is answered `unavailable` at once
        // rather than holding every connection's updates back for the busy timeout.
        store.setBusyTimeout(milliseconds: 0)
        loopStore = store
        writer = try EventWriter(path: config.databasePath, options: Self.storeOptions(config, checkIntegrity: false),
                                 maxBatchRequests: config.maxBatchRequests, onCheckpoint: { [logger] in Self.log($0, to: logger) })
        loop = try EventLoop()
        for (game, state) in loaded {
            hubs[game] = GameHub(name: game, state: state.state, idempotency: state.idempotency,
                                 lastSnapshotVersion: state.snapshotVersion,
                                 distrustedSnapshots: Set(state.distrusted.map { Int($0.version) }), server: self)
        }
        do {
            try startLoopHandles()
        } catch {
            abandonStart()
            throw error
        }
        if store.walFramesLost > 0 {
            // SQLite reads a WAL up to its first frame that fails its checksum, and says nothing.
            logger.error("""
                the last run's -wal lacks at least \(store.walFramesLost) frames (page writes) of its newest commits that its \
                index counted (cut short since, or lost to a power cut under synchronous normal or off): they are lost, and \
                the games are served as they were before them (run bq verify to check the rest)
                """)
        } else if walLeftBehind {
            // A clean stop copies the WAL into the main file and deletes it.
            logger.notice("""
                the last run left its -wal (it did not stop cleanly, a reader such as bq verify had the log open as it \
                stopped, or its stop could not copy it, as on a full disk): its commits were read with the log
                """)
        }
        let games = hubs.sorted { $0.key < $1.key }.map { "\($0.key) at version \($0.value.durable.version)" }.joined(separator: ", ")
        logger.notice("serving \(games) from \(config.databasePath) on \(ServerConfig.addressText(host: config.host, port: port))")
    }

    /// A start that failed half-way (the port taken, say) gives back what it had opened: the
    /// handles close and the loop runs their close callbacks, so a process that goes on (a
    /// test, another attempt) keeps no signal watcher of a loop that will never run.
    private func abandonStart() {
        listener?.close()
        listener = nil
        rebuilder?.stop()
        closeLoopHandles()
        loop.run()
        try? loop.close()
        writer.shutdown()
        loopStore.close()
        dataLock.release()
    }

    /// Closes the server's own handles on the loop (not the listener, not the connections), at
    /// shutdown and after a failed start alike: a handle left open keeps the loop running.
    private func closeLoopHandles() {
        wakeup?.close()
        rebuildWakeup?.close()
        stopWakeup?.close()
        turnHook?.close()
        putOffWork?.close()
        for signal in signals { signal.close() }
        idleTimer?.close()
        logTimer?.close()
        resumeTimer?.close()
    }

    /// The signals that stop the server cleanly, with their names for the log.
    public static let stopSignals: [(Int32, String)] = [(SIGTERM, "SIGTERM"), (SIGINT, "SIGINT"), (SIGHUP, "SIGHUP")]

    public static let wallClock: @Sendable () -> Millis = { Millis((Date().timeIntervalSince1970 * 1000).rounded()) }

    private func startLoopHandles() throws {
        wakeup = try AsyncWakeup(loop: loop) { [unowned self] in self.drainCompletions() }
        inbox = Inbox(wakeup: wakeup.sender)
        turnHook = try LoopTurnHook(loop: loop) { [unowned self] in self.flushDirty() }
        putOffWork = try LoopIdleWork(loop: loop) { [unowned self] in self.takeUpPutOffWork() }
        stopWakeup = try AsyncWakeup(loop: loop) { [unowned self] in self.beginShutdown(reason: "stop requested") }
        stopper = ServerStopper(wakeup: stopWakeup.sender)
        // SIGHUP: the terminal the organizer started the server from was closed (a laptop's
        // lid, an ssh session that dropped). The server stops as cleanly as on SIGTERM, rather
        // than dying at once with its clients told nothing; unless it was started to outlive
        // its terminal (`nohup`, which ignores SIGHUP), which a watcher would undo.
        for (signal, name) in Self.stopSignals where !(signal == SIGHUP && signalIsIgnored(SIGHUP)) {
            signals.append(try SignalWatcher(loop: loop, signal: signal) { [unowned self] _ in
                self.beginShutdown(reason: name, bySignal: true)
            })
        }
        if config.limits.idleTimeoutSeconds > 0 {
            let timer = try LoopTimer(loop: loop)
            timer.start(afterMilliseconds: 1000, repeatMilliseconds: 1000) { [unowned self] in self.closeIdleConnections() }
            idleTimer = timer
        }
        let reporter = try LoopTimer(loop: loop)
        reporter.start(afterMilliseconds: 10_000, repeatMilliseconds: 10_000) { [unowned self] in
            self.reportThrottledLogs()
            self.returnMemoryFreedByPeers()
        }
        logTimer = reporter
        resumeTimer = try LoopTimer(loop: loop)
        rebuildWakeup = try AsyncWakeup(loop: loop) { [unowned self] in self.drainRebuilds() }
        do {
            rebuilder = try ViewRebuilder(path: config.databasePath, options: Self.storeOptions(config, checkIntegrity: false),
                                          logger: logger, wakeup: rebuildWakeup.sender)
        } catch {
            throw ServerError.startup("Cannot open the event log \(config.databasePath) for resumes: \(error)"
                + Self.fullDiskHint(config.dataDirectory))
        }
        do {
            listener = try TCPServer(loop: loop, host: config.host, port: config.port) { [unowned self] tcp in self.accept(tcp) }
        } catch {
            throw Self.listenError(error, host: config.host, port: config.port)
        }
        listener?.onAcceptError = { [unowned self] error in self.acceptFailed(error) }
        port = listener!.localPort
    }

    /// Runs until shutdown has finished and every handle is closed.
    public func run() {
        loop.run()
        do {
            try loop.close()
        } catch {
            logger.error("loop closed with handles open", metadata: ["error": "\(error)"])
        }
        dataLock.release()
    }

    // MARK: Connections

    private func accept(_ tcp: TCPConnection) {
        guard !shuttingDown else { return tcp.close() }
        guard connections.count < config.limits.maxConnections else {
            let most = config.limits.maxConnections
            if let count = throttled.record(.serverFull, now: loop.nowMilliseconds) {
                logger.warning("connection refused: server full (max_connections \(most))",
                               metadata: ["peer": "\(tcp.peerDescription)", "since_last_logged": "\(count)"])
            }
            return refuse(tcp, "The server is full (\(most) connection\(most == 1 ? "" : "s")); try again later")
        }
        let network = tcp.peerIsLoopback ? nil : tcp.peerNetwork
        if let network {
            let most = config.limits.maxConnectionsPerAddress
            guard connectionsPerNetwork[network, default: 0] < most else {
                if let count = throttled.record(.crowdedNetwork, now: loop.nowMilliseconds) {
                    logger.warning("connection refused: too many from one address (max_connections_per_address \(most))",
                                   metadata: ["peer": "\(tcp.peerDescription)", "since_last_logged": "\(count)"])
                }
                return refuse(tcp, "Too many connections from \(network) (\(most) at once); close some and try again")
            }
            connectionsPerNetwork[network, default: 0] += 1
        }
        nextConnectionNumber += 1
        let connection = ClientConnection(number: nextConnectionNumber, tcp: tcp, server: self, hub: defaultHub, countedNetwork: network)
        connections[ObjectIdentifier(connection)] = connection
        connection.start()
    }

    /// `hello` is the first line of every connection, a refused one included: a client reads it
    /// before anything else, and then learns why it is being closed.
    private func refuse(_ tcp: TCPConnection, _ message: String) {
        tcp.write(hello(defaultHub))
        tcp.write(Wire.error(id: nil, ProtocolError(.unavailable, message)))
        // Briefly: a crowd knocking at a full server must not hold its descriptors for long.
        tcp.closeAfterFlush(lingerMilliseconds: min(250, config.lingerMilliseconds))
    }

    /// The first line of every connection.
    func hello(_ hub: GameHub) -> [UInt8] {
        let idle = config.limits.idleTimeoutSeconds
        return Wire.hello(server: Self.serverName, game: hub.name, version: hub.durable.version,
                          idleTimeoutSeconds: idle > 0 ? idle : nil)
    }

    /// A connection the kernel gave up on before it was ours (out of descriptors, say). Logged
    /// once per burst: a storm of them must not flood the log.
    private func acceptFailed(_ error: UVError) {
        guard let count = throttled.record(.acceptFailed, now: loop.nowMilliseconds) else { return }
        logger.warning("could not accept a connection", metadata: ["error": "\(error)", "since_last_logged": "\(count)"])
    }

    /// Some hub holds a resume until its viewer's budget refills: look every 10 ms (the budget's
    /// grain at its default of 100 a second) until none waits.
    func resumesWaiting() {
        guard !resumeTimerRunning, let resumeTimer else { return }
        resumeTimerRunning = true
        resumeTimer.start(afterMilliseconds: 10, repeatMilliseconds: 10) { [unowned self] in
            for hub in self.hubs.values { hub.startDeferredRebuilds() }
            if !self.hubs.values.contains(where: { !$0.deferredResumes.isEmpty }) {
                self.resumeTimer?.stop()
                self.resumeTimerRunning = false
            }
        }
    }

    private func drainRebuilds() {
        for finished in rebuilder.takeFinished() {
            if let passedOver = finished.passedOver, let count = throttled.record(.unusableSnapshot, now: loop.nowMilliseconds) {
                logger.warning("a resume replayed from the first event: \(passedOver) (run bq verify to look for damage)",
                               metadata: ["game": "\(finished.game)", "since_last_logged": "\(count)"])
            }
            hubs[finished.game]?.rebuilt(finished)
        }
    }

    /// A commit the writer could not make. A failing disk fails every batch: logged once per
    /// burst, with the count of the rest, like the peers' floods above (those of unknown
    /// outcome apart, so that the plain failures cannot hide them).
    func commitFailed(game: String, error: StorageError, outcomeUnknown: Bool) {
        if outcomeUnknown { outage.uncertain += 1 } else { outage.failed += 1 }
        let now = loop.nowMilliseconds
        guard let count = throttled.record(outcomeUnknown ? .commitUncertain : .commitFailed, now: now) else { return }
        let metadata: Logger.Metadata = ["game": "\(game)", "error": "\(error)", "since_last_logged": "\(count)"]
        // A full disk (SQLite may call it an I/O error, when the WAL's index cannot grow) needs
        // space, not a new disk; commits succeed again by themselves once there is room.
        let full = Self.fullDiskHint(config.dataDirectory, advice: "free some space; commits succeed again once there is room")
        if outcomeUnknown {
            logger.critical("a commit failed at the disk and may reappear after a crash\(full.isEmpty ? "; check the disk" : full)",
                            metadata: metadata)
        } else {
            logger.error("commit failed\(full)", metadata: metadata)
        }
    }

    /// The first commit after failed ones: said, so that the log does not end on the failures
    /// while the game has long been saving again. Failures not yet logged are counted in it.
    private func commitsSucceedAgain() {
        logger.notice("commits succeed again", metadata: ["failed": "\(outage.failed)", "outcome unknown": "\(outage.uncertain)"])
        outage = (0, 0)
        throttled.forgetUnlogged(.commitFailed)
        throttled.forgetUnlogged(.commitUncertain)
    }

    /// A player's change refused over `changes_per_second`: a runaway script, or a player who
    /// asks the organizer why the game said "rate limited".
    func noteChangeOverBudget(by character: String, game: String) {
        if let count = throttled.record(.changeOverBudget, now: loop.nowMilliseconds) {
            logger.warning("\(character)'s change refused over changes_per_second (\(config.limits.changesPerSecond))",
                           metadata: ["game": "\(game)", "since_last_logged": "\(count)"])
        }
    }

    func noteRequestOverBudget(from connection: ClientConnection) {
        if let count = throttled.record(.requestOverBudget, now: loop.nowMilliseconds) {
            logger.warning("request refused over requests_per_second (\(config.limits.requestsPerSecond))",
                           metadata: ["peer": "\(connection.peer)", "since_last_logged": "\(count)"])
        }
    }

    /// `atStop`: the last report, of every count not yet said, however recent.
    private func reportThrottledLogs(atStop: Bool = false) {
        let now = loop.nowMilliseconds
        if !atStop, let stuck = writerStall.newStall(now: now) {
            logger.warning("""
                no commit has finished for \(stuck / 1000) s: the disk holding the log does not answer, or another process \
                holds the log; players' changes wait, and nothing they were told was made is lost
                """, metadata: ["waiting": "\(writerStall.waiting)"])
        }
        for (kind, count) in throttled.takeUnlogged(now: atStop ? nil : now) {
            logger.log(level: kind.level, kind.rest, metadata: ["since_last_logged": "\(count)"])
        }
    }

    /// Ten seconds on, the connections that held the queue are gone or have read it, and their
    /// memory is free: the trim, some milliseconds of this thread, comes once per such burst.
    private func returnMemoryFreedByPeers() {
        let queued = loop.queuedWriteBytes
        guard queueDrain.hasDrainedMuch(queuedNow: queued) else { return }
        let returned = returnFreeMemoryToTheSystem()
        logger.debug("memory held for peers freed", metadata: ["queued_now": "\(queued)", "returned": "\(returned)"])
    }

    func connectionClosed(_ connection: ClientConnection) {
        connection.detach()
        connections[ObjectIdentifier(connection)] = nil
        if let network = connection.countedNetwork {
            let left = connectionsPerNetwork[network, default: 1] - 1
            connectionsPerNetwork[network] = left > 0 ? left : nil
        }
        if finished && connections.isEmpty {
            graceTimer?.close()
            graceTimer = nil
        }
    }

    func markDirty(_ connection: ClientConnection) { dirty.append(connection) }

    /// `connection` has used its share of this turn with work left: it is taken up once the
    /// other sockets have been polled, and the loop does not wait for I/O meanwhile.
    func putOff(_ connection: ClientConnection) {
        putOffConnections.append(connection)
        putOffWork.start()
    }

    private func takeUpPutOffWork() {
        let batch = putOffConnections
        putOffConnections = []
        putOffWork.stop()
        for connection in batch { connection.takeUpPutOffWork() }
    }

    /// One write per connection per loop turn: replies and patches gathered. Lines a
    /// connection held back for its unread output may start once that is written, and what
    /// they produce (replies, commands for the writer) goes out in this same turn: the loop
    /// may block for I/O right after.
    private func flushDirty() {
        repeat {
            handAppendsToWriter()
            let batch = dirty
            dirty = []
            for connection in batch { connection.flush() }
            for connection in batch { connection.startHeldLines() }
        } while !dirty.isEmpty
        handAppendsToWriter()
        if loop.queuedWriteBytes > config.limits.maxTotalQueuedBytes { closeConnectionsOwingTheMost() }
        queueDrain.note(queued: loop.queuedWriteBytes)
        turn &+= 1
    }

    /// Memory held for peers that do not take what they are sent is bounded per connection
    /// (`max_queued_bytes`), and in all here: many such peers (from many addresses, or this
    /// machine) would otherwise hold as much as they like. The ones owing the most are closed,
    /// without `bye` (they would not read it), until the rest are within the bound; a real
    /// client that was only slow reconnects and resumes, its changes resent under their keys.
    /// A subscriber is not closed for being slow (the contract promises it): what it owes stops
    /// growing, since nothing past a backlog is sent to it or started for it meanwhile. One that
    /// owes over three times its bound and still has requests waiting to start is closed like
    /// any client that asks for more than it reads: its patches stop at the bound, so most of
    /// that is replies it asked for. (Bytes alone would not tell: one snapshot, a whole view, may
    /// be larger than a small bound.) What subscribers owe still counts in the total, so that
    /// others are closed in their place; but only a connection owed more than its own bound,
    /// which a client that reads what it asks for does not reach: subscribers that never read
    /// can keep the total over for long, and a reader's momentary backlog is no reason to close it.
    private func closeConnectionsOwingTheMost() {
        let budget = config.limits.maxTotalQueuedBytes
        let bound = config.limits.maxQueuedBytes
        let owing = connections.values.filter {
            !$0.isGivingUpWrites
                && ($0.isSubscribed ? $0.queuedWriteBytes > 3 * bound && $0.hasLinesWaiting : $0.queuedWriteBytes > bound)
        }
        var total = loop.queuedWriteBytes
        for connection in owing.sorted(by: { $0.queuedWriteBytes > $1.queuedWriteBytes }) where total > budget {
            total -= connection.queuedWriteBytes
            if let count = throttled.record(.memoryShed, now: loop.nowMilliseconds) {
                logger.warning("connection closed: more than max_total_queued_bytes (\(budget)) waits for clients that do not read",
                               metadata: ["peer": "\(connection.peer)", "owed": "\(connection.queuedWriteBytes)",
                                          "since_last_logged": "\(count)"])
            }
            connection.closeNow()
        }
    }

    /// Now, for idle timing and guess lockouts: never steps back or jumps with the wall clock.
    var steadyNow: UInt64 { steadyClock?() ?? loop.nowMilliseconds }

    private func closeIdleConnections() {
        let limit = UInt64(config.limits.idleTimeoutSeconds) * 1000
        let now = steadyNow
        for connection in connections.values where now &- connection.lastActivity > limit && !connection.hasRequestsInFlight {
            connection.sayGoodbye(.idleTimeout)
        }
    }

    // MARK: The writer

    /// Queues a command's events for the writer; they are handed over at the end of this loop
    /// turn together with everything else the turn decided.
    func queueForWriter(_ request: AppendRequest, game: String, seq: UInt64) {
        appendsThisTurn.append((request, game, seq))
    }

    /// The turn's outcomes come back together: the last one wakes the loop, and the ones before
    /// it wait unseen until then. So what a turn decided is published in one turn, with one view
    /// update and one patch per viewer. A turn larger than one transaction (`max_batch_requests`)
    /// is answered when its last transaction is on disk.
    private func handAppendsToWriter() {
        guard let last = appendsThisTurn.indices.last else { return }
        writerStall.handed(appendsThisTurn.count, now: loop.nowMilliseconds)
        let inbox = self.inbox!
        writer.submit(appendsThisTurn.indices.map { index in
            let (request, game, seq) = appendsThisTurn[index]
            let hasMore = index < last
            return (request, { result in inbox.post(CommitOutcome(game: game, seq: seq, result: result), hasMore: hasMore) })
        })
        appendsThisTurn.removeAll(keepingCapacity: true)
    }

    private func drainCompletions() {
        var touched: [ObjectIdentifier: GameHub] = [:]
        var last: GameHub?
        for item in inbox.takeAll() {
            if let stuck = writerStall.cameBack(now: loop.nowMilliseconds) {
                logger.notice("commits finish again", metadata: ["stuck_for": "\(stuck / 1000) s"])
            }
            // Consecutive completions are often of one game: a string compare spares the lookup.
            if last?.name != item.game { last = hubs[item.game] }
            guard let hub = last else { continue }
            if outage != (0, 0), case .committed = item.result { commitsSucceedAgain() }
            hub.completed(seq: item.seq, result: item.result)
            touched[ObjectIdentifier(hub)] = hub
        }
        for hub in touched.values { hub.publish() }
        if shuttingDown { finishShutdownIfIdle() }
    }

    // MARK: Shutdown

    /// Stop accepting and reading; finish the commands in flight; then `bye` to everyone.
    /// `bySignal`: a signal to the process asked for it (not `ServerStopper`, which a process
    /// hosting the server, such as the tests, uses).
    func beginShutdown(reason: String, bySignal: Bool = false) {
        guard !shuttingDown else { return }
        shuttingDown = true
        // A stop waits for the commits under way; a disk that hangs (a dead network mount)
        // would hold it for ever. A second Ctrl-C or SIGTERM then stops the process at once, by
        // the signal's own action: nothing is lost that a client was told was made (the crash
        // tests kill the server mid-commit), and the unanswered changes are retried by key.
        for signal in signals { signal.close() }
        signals = []
        // A closing terminal sends its hang-up twice (the shell's and the kernel's): the second
        // is no request to stop at once, and would otherwise cut the clean stop short. Only in
        // a process that signals stop: the setting is the whole process's.
        if bySignal { ignoreSignal(SIGHUP) }
        logger.notice("shutting down (a second Ctrl-C or SIGTERM stops at once)", metadata: ["reason": "\(reason)"])
        listener?.close()
        listener = nil
        for connection in connections.values { connection.stopReading() }
        finishShutdownIfIdle()
    }

    private func finishShutdownIfIdle() {
        guard !finished, !hubs.values.contains(where: \.hasPending) else { return }
        finished = true
        for hub in hubs.values { hub.refuseHeldResumes(ProtocolError(.unavailable, "The server is shutting down")) }
        for connection in connections.values {
            connection.startHeldLines()
            connection.sayGoodbye(.serverShutdown)
        }
        writer.shutdown()
        rebuilder.stop()
        // The last of the log's connections: its close copies the WAL into the main file.
        if let failure = loopStore.closeAfterCopyingWAL() {
            let path = config.databasePath
            logger.error("""
                the stop could not copy the -wal into \(path)\(Self.fullDiskHint(config.dataDirectory, advice: "free some space")): \
                the game is whole, but lives partly in \(path)-wal: keep the two files together (the next start reads both, \
                and its clean stop copies the -wal)
                """, metadata: ["error": "\(failure)"])
        }
        // The log is closed (its threads joined): another server may take the directory now,
        // while the goodbyes below still linger on slow connections.
        dataLock.release()
        closeLoopHandles()
        // A peer that never reads would keep its connection (and so the loop) open forever.
        if !connections.isEmpty, let timer = try? LoopTimer(loop: loop) {
            timer.start(afterMilliseconds: UInt64(shutdownGraceMilliseconds)) { [unowned self] in
                for connection in self.connections.values { connection.closeNow() }
                self.graceTimer?.close()
                self.graceTimer = nil
            }
            graceTimer = timer
        }
        reportThrottledLogs(atStop: true)
        logger.notice("stopped")
    }
}

/// The thread-safe way to stop a server running on another thread.
public struct ServerStopper: Sendable {
    let wakeup: AsyncWakeup.Sender

    public func stop() { wakeup.send() }
}
