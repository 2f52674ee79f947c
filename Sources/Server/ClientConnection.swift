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
    private var tokens: Double
    private var lastRefill: UInt64
    private(set) var lastActivity: UInt64
    /// Replies in request order: slot `firstSlot + i` is `slots[i]`, nil until answered.
    private var slots: [[UInt8]?] = []
    private var firstSlot = 0
    /// Requests held back until every earlier reply is out (reads after an own mutation).
    private var waiting: [Request] = []
    private var outbound: [UInt8] = []
    private var readingPaused = false
    private(set) var isClosing = false
    private var isClosed = false

    init(number: Int, tcp: TCPConnection, server: GameServer, hub: GameHub) {
        self.number = number
        self.tcp = tcp
        self.server = server
        self.hub = hub
        self.framer = LineFramer(maxLineBytes: server.config.limits.maxLineBytes)
        self.tokens = Double(server.config.limits.requestsPerSecond)
        self.lastRefill = server.loop.nowMilliseconds
        self.lastActivity = server.loop.nowMilliseconds
    }

    var viewer: Viewer? { subscribed ? identity?.viewer : nil }
    var peer: String { tcp.peerDescription }

    func start() {
        tcp.onRead = { [unowned self] bytes in self.received(bytes) }
        tcp.onDrain = { [unowned self] in self.drained() }
        tcp.onClose = { [unowned self] _ in self.server.connectionClosed(self) }
        tcp.setNoDelay(true)
        queue(Wire.hello(server: GameServer.serverName, game: hub.name, version: hub.durable.version))
        tcp.startReading()
    }

    // MARK: Input

    private func received(_ bytes: [UInt8]) {
        guard !isClosing else { return }
        lastActivity = server.loop.nowMilliseconds
        for line in framer.feed(bytes) {
            guard !isClosing else { return }
            switch line {
            case .tooLong:
                answerNow(nil, ProtocolError(.lineTooLong, "Line longer than \(server.config.limits.maxLineBytes) bytes"))
            case .line(let bytes):
                handle(line: bytes)
            }
        }
        pauseReadingIfBusy()
    }

    private func handle(line: [UInt8]) {
        let json: JSONValue
        do {
            json = try JSONParser.parse(line, maxDepth: server.config.limits.maxJSONDepth)
        } catch {
            return answerNow(nil, ProtocolError(.badJSON, "Not a JSON object: \(error)"))
        }
        switch RequestDecoder.decode(json) {
        case .failure(let failure):
            answerNow(failure.id, failure.error)
        case .success(let request):
            // Parsed first so that even a refusal for speed carries the request's id.
            guard takeToken() else {
                return answerNow(request.id, ProtocolError(.rateLimited, "More than \(server.config.limits.requestsPerSecond) requests per second"))
            }
            if !waiting.isEmpty || (!isMutation(request) && hasUnansweredSlots) {
                waiting.append(request)
            } else {
                dispatch(request)
            }
        }
    }

    private func isMutation(_ request: Request) -> Bool {
        if case .mutation = request.operation { return true }
        return false
    }

    private var hasUnansweredSlots: Bool { !slots.isEmpty }

    /// Owed a reply: such a connection is waiting on the server, not idle.
    var hasRequestsInFlight: Bool { !slots.isEmpty || !waiting.isEmpty }

    private func takeToken() -> Bool {
        let rate = Double(server.config.limits.requestsPerSecond)
        let now = server.loop.nowMilliseconds
        tokens = min(rate, tokens + Double(now &- lastRefill) * rate / 1000)
        lastRefill = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    private func dispatch(_ request: Request) {
        let target = ReplyTarget(connection: self, slot: firstSlot + slots.count)
        slots.append(nil)
        server.handle(request, from: self, target: target)
    }

    /// A refusal that needs no game work still keeps its place in the reply order.
    private func answerNow(_ id: RequestID?, _ error: ProtocolError) {
        let target = ReplyTarget(connection: self, slot: firstSlot + slots.count)
        slots.append(nil)
        target.error(id, error)
    }

    // MARK: Replies

    /// Fills a reply slot and sends every reply that is now next in order.
    func fill(slot: Int, with bytes: [UInt8], error: ErrorCode?) {
        let index = slot - firstSlot
        guard !isClosing, index >= 0, index < slots.count else { return }
        slots[index] = bytes
        // Bad lines in a row end the connection; any `ok` reply resets the count.
        if let error {
            if error.isBadLine { badLines += 1 }
        } else {
            badLines = 0
        }
        var sent = 0
        while sent < slots.count, let ready = slots[sent] {
            queue(ready)
            sent += 1
        }
        if sent > 0 {
            slots.removeFirst(sent)
            firstSlot += sent
        }
        if badLines >= server.config.limits.maxBadLines { return sayGoodbye(.tooManyErrors) }
        guard slots.isEmpty, !waiting.isEmpty, !isClosing else { return }
        let held = waiting
        waiting = []
        for (index, request) in held.enumerated() {
            if isMutation(request) || slots.isEmpty {
                dispatch(request)
            } else {
                waiting = Array(held[index...])
                break
            }
        }
        resumeReadingIfIdle()
    }

    // MARK: Sign-in and subscriptions

    func signIn(_ identity: Identity, hub: GameHub) {
        // A claim can commit after its connection went away: nobody to sign in.
        guard !isClosed else { return }
        if hub !== self.hub || self.identity != identity {
            self.hub.leave(self)
            subscribed = false
        }
        self.identity = identity
        self.hub = hub
        hub.join(self)
    }

    func subscribe(since: Int?) -> (mode: String, push: [UInt8]) {
        subscribed = true
        isHoldingPatches = false
        let start = hub.subscribe(self, viewer: identity!.viewer, since: since)
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
        if queuedBytes + bytes.count > server.config.limits.maxQueuedBytes {
            isHoldingPatches = true
            return
        }
        queue(bytes)
        sentVersion = version
    }

    private func drained() {
        if isHoldingPatches, subscribed, let identity, !isClosing {
            isHoldingPatches = false
            queue(hub.resnapshot(self, viewer: identity.viewer))
            sentVersion = hub.durable.version
        }
        resumeReadingIfIdle()
    }

    // MARK: Output

    private var queuedBytes: Int { outbound.count + tcp.queuedWriteBytes }

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
        if !readingPaused, waiting.count + slots.count >= server.config.limits.maxPendingRequests
            || tcp.queuedWriteBytes > server.config.limits.maxQueuedBytes * 4 {
            readingPaused = true
            tcp.stopReading()
        }
    }

    private func resumeReadingIfIdle() {
        if readingPaused, !isClosing, waiting.count + slots.count < server.config.limits.maxPendingRequests / 2,
           tcp.queuedWriteBytes <= server.config.limits.maxQueuedBytes {
            readingPaused = false
            tcp.startReading()
        }
    }

    func stopReading() {
        readingPaused = true
        tcp.stopReading()
    }

    /// Sends `bye` after whatever is already queued, then hangs up.
    func sayGoodbye(_ reason: Wire.ByeReason) {
        guard !isClosing else { return }
        queue(Wire.bye(reason))
        flush()
        isClosing = true
        tcp.closeAfterFlush()
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
