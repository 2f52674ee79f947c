import ArgumentParser
import Foundation
import Histogram
import UV

/// `bq bench redis`: the same driver shape against Redis running bench/unlock.lua (a real RESP
/// client over TCP, written here so that both sides are driven by the same loop and clock).
struct BenchRedis: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "redis",
        abstract: "Drive Redis with the unlock compare-and-set script (EVALSHA) and pub/sub subscribers.")

    @OptionGroup var load: LoadOptions
    @Option(help: "The Lua script to load (bench/unlock.lua).") var script = "bench/unlock.lua"

    func run() throws {
        guard let source = FileManager.default.contents(atPath: script) else { throw ValidationError("cannot read \(script)") }
        let setup = try BlockingLineSocket(host: load.host, port: load.port)
        defer { setup.close() }
        try setup.send(RESP.command(["SCRIPT", "LOAD", String(decoding: source, as: UTF8.self)]))
        guard let header = try setup.readLine(timeoutMilliseconds: 10_000), header.first == UInt8(ascii: "$"),
              let shaLine = try setup.readLine(timeoutMilliseconds: 10_000) else {
            throw BenchError("SCRIPT LOAD failed")
        }
        let sha = String(decoding: shaLine, as: UTF8.self)
        for game in load.gameNames {
            try setup.send(RESP.command(["DEL", "\(game):idem", "\(game):unlocked", "\(game):timeline", "\(game):version"]))
            _ = try setup.readLine(timeoutMilliseconds: 10_000)
            try setup.send(RESP.command(["SET", "\(game):balance", "1000000000000000"]))
            _ = try setup.readLine(timeoutMilliseconds: 10_000)
        }
        let driver = try RedisDriver(shape: load.shape(port: load.port, adminKey: "", echo: false), sha: sha)
        var result = try driver.run()
        result.target = "redis"
        result.games = load.games
        result.connections = load.connections
        result.depth = load.depth
        result.subscribersPerGame = load.subscribers
        result.offeredRate = load.rate
        result.mode = load.rate == nil ? "closed" : "open"
        print(load.describe(result))
    }
}

/// Just enough RESP (Redis's wire format) to send commands.
enum RESP {
    static func command(_ arguments: [String]) -> [UInt8] {
        var out: [UInt8] = []
        out += "*\(arguments.count)\r\n".utf8
        for argument in arguments {
            out += "$\(argument.utf8.count)\r\n".utf8
            out += argument.utf8
            out += "\r\n".utf8
        }
        return out
    }
}

/// One Redis connection of the driver. Loop thread only.
final class RedisConnection {
    let index: Int
    let game: Int
    let isSubscriber: Bool
    var tcp: TCPConnection?
    var ready = false
    var inFlight: [InFlight] = []
    var head = 0
    var partial: [UInt8] = []
    var outbox: [UInt8] = []
    var nextID = 1
    /// Line position inside a pub/sub message (`*3`, `$7`, `message`, `$n`, channel, `$n`, payload).
    var messageLine = -1

    init(index: Int, game: Int, isSubscriber: Bool) {
        self.index = index
        self.game = game
        self.isSubscriber = isSubscriber
    }

