import Histogram
import UV

/// What one load run asks for. Counts are totals unless named per game or per connection.
struct LoadShape: Sendable {
    var host = "127.0.0.1"
    var port = 4747
    var games: [String] = ["main"]
    var connections = 50
    var depth = 1
    var subscribersPerGame = 2
    var durationSeconds = 10.0
    var warmupSeconds = 1.0
    /// Total offered mutations/s (open loop); nil means closed loop at `depth`.
    var rate: Double?
    var adminKey = "bench-admin-key"
    /// Against the bare echo server: no sign-in, no subscribers, every line back is an answer.
    var echo = false
    /// Include the birthday person's completes and unlocks (paced, since they soon run out and
    /// their refusals cost the server almost nothing); false makes those connections admins.
    var includeBirthday = true
    /// Ends the measured window once this many mutations were acknowledged (for filling a log).
    var stopAfterAcknowledged: Int?
}

/// Who a load connection acts as, which decides the mutation it sends.
enum BenchActor: Sendable {
    case admin
    case organizer(String)
    case friend(String)
    case birthday(String)

    /// The rotation of actors over one game's mutating connections: mostly point
    /// adjustments (they never run out), dares edited while draft, and the birthday person
    /// completing and unlocking (these run out, so their refusals are counted apart).
    static let rotation: [BenchActor] = [
        .admin, .admin, .friend("priya"), .admin, .admin, .birthday("mia"),
        .admin, .friend("theo"), .organizer("sam"), .friend("dani"),
    ]
    /// The viewers subscribers take in turn: different views, so different patches.
    static let viewers: [BenchActor] = [
        .birthday("mia"), .friend("priya"), .organizer("sam"), .admin, .friend("theo"), .friend("dani"),
    ]
    static let characters = ["mia", "sam", "priya", "theo", "dani"]
}

/// One queued request whose reply has not come yet (replies come in request order).
struct InFlight {
    var sentAt: UInt64
    var isMutation: Bool
    var measured: Bool
}

/// One client connection of the driver. Loop thread only.
final class BenchConnection {
    enum Phase { case connecting, signingIn, ready, closed }

    let index: Int
    let game: Int
    let actor: BenchActor
    let isSubscriber: Bool
    var tcp: TCPConnection?
    var phase = Phase.connecting
    /// Requests sent, oldest first; `head` is the next to be answered.
    var inFlight: [InFlight] = []
    var head = 0
    var partial: [UInt8] = []
    var outbox: [UInt8] = []
    var nextID = 1
    var setupRepliesOwed = 0
    var sequence = 0

    init(index: Int, game: Int, actor: BenchActor, isSubscriber: Bool) {
        self.index = index
        self.game = game
        self.actor = actor
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
}

/// Per-game bookkeeping that turns reply versions and patch arrivals into delivery latencies.
struct GameDelivery {
    /// Send time of the mutation that produced each version (from its reply).
    var sentAtByVersion: [Int: UInt64] = [:]
    /// Patch arrivals for versions whose reply has not come back yet.
    var waiting: [Int: [UInt64]] = [:]
}

/// Drives a server (or the echo server) over real TCP from one libuv loop on this thread:
/// every connection, timer and callback lives on that loop, so the driver costs one core at most.
final class LoadDriver {
    let shape: LoadShape
    let tokens: [[String: String]]
    let loop: EventLoop
    private var connections: [BenchConnection] = []
    private var mutators: [BenchConnection] = []
    private var timer: LoopTimer?
    private var pendingConnects = 0
    private var nextToConnect = 0
    private var readyCount = 0
    private var setupFailed: String?

    private enum Phase { case setup, warmup, measuring, draining, done }
    private var phase = Phase.setup
    private var measureStart: UInt64 = 0
    private var measureEnd: UInt64 = 0
    private var loadStart: UInt64 = 0
    private var drainDeadline: UInt64 = 0

