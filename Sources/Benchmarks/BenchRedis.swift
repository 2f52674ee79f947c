import ArgumentParser
import Foundation
import UV
import POSIXSupport

/// `bq bench redis`: the same driver shape against Redis running bench/unlock.lua (a real RESP
/// client over TCP, written here so that both sides are driven by the same loop and clock).
struct BenchRedis: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "redis",
        abstract: "Drive Redis with the unlock compare-and-set script (EVALSHA) and pub/sub subscribers.")

    @OptionGroup var load: LoadOptions
    @Option(help: "The Lua script to load (bench/unlock.lua).") var script = "bench/unlock.lua"
    @Option(help: "PID of the Redis server, to report its CPU over the window and its RSS (Linux /proc).")
    var serverPid: Int32?

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
        driver.serverPID = serverPid
        var result = try driver.run()
        if let serverPid {
            result.serverRSSMiB = ProcStats.statusBytes(pid: serverPid, field: "VmRSS").map { Double($0) / 1_048_576 }
        }
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
final class RedisConnection: BenchSocket {
    var ready = false
    /// Line position inside a pub/sub message (`*3`, `$7`, `message`, `$n`, channel, `$n`, payload).
    var messageLine = -1
}

/// The Redis twin of `LoadDriver`: same loop, same phases, same histograms.
final class RedisDriver: BenchDriverBase<RedisConnection> {
    let sha: String
    private var clientCPUStart = 0.0
    /// In every idempotency key and reward id: a second run against the same Redis must commit
    /// new unlocks, not replay the first run's.
    private let runTag = String(UInt64.random(in: 0...UInt64.max), radix: 36)

    init(shape: LoadShape, sha: String) throws {
        self.sha = sha
        try super.init(shape: shape)
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

    override func didConnect(_ connection: RedisConnection) {
        if connection.isSubscriber {
            connection.tcp?.write(RESP.command(["SUBSCRIBE", "\(shape.games[connection.game]):channel"]))
        } else {
            becomeReady(connection)
        }
    }

    override func connectionClosed(_ connection: RedisConnection, error: UVError?) {
        if phase == .setup { failSetup("a Redis connection closed during setup") }
        if phase != .done { result.countError("connection_closed") }
    }

    private func becomeReady(_ connection: RedisConnection) {
        guard !connection.ready else { return }
        connection.ready = true
        connectionReady()
    }

    // The driver's CPU counts over the measured window only.
    /// Redis's PID, when given: its CPU is read over the measured window, like a spawned bq's.
    var serverPID: Int32?
    private var serverCPUStart: Double?

    override func warmupEnded() {
        clientCPUStart = processCPUSeconds()
        serverCPUStart = serverPID.flatMap { ProcStats.cpuSeconds(pid: $0) }
    }

    override func measureEnded() {
        result.clientCPUSeconds = processCPUSeconds() - clientCPUStart
        if let serverPID, let start = serverCPUStart, let end = ProcStats.cpuSeconds(pid: serverPID) {
            result.serverCPUSeconds = end - start
        }
    }
    override var setupTimeoutMessage: String { "setup did not finish within 60 s" }

    override func enqueueMutation(_ connection: RedisConnection, sentAt: UInt64) {
        let id = connection.nextID
        connection.nextID += 1
        let game = shape.games[connection.game]
        // A fresh reward id per request keeps every unlock a success, like the bq run's
        // adjustments: both sides measure committed changes, not refusals.
        connection.outbox += RESP.command([
            "EVALSHA", sha, "5", "\(game):idem", "\(game):balance", "\(game):unlocked", "\(game):timeline", "\(game):version",
            "k\(runTag)-\(connection.index)-\(id)", "r\(runTag)-\(connection.index)-\(id)", "1", "\(game):channel", String(sentAt),
        ])
        noteMutation(connection, sentAt: sentAt)
    }

    override func handleLine(_ connection: RedisConnection, _ line: ArraySlice<UInt8>, now: UInt64) {
        let line = line.last == 0x0D ? line.dropLast() : line
        guard let first = line.first else { return }
        if connection.isSubscriber {
            handleSubscriberLine(connection, line, first: first, now: now)
            return
        }
        let ok = first == UInt8(ascii: ":") || first == UInt8(ascii: "+")
        guard ok || first == UInt8(ascii: "-") else { return }
        guard let request = connection.pop() else { return }
        if isInWindow(now) {
            if ok {
                result.acknowledged += 1
                latencies.recordAck(sentAt: request.sentAt, now: now)
            } else {
                let code = String(decoding: line.dropFirst().prefix { $0 != 0x20 }, as: UTF8.self)
                if code == "already_unlocked" || code == "insufficient_points" {
                    result.countRefusal(code)
                } else {
                    result.countError(code)
                }
            }
        }
        if shape.rate == nil, isLoading { enqueueMutation(connection, sentAt: now) }
    }

    private func handleSubscriberLine(_ connection: RedisConnection, _ line: ArraySlice<UInt8>, first: UInt8, now: UInt64) {
        if first == UInt8(ascii: "*") { connection.messageLine = 0; return }
        guard connection.messageLine >= 0 else { return }
        connection.messageLine += 1
        // A subscribe confirmation ends at line 5 with the count (":1"); a message's line 6
        // is its payload.
        if connection.messageLine == 5, first == UInt8(ascii: ":") {
            connection.messageLine = -1
            becomeReady(connection)
        } else if connection.messageLine == 6 {
            connection.messageLine = -1
            let stamp = line.prefix { $0 != 0x20 }
            if let sentAt = UInt64(String(decoding: stamp, as: UTF8.self)), recordDelivery(sentAt: sentAt, now: now) {
                result.patchesReceived += 1
            }
        }
    }
}
