import Domain
import JSON
import POSIXSupport
import Protocol
import UV

/// One TCP client on the loop thread: framing, limits, sign-in, reply order and
/// the outbound buffer that is written once per loop turn.
final class ClientConnection {
    let number: Int
    private let tcp: TCPConnection
    private unowned let server: GameServer
    private var framer: LineFramer
    private(set) var identity: Identity?
    private(set) var hub: GameHub
    private var subscription = Subscription.none
    private var pipeline: RequestPipeline
    private var requestTokens: TokenBucket
    private(set) var lastActivity: UInt64
    private var isPumping = false
    private var outbound: [UInt8] = []
    private var phase = Phase.open
    private var reading = Reading.on
    /// The loop thread's time taken by this connection's lines in a loop turn (`GameServer.turn`):
    /// past `GameServer.turnBudgetNanoseconds` it reads and starts nothing more until a later
    /// turn, so that one peer's costly lines (a script pipelining `events`, lines of JSON slow
    /// to parse) cannot keep every other player waiting for the loop.
    private var turnWork = (turn: UInt64(0), nanoseconds: UInt64(0))
    /// It has work left for a later turn, and the server knows (`GameServer.putOff`).
    private var awaitsLaterTurn = false

    /// The peer network this connection counts against (nil for a loopback peer, not limited).
    let countedNetwork: String?

    init(number: Int, tcp: TCPConnection, server: GameServer, hub: GameHub, countedNetwork: String?) {
        self.number = number
        self.countedNetwork = countedNetwork
        self.tcp = tcp
        self.server = server
        self.hub = hub
        self.framer = LineFramer(maxLineBytes: server.config.limits.maxLineBytes)
        self.pipeline = RequestPipeline(maxBadLines: server.config.limits.maxBadLines)
        self.requestTokens = TokenBucket(perSecond: server.config.limits.requestsPerSecond, now: server.loop.nowMilliseconds)
        self.lastActivity = server.steadyNow
    }

    var viewer: Viewer? {
        if case .none = subscription { return nil }
        return identity?.viewer
    }
    /// The version of the view this subscriber was last sent; nil when it is not subscribed, or
    /// while its patches are held.
    var sentVersion: Int? {
        if case .live(let version) = subscription { return version }
        return nil
    }
    /// Subscribed, live or holding its patches: the contract promises it is not closed for being
    /// slow (`GameServer.closeConnectionsOwingTheMost` says when it is closed all the same).
    var isSubscribed: Bool {
        if case .none = subscription { return false }
        return true
    }
    /// Over its queued-bytes bound: its patches wait for a snapshot.
    var isHoldingPatches: Bool {
        if case .holding = subscription { return true }
        return false
    }
    /// Hanging up, or gone: nothing more is sent or answered.
    var isClosing: Bool { phase >= .closing }
    var peer: String { tcp.peerDescription }
    /// Where the peer speaks from, as one party counts (`TCPConnection.peerNetwork`).
    var peerNetwork: String { tcp.peerNetwork }

    func start() {
        tcp.onRead = { [unowned self] bytes in self.received(bytes) }
        tcp.onDrain = { [unowned self] in self.drained() }
        tcp.onClose = { [unowned self] _ in self.server.connectionClosed(self) }
        tcp.onEOF = { [unowned self] in self.peerFinishedSending() }
        tcp.setNoDelay(true)
        // A peer gone without a word would otherwise hold its connection (and its share of the
        // limits) until it is needed; the idle timeout is off by default.
        tcp.setKeepAlive(idleSeconds: 60)
        queue(server.hello(hub))
        tcp.startReading()
    }

    // MARK: Input

    private func received(_ bytes: [UInt8]) {
        guard !isClosing else { return }
        lastActivity = server.steadyNow
        var began = monotonicNanoseconds()
        let lines = framer.feed(bytes)
        for line in lines {
            guard !isClosing else { return }
            switch line {
            case .tooLong:
                charge(since: began)
                accept(.refusal(nil, ProtocolError(.lineTooLong, "Line longer than \(server.config.limits.maxLineBytes) bytes")))
            case .line(let bytes):
                let request = incoming(line: bytes)
                charge(since: began)
                accept(request)
            }
            began = monotonicNanoseconds()
        }
        charge(since: began)
        pauseReadingIfBusy()
    }