    var outstanding: Int { inFlight.count - head }

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

/// The Redis twin of `LoadDriver`: same loop, same phases, same histograms.
final class RedisDriver {
    let shape: LoadShape
    let sha: String
    let loop: EventLoop
    private var connections: [RedisConnection] = []
    private var mutators: [RedisConnection] = []
    private var timer: LoopTimer?
    private var pendingConnects = 0
    private var nextToConnect = 0
    private var readyCount = 0
    private var failure: String?
    private enum Phase { case setup, warmup, measuring, draining, done }
    private var phase = Phase.setup
    private var loadStart: UInt64 = 0
    private var measureStart: UInt64 = 0
    private var measureEnd: UInt64 = 0
    private var drainDeadline: UInt64 = 0
    private var issuedOpen = 0
    private var roundRobin = 0
    private var result = LoadResult()
    private var clientCPUStart = 0.0
    private var ackHistogram = Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: 120_000_000,
                                                 numberOfSignificantValueDigits: .three)
    private var deliveryHistogram = Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: 120_000_000,
                                                      numberOfSignificantValueDigits: .three)

    init(shape: LoadShape, sha: String) throws {
        self.shape = shape
        self.sha = sha
        loop = try EventLoop()
        for index in 0..<shape.connections {
            let connection = RedisConnection(index: index, game: index % shape.games.count, isSubscriber: false)
            connections.append(connection)
            mutators.append(connection)
        }
        for game in 0..<shape.games.count {
            for _ in 0..<shape.subscribersPerGame {
                connections.append(RedisConnection(index: connections.count, game: game, isSubscriber: true))
            }
        }
    }

    func run() throws -> LoadResult {
        ignoreSIGPIPE()
        let timer = try LoopTimer(loop: loop)
        self.timer = timer
        connectMore()
        let setupDeadline = benchNow() + 60_000_000_000
        timer.start(afterMilliseconds: 1, repeatMilliseconds: 1) { [unowned self] in self.tick(setupDeadline) }
        loop.run()
        try? loop.close()
        if let failure { throw BenchError(failure) }
        result.windowSeconds = Double(measureEnd - measureStart) / 1e9
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
        return result
    }

    private func connectMore() {
        while pendingConnects < 64, nextToConnect < connections.count {
            let connection = connections[nextToConnect]
            nextToConnect += 1
            pendingConnects += 1
            TCPConnection.connect(loop: loop, host: shape.host, port: shape.port) { [unowned self] outcome in
                self.pendingConnects -= 1
                switch outcome {
                case .success(let tcp): self.connected(connection, tcp)
                case .failure(let error): self.fail("connect: \(error)")
                }
                self.connectMore()
            }
        }
    }

    private func connected(_ connection: RedisConnection, _ tcp: TCPConnection) {
        connection.tcp = tcp
        tcp.setNoDelay(true)
        tcp.onRead = { [unowned self, unowned connection] bytes in self.didRead(connection, bytes) }
        tcp.onClose = { [unowned self] _ in
            if self.phase == .setup { self.fail("a Redis connection closed during setup") }
            if self.phase != .done { self.result.errors += 1; self.result.errorCodes["connection_closed", default: 0] += 1 }
        }
        tcp.startReading()
        if connection.isSubscriber {
            tcp.write(RESP.command(["SUBSCRIBE", "\(shape.games[connection.game]):channel"]))
        } else {
            becomeReady(connection)
        }
    }

    private func becomeReady(_ connection: RedisConnection) {
        guard !connection.ready else { return }
        connection.ready = true
        readyCount += 1
        if readyCount == connections.count { start() }
    }

    private func fail(_ message: String) {
        guard failure == nil, phase == .setup else { return }
        failure = message
        shutdown()
    }

    private func start() {
        loadStart = benchNow()
        measureStart = loadStart + UInt64(shape.warmupSeconds * 1e9)
        measureEnd = measureStart + UInt64(shape.durationSeconds * 1e9)
        phase = shape.warmupSeconds > 0 ? .warmup : .measuring
        if phase == .measuring { clientCPUStart = processCPUSeconds() }
        if shape.rate == nil {
            for connection in mutators {
                for _ in 0..<shape.depth { enqueue(connection, sentAt: benchNow()) }
                flush(connection)
            }
        }
    }

    private func tick(_ setupDeadline: UInt64) {
        let now = benchNow()
        switch phase {
        case .setup:
            if now > setupDeadline { fail("setup did not finish within 60 s") }
        case .warmup, .measuring:
            if phase == .warmup, now >= measureStart {
                phase = .measuring
                clientCPUStart = processCPUSeconds()
            }
            if now >= measureEnd {
                phase = .draining
                result.clientCPUSeconds = processCPUSeconds() - clientCPUStart
                drainDeadline = now + 2_000_000_000
                return
            }
            if let rate = shape.rate {
                let due = Int(Double(now - loadStart) / 1e9 * rate)
                var touched: [RedisConnection] = []
                while issuedOpen < due {
                    let scheduled = loadStart + UInt64(Double(issuedOpen) / rate * 1e9)
                    issuedOpen += 1
                    let connection = mutators[roundRobin % mutators.count]
                    roundRobin += 1
                    if connection.outstanding >= LoadDriver.openLoopBacklogLimit {
                        if scheduled >= measureStart { result.notSent += 1 }
                        continue
                    }
                    enqueue(connection, sentAt: scheduled)
                    if !touched.contains(where: { $0 === connection }) { touched.append(connection) }
                }
                for connection in touched { flush(connection) }
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

    private func shutdown() {
        phase = .done
        timer?.close()
        for connection in connections { connection.tcp?.close() }
    }

    private func enqueue(_ connection: RedisConnection, sentAt: UInt64) {
        let id = connection.nextID
        connection.nextID += 1
        let game = shape.games[connection.game]
        // A fresh reward id per request keeps every unlock a success, like the bq run's
        // adjustments: both sides measure committed changes, not refusals.
        connection.outbox += RESP.command([
            "EVALSHA", sha, "5", "\(game):idem", "\(game):balance", "\(game):unlocked", "\(game):timeline", "\(game):version",
            "k\(connection.index)-\(id)", "r\(connection.index)-\(id)", "1", "\(game):channel", String(sentAt),
        ])
        connection.inFlight.append(InFlight(sentAt: sentAt, isMutation: true, measured: true))
        if phase == .warmup || phase == .measuring { result.sent += 1 }
    }

    private func flush(_ connection: RedisConnection) {
        guard !connection.outbox.isEmpty, let tcp = connection.tcp else { return }
        tcp.write(connection.outbox)
        connection.outbox.removeAll(keepingCapacity: true)
    }

    private func didRead(_ connection: RedisConnection, _ bytes: [UInt8]) {
        let now = benchNow()
        var data = connection.partial
        data += bytes
        connection.partial.removeAll(keepingCapacity: true)
        var start = 0
        var index = 0
        while index < data.count {
            if data[index] == 0x0A {
                let end = index > start && data[index - 1] == 0x0D ? index - 1 : index
                handleLine(connection, data[start..<end], now: now)
                start = index + 1
            }
            index += 1
        }
        if start < data.count { connection.partial += data[start...] }
        flush(connection)
    }

    private func handleLine(_ connection: RedisConnection, _ line: ArraySlice<UInt8>, now: UInt64) {
        guard let first = line.first else { return }
        if connection.isSubscriber {
            if first == UInt8(ascii: "*") { connection.messageLine = 0; return }
            guard connection.messageLine >= 0 else { return }
            connection.messageLine += 1
            // A subscribe confirmation ends at line 5 with the count (":1"); a message's line 6
            // is its payload.
            if connection.messageLine == 5, first == UInt8(ascii: ":") {
                connection.messageLine = -1
                becomeReady(connection)
                return
            }
            if connection.messageLine == 6 {
                connection.messageLine = -1
                let stamp = line.prefix { $0 != 0x20 }
                if let sentAt = UInt64(String(decoding: stamp, as: UTF8.self)),
                   sentAt >= measureStart, sentAt < measureEnd, now >= sentAt {
                    _ = deliveryHistogram.record(max(1, (now - sentAt) / 1000))
                    result.patchesReceived += 1
                }
            }
            return
        }
        let ok = first == UInt8(ascii: ":") || first == UInt8(ascii: "+")
        guard ok || first == UInt8(ascii: "-") else { return }
        guard let request = connection.pop() else { return }
        if now >= measureStart, now < measureEnd {
            if ok {
                result.acknowledged += 1
                _ = ackHistogram.record(max(1, (now - request.sentAt) / 1000))
            } else {
                let code = String(decoding: line.dropFirst().prefix { $0 != 0x20 }, as: UTF8.self)
                if code == "already_unlocked" || code == "insufficient_points" {
                    result.refusals += 1
                    result.refusalCodes[code, default: 0] += 1
                } else {
                    result.errors += 1
                    result.errorCodes[code, default: 0] += 1
                }
            }
        }
        if shape.rate == nil, phase == .warmup || phase == .measuring { enqueue(connection, sentAt: now) }
    }
}
