import Domain
import JSON
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
    private var subscribed = false
    /// The version of the last view this subscriber was sent.
    private(set) var sentVersion = 0
    /// Set while the subscriber is over its queued-bytes bound: patches wait for a snapshot.
    private(set) var isHoldingPatches = false
    private var badLines = 0
    private var requestTokens: TokenBucket
    private(set) var lastActivity: UInt64
    /// Replies in request order: slot `firstSlot + i` is `slots[i]`, empty until answered.
    private var slots: [Slot] = []
    private var firstSlot = 0
    /// Slots of claims not yet answered.
    private var claimSlots: Set<Int> = []
    /// Lines not yet started, in arrival order (see `mustWait`).
    private var waiting = FIFO<Incoming>()
    private var isPumping = false
    private var peerFinished = false
    private var outbound: [UInt8] = []
    /// Paused while too much is in flight or queued; resumes once that drains.
    private var readingPaused = false
    /// Stopped for good (shutdown): nothing resumes it.
    private var readingStopped = false
    private(set) var isClosing = false
    private var isClosed = false

    /// The peer network this connection counts against (nil for a loopback peer, not limited).
    let countedNetwork: String?

    init(number: Int, tcp: TCPConnection, server: GameServer, hub: GameHub, countedNetwork: String?) {
        self.number = number
        self.countedNetwork = countedNetwork
        self.tcp = tcp
        self.server = server
        self.hub = hub
        self.framer = LineFramer(maxLineBytes: server.config.limits.maxLineBytes)
        self.requestTokens = TokenBucket(perSecond: server.config.limits.requestsPerSecond, now: server.loop.nowMilliseconds)
        self.lastActivity = server.steadyNow
    }

    var viewer: Viewer? { subscribed ? identity?.viewer : nil }
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
        for line in framer.feed(bytes) {
            guard !isClosing else { return }
            switch line {
            case .tooLong:
                accept(.refusal(nil, ProtocolError(.lineTooLong, "Line longer than \(server.config.limits.maxLineBytes) bytes")))
            case .line(let bytes):
                accept(incoming(line: bytes))
            }
        }
        pauseReadingIfBusy()
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

    /// Every line joins the queue in arrival order, refusals included, so replies
    /// leave in request order whatever finishes first.
    private func accept(_ line: Incoming) {
        waiting.append(line)
        pump()
    }

    /// Mutations pipeline. A read waits for every earlier reply, so it sees the
    /// connection's own changes; and while a claim is unanswered everything waits,
    /// because the claim may change who this connection is.
    private func mustWait(_ line: Incoming) -> Bool {
        guard case .request(let request) = line, !slots.isEmpty else { return false }
        if case .mutation = request.operation { return !claimSlots.isEmpty }
        return true
    }

    /// Lines wait unstarted, and reading pauses, while this much output waits for the peer to
    /// read it: a client that pipelines reads and never reads their replies would otherwise have
    /// every line of a read answered, a whole view each, into memory. They start again when the
    /// socket drains. At shutdown every line is answered (`unavailable`, a few bytes) before `bye`.
    private var isOwedTooMuch: Bool {
        !server.shuttingDown && outbound.count + tcp.queuedWriteBytes > server.config.limits.maxQueuedBytes * 4
    }

    /// Starts held lines, and reads again, once the output that held them has gone to a socket
    /// that took it whole: no drain callback comes then. Called after the turn's writes, and
    /// before `bye` at shutdown.
    func startHeldLines() {
        if !waiting.isEmpty || readingPaused, !isOwedTooMuch { pump() }
    }

    /// Owed a reply: such a connection is waiting on the server, not idle. Lines held because
    /// the peer does not read what it is owed do not count: that peer is idle.
    var hasRequestsInFlight: Bool { !slots.isEmpty || (!waiting.isEmpty && !isOwedTooMuch) }

    private func takeToken() -> Bool { requestTokens.take(now: server.loop.nowMilliseconds) }

    /// Gives the line its place in the reply order and starts it.
    private func start(_ line: Incoming) {
        switch line {
        case .refusal(let id, let error):
            slots.append(Slot(bytes: Wire.error(id: id, error), error: error.code))
        case .request(let request):
            let slot = firstSlot + slots.count
            slots.append(Slot())
            if case .claim = request.operation { claimSlots.insert(slot) }
            server.handle(request, from: self, target: ReplyTarget(connection: self, slot: slot))
        }
    }

    // MARK: Replies

    /// Fills a reply slot; whatever is now next in order goes out.
    func fill(slot: Int, with bytes: [UInt8], error: ErrorCode?) {
        let index = slot - firstSlot
        guard !isClosing, index >= 0, index < slots.count else { return }
        slots[index] = Slot(bytes: bytes, error: error)
        // Nearly always empty: skip hashing the slot for every reply.
        if !claimSlots.isEmpty { claimSlots.remove(slot) }
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
            var sent = 0
            while sent < slots.count, let bytes = slots[sent].bytes {
                queue(bytes)
                // Bad lines in a row, counted in the order the client sees them; `ok` resets.
                if let error = slots[sent].error {
                    if error.isBadLine { badLines += 1 }
                } else {
                    badLines = 0
                }
                sent += 1
                if badLines >= server.config.limits.maxBadLines { break }
            }
            if sent > 0 {
                slots.removeFirst(sent)
                firstSlot += sent
                progress = true
            }
            if badLines >= server.config.limits.maxBadLines { return sayGoodbye(.tooManyErrors) }
            while !isClosing, let next = waiting.first, !mustWait(next), !isOwedTooMuch {
                _ = waiting.popFirst()
                start(next)
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
        peerFinished = true
        hangUpIfPeerIsDone()
    }

    private func hangUpIfPeerIsDone() {
        guard peerFinished, !isClosing, slots.isEmpty, waiting.isEmpty else { return }
        flush()
        isClosing = true
        tcp.closeAfterFlush(lingerMilliseconds: server.config.lingerMilliseconds)
    }

    // MARK: Sign-in and subscriptions

    func signIn(_ identity: Identity, hub: GameHub) {
        // A claim can commit after its connection went away: nobody to sign in.
        guard !isClosed else { return }
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
        if viewChanges && subscribed && !hub.holdsRevokedToken(self) {
            let start = subscribe(since: nil, past: nil)
            push(start.push, version: hub.durable.version)
        }
    }

    /// `past`: the view at `since`, when it had to be rebuilt (`GameHub.subscribe`).
    func subscribe(since: Int?, past: JSONValue?) -> (mode: String, push: [UInt8]) {
        subscribed = true
        isHoldingPatches = false
        let start = hub.subscribe(self, viewer: identity!.viewer, since: since, past: past)
        sentVersion = hub.durable.version
        return start
    }

    func unsubscribe() {
        subscribed = false
        hub.unsubscribe(self)
    }

    /// A push to a subscriber; past the queued-bytes bound it holds patches until the socket drains.
    func push(_ bytes: [UInt8], version: Int) {
        guard subscribed, !isClosing else { return }
        if Self.holdsPatch(backlog: tcp.queuedWriteBytes, gathered: outbound.count, incoming: bytes.count,
                           limit: server.config.limits.maxQueuedBytes) {
            isHoldingPatches = true
            return
        }
        queue(bytes)
        sentVersion = version
    }

    /// The bound is on the socket's backlog, and a hold starts only while there is one: only
    /// then does a drain callback come to end it (a write the kernel takes whole calls nothing
    /// back). A patch bigger than the bound still goes to an idle socket.
    static func holdsPatch(backlog: Int, gathered: Int, incoming: Int, limit: Int) -> Bool {
        backlog > 0 && backlog + gathered + incoming > limit
    }

    private func drained() {
        endHoldingPatches()
        pump()
    }

    /// A subscriber whose patches were held is sent the view as it is now in their place.
    /// Also before the reply to its own change, which must not reach it ahead of a view that
    /// holds the change, however far behind its socket is.
    func endHoldingPatches() {
        guard isHoldingPatches, subscribed, let identity, !isClosing else { return }
        isHoldingPatches = false
        queue(hub.snapshot(for: identity.viewer))
        sentVersion = hub.durable.version
    }

    // MARK: Output

    /// Gathers bytes for this loop turn's single write.
    func queue(_ bytes: [UInt8]) {
        guard !isClosing else { return }
        if outbound.isEmpty { server.markDirty(self) }
        outbound += bytes
    }

    /// Called once per loop turn for connections with something to send.
    func flush() {
        guard !outbound.isEmpty else { return }
        tcp.write(outbound)
        outbound = []
    }

    private func pauseReadingIfBusy() {
        if !readingPaused, waiting.count + slots.count >= server.config.limits.maxPendingRequests || isOwedTooMuch {
            readingPaused = true
            tcp.stopReading()
        }
    }

    private func resumeReadingIfIdle() {
        if readingPaused, !readingStopped, !isClosing, waiting.count + slots.count <= server.config.limits.maxPendingRequests / 2,
           tcp.queuedWriteBytes <= server.config.limits.maxQueuedBytes {
            readingPaused = false
            tcp.startReading()
        }
    }

    func stopReading() {
        readingStopped = true
        readingPaused = true
        tcp.stopReading()
    }

    /// Sends `bye` after whatever is already queued, then hangs up.
    func sayGoodbye(_ reason: Wire.ByeReason) {
        guard !isClosing else { return }
        queue(Wire.bye(reason))
        flush()
        isClosing = true
        tcp.closeAfterFlush(lingerMilliseconds: server.config.lingerMilliseconds)
    }

    func closeNow() {
        isClosing = true
        tcp.close()
    }

    /// The socket is gone: leave the game and answer nothing more.
    func detach() {
        isClosed = true
        isClosing = true
        hub.leave(self)
    }
}

/// One line of input, in the order it arrived.
private enum Incoming {
    case request(Request)
    /// Refused before it reached the game (bad JSON, bad request, too fast, too long).
    case refusal(RequestID?, ProtocolError)
}

/// A place in the reply order; `bytes` is nil until the reply is ready.
private struct Slot {
    var bytes: [UInt8]?
    var error: ErrorCode?
}