    // MARK: Sharing the loop thread

    private var hasTurnBudget: Bool {
        // At shutdown every line is answered at once (`unavailable`, cheaply), before `bye`.
        server.shuttingDown || turnWork.turn != server.turn || turnWork.nanoseconds < GameServer.turnBudgetNanoseconds
    }

    /// Counts the loop thread's time since `start` against this turn's budget.
    private func charge(since start: UInt64) {
        let spent = monotonicNanoseconds() &- start
        if turnWork.turn == server.turn {
            turnWork.nanoseconds &+= spent
        } else {
            turnWork = (server.turn, spent)
        }
    }

    /// Out of this turn's budget with work left: the server takes it up in a later turn.
    private func putOff() {
        guard !awaitsLaterTurn, !isClosing else { return }
        awaitsLaterTurn = true
        server.putOff(self)
    }

    /// A later turn: starts what waited, and reads again.
    func takeUpPutOffWork() {
        awaitsLaterTurn = false
        guard !isClosing else { return }
        pump()
    }

    private func incoming(line: [UInt8]) -> Incoming {
        switch RequestDecoder.decode(line: line, maxDepth: server.config.limits.maxJSONDepth) {
        case .failure(let failure):
            return .refusal(failure.id, failure.error)
        case .success(let request):
            // Parsed first so that even a refusal for speed carries the request's id.
            guard takeToken() else {
                return .refusal(request.id, ProtocolError(.rateLimited, "More than \(server.config.limits.requestsPerSecond) requests per second"))
            }
            return .request(request)
        }
    }

    private func accept(_ line: Incoming) {
        pipeline.arrive(line)
        pump()
    }

    /// Lines wait unstarted, and reading pauses, while this much output waits for the peer to
    /// read it: a client that pipelines reads and never reads their replies would otherwise have
    /// every line of a read answered, a whole view each, into memory. They start again when the
    /// socket drains. At shutdown every line is answered (`unavailable`, a few bytes) before `bye`.
    /// While everything owed to all connections passes `max_total_queued_bytes`, a connection
    /// owed anything starts nothing more until it is written: many peers that do not read
    /// would otherwise each gather their own bound within one turn, before any is closed.
    private var isOwedTooMuch: Bool {
        let owed = outbound.count + tcp.queuedWriteBytes
        return !server.shuttingDown && (owed > server.config.limits.maxQueuedBytes * 4 || owed > 0 && server.isOwedTooMuchInAll)
    }

    /// Starts held lines, and reads again, once the output that held them has gone to a socket
    /// that took it whole: no drain callback comes then. Called after the turn's writes, and
    /// before `bye` at shutdown.
    func startHeldLines() {
        if !isClosing, pipeline.waitingCount > 0 || reading != .on, !isOwedTooMuch { pump() }
    }

    /// Requests read and not yet started (held back while it is owed too much, say).
    var hasLinesWaiting: Bool { pipeline.waitingCount > 0 }

    /// Owed a reply: such a connection is waiting on the server, not idle. Lines held because
    /// the peer does not read what it is owed do not count: that peer is idle.
    var hasRequestsInFlight: Bool { pipeline.unsentReplyCount > 0 || (pipeline.waitingCount > 0 && !isOwedTooMuch) }

    /// A token from this connection's request budget; none left is said in the log (throttled).
    private func takeToken() -> Bool {
        guard requestTokens.take(now: server.loop.nowMilliseconds) else {
            server.noteRequestOverBudget(from: self)
            return false
        }
        return true
    }

    // MARK: Replies

    /// Fills a reply slot; whatever is now next in order goes out.
    func fill(slot: Int, with bytes: [UInt8], error: ErrorCode?) {
        guard !isClosing else { return }
        // The first answer stands: a second one is a server bug, said in the log rather than
        // sent (the client has its one reply) or made fatal (a weekend's game on a debug build).
        guard pipeline.fill(slot: slot, with: bytes, error: error) else {
            return server.logger.error("reply slot answered twice, or never handed out: a bug",
                                       metadata: ["connection": "\(number)", "slot": "\(slot)"])
        }
        pump()
    }

