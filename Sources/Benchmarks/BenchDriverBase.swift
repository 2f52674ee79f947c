import Histogram
import UV
import POSIXSupport

/// Where a load run is: connecting and setting up, warming up, measuring, waiting for the last
/// replies, finished.
enum LoadPhase { case setup, warmup, measuring, draining, done }

/// One queued request whose reply has not come yet (replies come in request order).
struct InFlight {
    var sentAt: UInt64
    var isMutation: Bool
}

/// What every driver connection keeps, whatever its protocol. Loop thread only.
class BenchSocket {
    let index: Int
    let game: Int
    let isSubscriber: Bool
    var tcp: TCPConnection?
    /// Requests sent, oldest first; `head` is the next to be answered.
    private var inFlight: [InFlight] = []
    private var head = 0
    /// The unfinished last line of the latest read.
    var partial: [UInt8] = []
    /// Bytes queued for the next write, so that a burst of requests goes out in one.
    var outbox: [UInt8] = []
    var nextID = 1

    init(index: Int, game: Int, isSubscriber: Bool) {
        self.index = index
        self.game = game
        self.isSubscriber = isSubscriber
    }

    var outstanding: Int { inFlight.count - head }

    func push(_ entry: InFlight) { inFlight.append(entry) }

    func pop() -> InFlight? {
        guard head < inFlight.count else { return nil }
        let entry = inFlight[head]
        head += 1
        if head > 4096, head * 2 > inFlight.count {
            inFlight.removeFirst(head)
            head = 0
        }
        return entry
    }

    func flush() {
        guard !outbox.isEmpty, let tcp else { return }
        tcp.write(outbox)
        outbox.removeAll(keepingCapacity: true)
    }
}

/// Ack and delivery latencies, in microseconds.
struct LatencyHistograms {
    private var ack = Self.histogram()
    private var delivery = Self.histogram()

    private static func histogram() -> Histogram<UInt64> {
        Histogram(lowestDiscernibleValue: 1, highestTrackableValue: 120_000_000, numberOfSignificantValueDigits: .three)
    }

    mutating func recordAck(sentAt: UInt64, now: UInt64) {
        _ = ack.record(max(1, (now - sentAt) / 1000))
    }

    mutating func recordDelivery(sentAt: UInt64, now: UInt64) {
        _ = delivery.record(max(1, (now - sentAt) / 1000))
    }

    func summarize(into result: inout LoadResult) {
        result.ackP50Ms = Double(ack.valueAtPercentile(50)) / 1000
        result.ackP99Ms = Double(ack.valueAtPercentile(99)) / 1000
        result.ackP999Ms = Double(ack.valueAtPercentile(99.9)) / 1000
        result.ackMaxMs = Double(ack.max) / 1000
        result.deliverySamples = Int(delivery.totalCount)
        if delivery.totalCount > 0 {
            result.deliveryP50Ms = Double(delivery.valueAtPercentile(50)) / 1000
            result.deliveryP99Ms = Double(delivery.valueAtPercentile(99)) / 1000
            result.deliveryMaxMs = Double(delivery.max) / 1000
        }
    }
}

/// The plumbing every load driver shares, whatever it speaks: one libuv loop on this thread
/// holds every connection, timer and callback, so a driver costs one core at most. It connects
/// the pool, runs the phases on a 1 ms tick, issues open-loop requests, drains and sums up.
///
/// A subclass adds its protocol by overriding `didConnect` (set up, then `connectionReady`),
/// `enqueueMutation`, `handleLine` and `connectionClosed`; the other hooks are optional.
class BenchDriverBase<Connection: BenchSocket> {
    let shape: LoadShape
    let loop: EventLoop
    /// Every connection: the mutators first, then the subscribers.
    var connections: [Connection] = []
    var mutators: [Connection] = []
    private(set) var phase = LoadPhase.setup
    private(set) var loadStart: UInt64 = 0
    private(set) var measureStart: UInt64 = 0
    /// Moved earlier when a run stops after a number of acknowledgements.
    var measureEnd: UInt64 = 0
    var result = LoadResult()
    var latencies = LatencyHistograms()