    /// Birthday connections waiting for their next turn (closed loop), with the time it comes.
    private var parked: [(BenchConnection, UInt64)] = []

    // Open loop.
    private var issuedOpen = 0
    private var roundRobin = 0
    /// Requests not sent because their connection already had this many outstanding.
    static let openLoopBacklogLimit = 10_000

    // Results.
    var result = LoadResult()
    private var ackHistogram = Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: 120_000_000,
                                                 numberOfSignificantValueDigits: .three)
    private var deliveryHistogram = Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: 120_000_000,
                                                      numberOfSignificantValueDigits: .three)
    private var delivery: [GameDelivery]

    /// `tokens[g][character]` signs characters in to game `g` (empty in echo mode).
    init(shape: LoadShape, tokens: [[String: String]]) throws {
        self.shape = shape
        self.tokens = tokens
        loop = try EventLoop()
        delivery = Array(repeating: GameDelivery(), count: shape.games.count)
        var perGame = Array(repeating: 0, count: shape.games.count)
        for index in 0..<shape.connections {
            let game = index % shape.games.count
            var actor = BenchActor.rotation[perGame[game] % BenchActor.rotation.count]
            if case .birthday = actor, !shape.includeBirthday { actor = .admin }
            perGame[game] += 1
            let connection = BenchConnection(index: index, game: game, actor: actor, isSubscriber: false)
            connections.append(connection)
            mutators.append(connection)
        }
        if !shape.echo {
            for game in 0..<shape.games.count {
                for slot in 0..<shape.subscribersPerGame {
                    let actor = BenchActor.viewers[slot % BenchActor.viewers.count]
                    connections.append(BenchConnection(index: connections.count, game: game, actor: actor, isSubscriber: true))
                }
            }
        }
    }

    /// Connects, signs in, subscribes, warms up, measures, drains and closes. Blocks this thread.
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
        if let setupFailed { throw BenchError(setupFailed) }
        finish()
        return result
    }

    // MARK: Connecting and signing in

    /// Keeps at most 64 connects pending, so the server's accept backlog never overflows.
    private func connectMore() {
        while pendingConnects < 64, nextToConnect < connections.count {
            let connection = connections[nextToConnect]
            nextToConnect += 1
            pendingConnects += 1
            TCPConnection.connect(loop: loop, host: shape.host, port: shape.port) { [unowned self] outcome in
                self.pendingConnects -= 1
                switch outcome {
                case .success(let tcp): self.connected(connection, tcp)
                case .failure(let error): self.failSetup("connect: \(error)")
                }
                self.connectMore()
            }
        }
    }

    private func connected(_ connection: BenchConnection, _ tcp: TCPConnection) {
        connection.tcp = tcp
        tcp.setNoDelay(true)
        tcp.onRead = { [unowned self, unowned connection] bytes in self.didRead(connection, bytes) }
        tcp.onClose = { [unowned self, unowned connection] error in
            if connection.phase != .closed, self.phase != .done {
                connection.phase = .closed
                self.result.errors += 1
                self.result.errorCodes["connection_closed", default: 0] += 1
                if self.phase == .setup { self.failSetup("connection closed during setup: \(error.map { "\($0)" } ?? "by peer")") }
            }
        }
        tcp.startReading()
        if shape.echo {
            becomeReady(connection)
            return
        }
        connection.phase = .signingIn
        var lines = [signInLine(connection)]
        if connection.isSubscriber { lines.append(#"{"id":"s","op":"subscribe"}"#) }
        connection.setupRepliesOwed = lines.count
        for line in lines {
            connection.outbox += line.utf8
            connection.outbox.append(0x0A)
            connection.push(InFlight(sentAt: benchNow(), isMutation: false, measured: false))
        }
        flush(connection)
    }

    private func signInLine(_ connection: BenchConnection) -> String {
        let game = shape.games[connection.game]
        switch connection.actor {
        case .admin:
            return #"{"id":"a","op":"admin","key":"\#(shape.adminKey)","game":"\#(game)"}"#
        case .organizer(let name), .friend(let name), .birthday(let name):
            return #"{"id":"a","op":"auth","token":"\#(tokens[connection.game][name] ?? "")"}"#
        }
    }

    private func becomeReady(_ connection: BenchConnection) {
        connection.phase = .ready
        readyCount += 1
        if readyCount == connections.count { startLoad() }
    }

    private func failSetup(_ message: String) {
        guard setupFailed == nil, phase == .setup else { return }
        setupFailed = message
        shutdown()
    }

    // MARK: Phases

    private func startLoad() {
        loadStart = benchNow()
        measureStart = loadStart + UInt64(shape.warmupSeconds * 1e9)
        measureEnd = measureStart + UInt64(shape.durationSeconds * 1e9)
        phase = shape.warmupSeconds > 0 ? .warmup : .measuring
        result.clientCPUAtStart = processCPUSeconds()
        onMeasureStart?()
        if shape.rate == nil {
            for connection in mutators {
                for _ in 0..<shape.depth { enqueueMutation(connection, sentAt: benchNow()) }
                flush(connection)
            }
        }
    }

    /// Called once when load starts (warm-up included), so the caller can read server counters.
    var onMeasureStart: (() -> Void)?
    /// Called once when the measured window ends, before draining.
    var onMeasureEnd: (() -> Void)?

    private func tick(setupDeadline: UInt64) {
        let now = benchNow()
        switch phase {
        case .setup:
            if now > setupDeadline { failSetup("setup did not finish within 60 s (\(readyCount)/\(connections.count) ready)") }
        case .warmup, .measuring:
            if phase == .warmup, now >= measureStart {
                phase = .measuring
                onWarmupEnd?()
            }
            if now >= measureEnd {
                phase = .draining
                onMeasureEnd?()
                drainDeadline = now + 2_000_000_000
                return
            }
            if let rate = shape.rate { issueOpenLoop(rate: rate, now: now) }
            if !parked.isEmpty {
                let due = parked.filter { $0.1 <= now }
                parked.removeAll { $0.1 <= now }
                for (connection, _) in due {
                    enqueueMutation(connection, sentAt: now)
                    flush(connection)
                }
            }
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

    /// Called once when warm-up ends and the measured window starts.
    var onWarmupEnd: (() -> Void)?

    /// Sends every request due by now at a fixed rate; each one's latency counts from the time
    /// it was due, not the time it went out, so a stalled server cannot hide its stall.
    private func issueOpenLoop(rate: Double, now: UInt64) {
        let elapsed = Double(now - loadStart) / 1e9
        let due = Int(elapsed * rate)
        var touched: [BenchConnection] = []
        while issuedOpen < due {
            let scheduled = loadStart + UInt64(Double(issuedOpen) / rate * 1e9)
            issuedOpen += 1
            let connection = mutators[roundRobin % mutators.count]
            roundRobin += 1
            if connection.phase != .ready || connection.outstanding >= Self.openLoopBacklogLimit {
                if scheduled >= measureStart { result.notSent += 1 }
                continue
            }
            enqueueMutation(connection, sentAt: scheduled)
            if connection.outbox.count > 0, !touched.contains(where: { $0 === connection }) { touched.append(connection) }
        }
        for connection in touched { flush(connection) }
    }

    private func shutdown() {
        phase = .done
        timer?.close()
        for connection in connections {
            connection.phase = .closed
            connection.tcp?.close()
        }
    }

    // MARK: Requests

    private func enqueueMutation(_ connection: BenchConnection, sentAt: UInt64) {
        let id = connection.nextID
        connection.nextID += 1
        connection.sequence += 1
        let idem = "b\(connection.index)-\(id)"
        let line: String
        switch connection.actor {
        case .admin, .organizer:
            line = #"{"id":\#(id),"op":"adjust_points","delta":1,"reason":"bench","idem":"\#(idem)"}"#
        case .friend:
            line = #"{"id":\#(id),"op":"save_secret","title":"Bench dare","description":"edit \#(id)","points":50,"idem":"\#(idem)"}"#
        case .birthday:
            // Alternate completing challenges and unlocking rewards, cycling through the seed's ids.
            let turn = connection.sequence / 2
            if connection.sequence % 2 == 0 {
                let challenge = "c" + (turn % 15 + 1).paddedTwoDigits
                line = #"{"id":\#(id),"op":"complete_challenge","challenge":"\#(challenge)","proof":{"kind":"done"},"idem":"\#(idem)"}"#
            } else {
                let reward = "r" + (turn % 9 + 1).paddedTwoDigits
                line = #"{"id":\#(id),"op":"unlock_reward","reward":"\#(reward)","idem":"\#(idem)"}"#
            }
        }
        connection.outbox += line.utf8
        connection.outbox.append(0x0A)
        connection.push(InFlight(sentAt: sentAt, isMutation: true, measured: sentAt >= measureStart && sentAt < measureEnd))
        if phase == .measuring || phase == .warmup { result.sent += 1 }
    }

    private func flush(_ connection: BenchConnection) {
        guard !connection.outbox.isEmpty, let tcp = connection.tcp else { return }
        tcp.write(connection.outbox)
        connection.outbox.removeAll(keepingCapacity: true)
    }

    // MARK: Replies and pushes

    private func didRead(_ connection: BenchConnection, _ bytes: [UInt8]) {
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
        data.withUnsafeBufferPointer { buffer in
            var index = 0
            while index < buffer.count {
                if buffer[index] == 0x0A {
                    if index > start { handleLine(connection, data[start..<index], now: now) }
                    start = index + 1
                }
                index += 1
            }
        }
        if start < data.count { connection.partial += data[start...] }
        flush(connection)
    }

    private func handleLine(_ connection: BenchConnection, _ line: ArraySlice<UInt8>, now: UInt64) {
        if shape.echo {
            handleReply(connection, line, now: now, ok: true)
            return
        }
        if BenchLineScan.isPush(line) {
            handlePush(connection, line, now: now)
        } else {
            handleReply(connection, line, now: now, ok: BenchLineScan.isOK(line))
        }
    }

    private static let toKey = Array(#""to":"#.utf8)
    private static let fromKey = Array(#""from":"#.utf8)
    private static let versionKey = Array(#""version":"#.utf8)
    private static let codeKey = Array(#""code":""#.utf8)
    private static let replayedKey = Array(#""replayed":true"#.utf8)

    private func handlePush(_ connection: BenchConnection, _ line: ArraySlice<UInt8>, now: UInt64) {
        switch BenchLineScan.pushKind(line) {
        case "patch":
            guard let from = BenchLineScan.intValue(after: Self.fromKey, in: line, limit: 40),
                  let to = BenchLineScan.intValue(after: Self.toKey, in: line, limit: 60), to > from else { return }
            if phase == .measuring || phase == .draining { result.patchesReceived += 1 }
            var game = delivery[connection.game]
            for version in (from + 1)...to {
                if let sentAt = game.sentAtByVersion[version] {
                    recordDelivery(sentAt: sentAt, now: now)
                } else {
                    game.waiting[version, default: []].append(now)
                }
            }
            delivery[connection.game] = game
        case "snapshot":
            if phase != .setup { result.snapshotsReceived += 1 }
        case "bye":
            result.errors += 1
            result.errorCodes["bye", default: 0] += 1
        default:
            break
        }
    }

    private func recordDelivery(sentAt: UInt64, now: UInt64) {
        guard sentAt >= measureStart, sentAt < measureEnd, now >= sentAt else { return }
        _ = deliveryHistogram.record(max(1, (now - sentAt) / 1000))
    }

    private func handleReply(_ connection: BenchConnection, _ line: ArraySlice<UInt8>, now: UInt64, ok: Bool) {
        guard let request = connection.pop() else { return }
        if !request.isMutation {
            guard ok else {
                failSetup("sign-in or subscribe refused: \(String(decoding: line, as: UTF8.self))")
                return
            }
            connection.setupRepliesOwed -= 1
            if connection.setupRepliesOwed == 0 { becomeReady(connection) }
            return
        }
        let inWindow = now >= measureStart && now < measureEnd
        if ok {
            if !shape.echo, let version = BenchLineScan.intValue(after: Self.versionKey, in: line, limit: 48),
               BenchLineScan.find(Self.replayedKey, in: line, limit: 80) == nil {
                noteCommitted(game: connection.game, version: version, sentAt: request.sentAt)
            }
            if inWindow {
                result.acknowledged += 1
                _ = ackHistogram.record(max(1, (now - request.sentAt) / 1000))
                if let limit = shape.stopAfterAcknowledged, result.acknowledged >= limit { measureEnd = now }
            }
        } else if inWindow {
            let code = BenchLineScan.stringValue(after: Self.codeKey, in: line, limit: 200) ?? "?"
            if Self.refusalCodes.contains(code) {
                result.refusals += 1
                result.refusalCodes[code, default: 0] += 1
                _ = ackHistogram.record(max(1, (now - request.sentAt) / 1000))
            } else {
                result.errors += 1
                result.errorCodes[code, default: 0] += 1
            }
        }
        if shape.rate == nil, phase == .warmup || phase == .measuring, connection.phase == .ready {
            if case .birthday = connection.actor {
                // A person, not a script: at most one attempt per connection every 10 ms.
                parked.append((connection, now + 10_000_000))
            } else {
                enqueueMutation(connection, sentAt: now)
            }
        }
    }

    /// Answers the game rules give to a well-formed request: the load meant to cause them.
    static let refusalCodes: Set<String> = [
        "already_completed", "already_unlocked", "insufficient_points", "secret_locked", "not_found", "version_conflict",
    ]

    private func noteCommitted(game index: Int, version: Int, sentAt: UInt64) {
        guard shape.subscribersPerGame > 0 else { return }
        var game = delivery[index]
        if game.sentAtByVersion[version] == nil {
            game.sentAtByVersion[version] = sentAt
            if let arrivals = game.waiting.removeValue(forKey: version) {
                for arrival in arrivals { recordDelivery(sentAt: sentAt, now: arrival) }
            }
        }
        delivery[index] = game
    }

    // MARK: Summary

    private func finish() {
        result.clientCPUSeconds = processCPUSeconds() - result.clientCPUAtStart
        result.windowSeconds = measureEnd > measureStart ? Double(measureEnd - measureStart) / 1e9 : 0
        result.ackP50Ms = Double(ackHistogram.valueAtPercentile(50)) / 1000
        result.ackP99Ms = Double(ackHistogram.valueAtPercentile(99)) / 1000
        result.ackP999Ms = Double(ackHistogram.valueAtPercentile(99.9)) / 1000
        result.ackMaxMs = Double(ackHistogram.max) / 1000
        result.deliverySamples = Int(deliveryHistogram.totalCount)
        if deliveryHistogram.totalCount > 0 {
            result.deliveryP50Ms = Double(deliveryHistogram.valueAtPercentile(50)) / 1000
            result.deliveryP99Ms = Double(deliveryHistogram.valueAtPercentile(99)) / 1000
            result.deliveryMaxMs = Double(deliveryHistogram.max) / 1000
        }
    }
}

extension Int {
    /// "07" for 7: the seed's ids are two digits.
    var paddedTwoDigits: String { self < 10 ? "0\(self)" : "\(self)" }
}

/// A setup or usage failure of the benchmark, with a message for people.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