    /// Sends ready replies in order and starts held lines that may now start, until
    /// neither makes progress. Re-entrant calls (a request answered while it is being
    /// started) return at once: the outer loop picks their work up.
    private func pump() {
        guard !isPumping else { return }
        isPumping = true
        defer { isPumping = false }
        var progress = true
        while progress && !isClosing {
            progress = false
            while let reply = pipeline.nextReply() {
                queue(reply)
                progress = true
            }
            if pipeline.hasTooManyBadLines { return sayGoodbye(.tooManyErrors) }
            while !isClosing, !isOwedTooMuch {
                guard hasTurnBudget else {
                    if pipeline.waitingCount > 0 { putOff() }
                    break
                }
                guard let started = pipeline.startNext() else { break }
                if case .request(let request, let slot) = started {
                    let began = monotonicNanoseconds()
                    server.handle(request, from: self, target: ReplyTarget(connection: self, slot: slot))
                    charge(since: began)
                }
                progress = true
            }
        }
        hangUpIfPeerIsDone()
        resumeReadingIfIdle()
    }

    /// The peer half-closed: it still gets every reply it is owed, then the connection closes.
    private func peerFinishedSending() {
        // The end of the stream also ends a last line sent without its newline
        // (`printf ... | nc` does that): it is answered like any other.
        if framer.bufferedByteCount > 0 { received([0x0A]) }
        phase.advance(to: .peerFinished)
        hangUpIfPeerIsDone()
    }

    private func hangUpIfPeerIsDone() {
        if phase == .peerFinished, pipeline.isEmpty { hangUp() }
    }

    /// What is queued goes out, then the FIN (`TCPConnection.closeAfterFlush`).
    private func hangUp() {
        flush()
        phase.advance(to: .closing)
        tcp.closeAfterFlush(lingerMilliseconds: server.config.lingerMilliseconds)
    }

    // MARK: Sign-in and subscriptions

    func signIn(_ identity: Identity, hub: GameHub) {
        // A claim can commit after its connection went away: nobody to sign in.
        guard phase != .closed else { return }
        // Another token of the same character keeps everything: the view is the same.
        let viewChanges = hub !== self.hub || self.identity?.viewer != identity.viewer
        if viewChanges { self.hub.leave(self) }
        self.identity = identity
        self.hub = hub
        hub.join(self)
        // A subscriber stays one, but its view is now someone else's: it starts over from a
        // snapshot of the new one (which names its viewer in `me`), then patches as before.
        // Not when a takeover published with the claim already revoked it: `bye` follows, and
        // nothing of the state after the takeover may reach this device.
        if viewChanges && viewer != nil && !hub.holdsRevokedToken(self) {
            let start = subscribe(since: nil, past: nil)
            push(start.push, version: hub.durable.version)
        }
    }

    /// `past`: the view at `since`, when it had to be rebuilt (`GameHub.subscribe`).
    func subscribe(since: Int?, past: JSONValue?) -> (mode: String, push: [UInt8]) {
        subscription = .live(sentVersion: hub.durable.version)
        return hub.subscribe(self, viewer: identity!.viewer, since: since, past: past)
    }

    func unsubscribe() {
        subscription = .none
        hub.unsubscribe(self)
    }

    /// A push to a subscriber; past the queued-bytes bound it holds patches until the socket drains.
    /// `aheadOfItsReply`: the patch holds this connection's own change, whose reply follows, and
    /// is sent whatever is owed (PROTOCOL.md: the view with the change comes before the reply; a
    /// hold would leave that to a snapshot only at the next drain).
    func push(_ bytes: [UInt8], version: Int, aheadOfItsReply: Bool = false) {
        guard viewer != nil, !isClosing else { return }
        if !aheadOfItsReply, Self.holdsPatch(backlog: tcp.queuedWriteBytes, gathered: outbound.count, incoming: bytes.count,
                                             limit: server.config.limits.maxQueuedBytes, allOwedTooMuch: server.isOwedTooMuchInAll) {
            subscription = .holding
            return
        }
        queue(bytes)
        subscription = .live(sentVersion: version)
    }