    private var timer: LoopTimer?
    private var pendingConnects = 0
    private var nextToConnect = 0
    private(set) var readyCount = 0
    private var setupFailure: String?
    private var drainDeadline: UInt64 = 0
    private var issuedOpen = 0
    private var roundRobin = 0

    /// Requests not sent because their connection already had this many outstanding.
    static var openLoopBacklogLimit: Int { 10_000 }

    /// `shape.host` resolved once: every connection would otherwise block the loop on the resolver.
    let host: String

    init(shape: LoadShape) throws {
        self.shape = shape
        host = try numericHost(shape.host)
        loop = try EventLoop()
    }

    /// Connects, sets up, warms up, measures, drains and closes. Blocks this thread.
    func run() throws -> LoadResult {
        ignoreSIGPIPE()
        let timer = try LoopTimer(loop: loop)
        self.timer = timer
        connectMore()
        // One tick per millisecond: phase changes, open-loop issuing, setup deadline.
        let setupDeadline = benchNow() + 60_000_000_000
        timer.start(afterMilliseconds: 1, repeatMilliseconds: 1) { [unowned self] in
            self.tick(setupDeadline: setupDeadline)
        }
        loop.run()
        try? loop.close()
        if let setupFailure { throw BenchError(setupFailure) }
        result.windowSeconds = measureEnd > measureStart ? Double(measureEnd - measureStart) / 1e9 : 0
        latencies.summarize(into: &result)
        return result
    }

    // MARK: Protocol hooks

    /// Sends what the new connection needs before it can take load; `connectionReady` once it can.
    func didConnect(_ connection: Connection) { preconditionFailure("a driver sets up its own connections") }

    /// Queues (without flushing) one mutation whose latency counts from `sentAt`.
    func enqueueMutation(_ connection: Connection, sentAt: UInt64) { preconditionFailure("a driver sends its own mutations") }

    /// One complete line read, without its newline (never empty).
    func handleLine(_ connection: Connection, _ line: ArraySlice<UInt8>, now: UInt64) {
        preconditionFailure("a driver reads its own replies")
    }

    func connectionClosed(_ connection: Connection, error: UVError?) {}

    /// Whether the open loop may send on this connection now.
    func isUsable(_ connection: Connection) -> Bool { true }

    /// The load has started (the phase is warm-up or, without one, measuring).
    func loadStarted() {}
    /// Warm-up is over; the measured window starts.
    func warmupEnded() {}
    /// The measured window is over; draining starts.
    func measureEnded() {}
    /// Each tick of warm-up and measuring, after the open loop's requests went out.
    func loadTick(now: UInt64) {}

    var setupTimeoutMessage: String { "setup did not finish within 60 s (\(readyCount)/\(connections.count) ready)" }

    // MARK: For the protocols

    var isLoading: Bool { phase == .warmup || phase == .measuring }

    func isInWindow(_ time: UInt64) -> Bool { time >= measureStart && time < measureEnd }

    /// Counts a connection as set up; the load starts once every one is.
    func connectionReady() {
        readyCount += 1
        if readyCount == connections.count { startLoad() }
    }

    /// Registers a mutation just queued on `connection`.
    func noteMutation(_ connection: Connection, sentAt: UInt64) {
        connection.push(InFlight(sentAt: sentAt, isMutation: true))
        if isLoading { result.sent += 1 }
    }

    /// Records a delivery whose mutation was sent inside the measured window; false for others.
    @discardableResult
    func recordDelivery(sentAt: UInt64, now: UInt64) -> Bool {
        guard isInWindow(sentAt), now >= sentAt else { return false }
        latencies.recordDelivery(sentAt: sentAt, now: now)
        return true
    }

    /// Gives up the run (only during setup): `run` throws `message`.
    func failSetup(_ message: String) {
        guard setupFailure == nil, phase == .setup else { return }
        setupFailure = message
        shutdown()
    }

    // MARK: Connecting