    /// The bound is on the socket's backlog, and a hold starts only while there is one: only
    /// then does a drain callback come to end it (a write the kernel takes whole calls nothing
    /// back). A patch bigger than the bound still goes to an idle socket. While everything owed
    /// to all connections passes `max_total_queued_bytes`, any backlog holds: a subscriber is
    /// never closed for being slow (the contract's promise), so many slow ones are bounded by
    /// taking their patches, which a snapshot replaces, not by taking their connections.
    static func holdsPatch(backlog: Int, gathered: Int, incoming: Int, limit: Int, allOwedTooMuch: Bool) -> Bool {
        backlog > 0 && (allOwedTooMuch || backlog + gathered + incoming > limit)
    }

    private func drained() {
        endHoldingPatches()
        pump()
    }

    /// A subscriber whose patches were held is sent the view as it is now in their place.
    /// Also before the reply to its own change, which must not reach it ahead of a view that
    /// holds the change, however far behind its socket is.
    func endHoldingPatches() {
        guard isHoldingPatches, let identity, !isClosing else { return }
        queue(hub.snapshot(for: identity.viewer))
        subscription = .live(sentVersion: hub.durable.version)
    }

    // MARK: Output

    /// Gathers bytes for this loop turn's single write.
    func queue(_ bytes: [UInt8]) {
        guard !isClosing else { return }
        if outbound.isEmpty { server.markDirty(self) }
        outbound += bytes
        server.gatheredBytes += bytes.count
    }

    /// Called once per loop turn for connections with something to send.
    func flush() {
        guard !outbound.isEmpty else { return }
        server.gatheredBytes -= outbound.count
        tcp.write(outbound)
        outbound = []
    }

    private func pauseReadingIfBusy() {
        guard reading == .on else { return }
        if pipeline.count >= server.config.limits.maxPendingRequests || isOwedTooMuch {
            reading = .paused
            tcp.stopReading()
        } else if !hasTurnBudget {
            reading = .paused
            tcp.stopReading()
            putOff()
        }
    }

    private func resumeReadingIfIdle() {
        if reading == .paused, !isClosing, pipeline.count <= server.config.limits.maxPendingRequests / 2,
           tcp.queuedWriteBytes <= server.config.limits.maxQueuedBytes {
            guard hasTurnBudget else { return putOff() }
            reading = .on
            tcp.startReading()
        }
    }

    func stopReading() {
        reading = .stopped
        tcp.stopReading()
    }

    /// Starts no more of its lines: the replies already owed still go out, then `bye` (a device
    /// whose token was just revoked, `GameHub.revokeStaleTokens`).
    func stopStartingLines() {
        pipeline.stopStarting()
    }

    /// Sends `bye` after whatever is already queued, then hangs up.
    func sayGoodbye(_ reason: Wire.ByeReason) {
        guard !isClosing else { return }
        queue(Wire.bye(reason))
        hangUp()
    }

    /// What waits in the socket's write queue for the peer to take it.
    var queuedWriteBytes: Int { tcp.queuedWriteBytes }
    /// Closed at once already: its queue is being given up.
    var isGivingUpWrites: Bool { tcp.isGivingUpWrites }

    func closeNow() {
        phase.advance(to: .closing)
        tcp.close()
    }

    /// The socket is gone: leave the game and answer nothing more.
    func detach() {
        phase.advance(to: .closed)
        hub.leave(self)
    }
}

/// Where a connection is in its life. It only moves forward.
private enum Phase: Comparable {
    case open
    /// The peer half-closed: it still gets every reply it is owed, then the connection closes.
    case peerFinished
    /// Its last bytes are on their way out (`bye`, or the last reply); nothing more is sent.
    case closing
    /// The socket is gone.
    case closed

    mutating func advance(to later: Phase) { self = max(self, later) }
}

private enum Reading {
    case on
    /// While too much is in flight or queued; reading resumes once that drains.
    case paused
    /// For good (shutdown): nothing resumes it.
    case stopped
}

/// What a connection is sent of its game's changes.
private enum Subscription {
    case none
    /// Patches, each continuing the view last sent, at `sentVersion`. A new subscriber counts
    /// as sent its first view when its `subscribe` starts: that push leaves with the reply,
    /// ahead of any later patch, because a read starts only once every earlier reply has left
    /// (`RequestPipeline.mayStart`).
    case live(sentVersion: Int)
    /// Over its queued-bytes bound: patches wait, and a snapshot replaces them once the socket drains.
    case holding
}