    /// Keeps at most 64 connects pending, so the server's accept backlog never overflows.
    private func connectMore() {
        while pendingConnects < 64, nextToConnect < connections.count {
            let connection = connections[nextToConnect]
            nextToConnect += 1
            pendingConnects += 1
            TCPConnection.connect(loop: loop, host: host, port: shape.port) { [unowned self] outcome in
                self.pendingConnects -= 1
                switch outcome {
                case .success(let tcp): self.connected(connection, tcp)
                case .failure(let error): self.failSetup("connect: \(error)")
                }
                self.connectMore()
            }
        }
    }

    private func connected(_ connection: Connection, _ tcp: TCPConnection) {
        connection.tcp = tcp
        tcp.setNoDelay(true)
        tcp.onRead = { [unowned self, unowned connection] bytes in self.didRead(connection, bytes) }
        tcp.onClose = { [unowned self, unowned connection] error in self.connectionClosed(connection, error: error) }
        tcp.startReading()
        didConnect(connection)
    }

    /// Hands every complete non-empty line to `handleLine`, keeps the rest, then sends what they queued.
    private func didRead(_ connection: Connection, _ bytes: [UInt8]) {
        let now = benchNow()
        var data: [UInt8]
        if connection.partial.isEmpty {
            data = bytes
        } else {
            data = connection.partial
            data += bytes
            connection.partial.removeAll(keepingCapacity: true)
        }
        var start = 0
        while let newline = data[start...].firstIndex(of: 0x0A) {
            if newline > start { handleLine(connection, data[start..<newline], now: now) }
            start = newline + 1
        }
        if start < data.count { connection.partial += data[start...] }
        connection.flush()
    }

    // MARK: Phases

    private func startLoad() {
        loadStart = benchNow()
        measureStart = loadStart + UInt64(shape.warmupSeconds * 1e9)
        measureEnd = measureStart + UInt64(shape.durationSeconds * 1e9)
        phase = shape.warmupSeconds > 0 ? .warmup : .measuring
        loadStarted()
        // Without a warm-up the measured window starts now: its hooks (CPU baselines) run at once.
        if phase == .measuring { warmupEnded() }
        if shape.rate == nil {
            for connection in mutators {
                for _ in 0..<shape.depth { enqueueMutation(connection, sentAt: benchNow()) }
                connection.flush()
            }
        }
    }

    private func tick(setupDeadline: UInt64) {
        let now = benchNow()
        switch phase {
        case .setup:
            if now > setupDeadline { failSetup(setupTimeoutMessage) }
        case .warmup, .measuring:
            if phase == .warmup, now >= measureStart {
                phase = .measuring
                warmupEnded()
            }
            if now >= measureEnd {
                phase = .draining
                measureEnded()
                drainDeadline = now + 2_000_000_000
                return
            }
            if let rate = shape.rate { issueOpenLoop(rate: rate, now: now) }
            loadTick(now: now)
        case .draining:
            let owed = mutators.reduce(0) { $0 + $1.outstanding }
            if owed == 0 || now > drainDeadline {
                result.unansweredAtEnd = owed
                shutdown()
            }
        case .done:
            break
        }
    }

    /// Sends every request due by now at a fixed rate; each one's latency counts from the time
    /// it was due, not the time it went out, so a stalled server cannot hide its stall.
    private func issueOpenLoop(rate: Double, now: UInt64) {
        let elapsed = Double(now - loadStart) / 1e9
        let due = Int(elapsed * rate)
        var touched: [Connection] = []
        while issuedOpen < due {
            let scheduled = loadStart + UInt64(Double(issuedOpen) / rate * 1e9)
            issuedOpen += 1
            let connection = mutators[roundRobin % mutators.count]
            roundRobin += 1
            if !isUsable(connection) || connection.outstanding >= Self.openLoopBacklogLimit {
                if scheduled >= measureStart { result.notSent += 1 }
                continue
            }
            enqueueMutation(connection, sentAt: scheduled)
            if !touched.contains(where: { $0 === connection }) { touched.append(connection) }
        }
        for connection in touched { connection.flush() }
    }

    private func shutdown() {
        phase = .done
        timer?.close()
        for connection in connections { connection.tcp?.close() }
    }
}
