import ArgumentParser
import EventLog
import Foundation
import UV
import POSIXSupport

/// `bq bench`: benchmarks run on purpose, never from the test suite. The one public type of this
/// target: the `bq` executable mounts it as a subcommand.
public struct Bench: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Benchmarks: load over real TCP, the bare echo baseline, the event log, request decoding.",
        subcommands: [BenchLoad.self, BenchEcho.self, BenchRedis.self, BenchLog.self, BenchStartup.self, BenchDecode.self, BenchEchoServer.self])

    public init() {}
}

/// The load shape flags `load` and `echo` share.
struct LoadOptions: ParsableArguments {
    @Option(help: "Server address (ignored with --spawn, and by echo, which starts its own server).") var host = "127.0.0.1"
    @Option(help: "Server port (ignored with --spawn, and by echo).") var port = 4747
    @Option(help: "Games to spread the connections over: main, g2, g3, ...") var games = 4
    @Option(help: "Mutating connections in all.") var connections = 50
    @Option(help: "Requests in flight per connection (closed loop).") var depth = 1
    @Option(help: "Subscribed connections per game.") var subscribers = 2
    @Option(help: "Measured seconds (after the warm-up).") var duration = 10.0
    @Option(help: "Warm-up seconds, not measured.") var warmup = 1.0
    @Option(help: "Open loop: total mutations per second offered at a fixed rate.") var rate: Double?
    @Flag(help: "Print one JSON object instead of the table.") var json = false
    @Flag(help: "Only mutations that always commit (the birthday person's connections act as admin).") var durableOnly = false

    func validate() throws {
        guard games >= 1, connections >= 1, depth >= 1, subscribers >= 0, duration > 0, warmup >= 0 else {
            throw ValidationError("games, connections and depth must be at least 1; duration positive")
        }
        if let rate, rate <= 0 { throw ValidationError("--rate must be positive") }
    }

    var gameNames: [String] { (0..<games).map { $0 == 0 ? "main" : "g\($0 + 1)" } }

    func shape(port: Int, adminKey: String, echo: Bool) -> LoadShape {
        var shape = LoadShape()
        shape.host = host
        shape.port = port
        shape.games = gameNames
        shape.connections = connections
        shape.depth = depth
        shape.subscribersPerGame = echo ? 0 : subscribers
        shape.durationSeconds = duration
        shape.warmupSeconds = warmup
        shape.rate = rate
        shape.adminKey = adminKey
        shape.echo = echo
        shape.includeBirthday = !durableOnly
        return shape
    }

    func describe(_ result: LoadResult) -> String { json ? result.json() : result.table() }
}

/// The environment a spawned benchmark server runs with: no rate limit in the way, and room for
/// the `connections` the run opens (a bound far above them would only draw the server's
/// warning that the open-file limit is lower).
func benchServerEnvironment(games: [String], synchronous: String, adminKey: String, connections: Int) -> [String: String] {
    [
        "BQ_GAMES": games.joined(separator: ","),
        "BQ_DEFAULT_GAME": games[0],
        "BQ_SYNCHRONOUS": synchronous,
        "BQ_REQUESTS_PER_SECOND": "10000000",
        "BQ_CHANGES_PER_SECOND": "10000000",
        "BQ_MAX_CONNECTIONS": String(max(connections * 2, 256)),
        "BQ_ADMIN_KEY": adminKey,
        "BQ_IDLE_TIMEOUT_SECONDS": "0",
    ]
}

/// The seed flags for a spawned server: the flag, else seed/birthdayquest.json here or next to
/// the package root the executable was built in (.build/release/bq), else none (the server then
/// seeds the copy built into it).
func benchSeedArguments(_ flag: String?) -> [String] {
    if let flag { return ["--seed", flag] }
    let candidates = [
        FileManager.default.currentDirectoryPath + "/seed/birthdayquest.json",
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("seed/birthdayquest.json").path,
    ]
    return candidates.first { FileManager.default.fileExists(atPath: $0) }.map { ["--seed", $0] } ?? []
}

/// Runs one load measurement against a server at `port`, reading the spawned server's CPU over
/// the measured window only.
func runLoad(shape: LoadShape, tokens: [[String: String]], server: SpawnedServer?) throws -> LoadResult {
    let driver = try LoadDriver(shape: shape, tokens: tokens)
    var cpuAtStart: Double?
    var cpuAtEnd: Double?
    var clientAtStart = 0.0
    var clientAtEnd = 0.0
    var windowStarted = false
    driver.onWarmupEnd = {
        windowStarted = true
        cpuAtStart = server?.cpuSeconds
        clientAtStart = processCPUSeconds()
    }
    driver.onMeasureEnd = {
        if !windowStarted { cpuAtStart = server?.cpuSeconds; clientAtStart = processCPUSeconds() }
        cpuAtEnd = server?.cpuSeconds
        clientAtEnd = processCPUSeconds()
    }
    var result = try driver.run()
    result.clientCPUSeconds = clientAtEnd - clientAtStart
    describeRun(&result, shape: shape, server: server, serverCPU: (cpuAtStart, cpuAtEnd))
    return result
}

/// What every load result says about its shape and the server it ran against.
private func describeRun(_ result: inout LoadResult, shape: LoadShape, server: SpawnedServer?,
                         serverCPU: (start: Double?, end: Double?)) {
    result.games = shape.games.count
    result.connections = shape.connections
    result.depth = shape.depth
    result.subscribersPerGame = shape.subscribersPerGame
    result.offeredRate = shape.rate
    result.mode = shape.rate == nil ? "closed" : "open"
    if let start = serverCPU.start, let end = serverCPU.end { result.serverCPUSeconds = end - start }
    if let server {
        result.serverPeakRSSMiB = server.peakRSSBytes.map { Double($0) / 1_048_576 }
        result.serverRSSMiB = server.rssBytes.map { Double($0) / 1_048_576 }
        result.serverStartupSeconds = server.startupSeconds
    }
}

/// The same measurement through the Client library (`ClientLibraryDriver`).
func runClientLibraryLoad(shape: LoadShape, tokens: [[String: String]], server: SpawnedServer?) throws -> LoadResult {
    var cpuAtStart: Double?
    var cpuAtEnd: Double?
    var result = try ClientLibraryDriver(shape: shape, tokens: tokens).run { starting in
        if starting { cpuAtStart = server?.cpuSeconds } else { cpuAtEnd = server?.cpuSeconds }
    }
    result.target = "bq (client library)"
    describeRun(&result, shape: shape, server: server, serverCPU: (cpuAtStart, cpuAtEnd))
    return result
}

struct BenchLoad: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "Drive a bq server with mutations and subscribers over TCP; report rate, latencies, CPU and memory.")

    @OptionGroup var load: LoadOptions
    @Flag(help: "Start a bq serve child on a temporary data directory, and stop it afterwards.") var spawn = false
    @Option(help: "synchronous mode of the spawned server: full or normal.") var sync = "full"
    @Option(help: "Admin key (a spawned server gets this one).") var adminKey = "bench-admin-key"
    @Option(help: "Seed file for a spawned server (default seed/birthdayquest.json).") var seed: String?
    @Option(help: "Data directory for a spawned server (default: a new temporary one, removed after).") var data: String?
    @Flag(help: "Drive through the Client library (a blocking GameClient per connection, a thread per mutating connection) instead of the one-loop driver; closed loop only.")
    var clientLibrary = false

    func validate() throws {
        if clientLibrary, load.rate != nil { throw ValidationError("--client-library drives a closed loop only: drop --rate") }
    }

    func run() throws {
        var server: SpawnedServer?
        var port = load.port
        if spawn {
            server = try SpawnedServer(
                arguments: ["serve", "--port", "0", "--host", "127.0.0.1", "--log-level", "error"] + benchSeedArguments(seed),
                environment: benchServerEnvironment(games: load.gameNames, synchronous: sync, adminKey: adminKey,
                                                    connections: load.connections + load.subscribers * load.games),
                dataDirectory: data, passDataFlag: true)
            port = server!.port
        }
        defer { server?.stop() }
        let host = spawn ? "127.0.0.1" : load.host
        let tokens = try claimCharacters(host: host, port: port, games: load.gameNames)
        var shape = load.shape(port: port, adminKey: adminKey, echo: false)
        shape.host = host
        var result = clientLibrary
            ? try runClientLibraryLoad(shape: shape, tokens: tokens, server: server)
            : try runLoad(shape: shape, tokens: tokens, server: server)
        result.synchronous = spawn ? sync : nil
        print(load.describe(result))
    }
}

/// Claims every character of each game for the device "bq-bench" (the same device may claim
/// again, so runs repeat against one server) and returns the tokens.
func claimCharacters(host: String, port: Int, games: [String]) throws -> [[String: String]] {
    var tokens: [[String: String]] = []
    for game in games {
        let socket = try BlockingLineSocket(host: host, port: port)
        defer { socket.close() }
        var byCharacter: [String: String] = [:]
        for character in BenchActor.characters {
            try socket.sendLine(#"{"id":1,"op":"claim","character":"\#(character)","device":"bq-bench","game":"\#(game)"}"#)
            while true {
                guard let line = try socket.readLine(timeoutMilliseconds: 10_000) else {
                    throw BenchError("the server closed the connection while claiming \(character) in \(game)")
                }
                let slice = ArraySlice(line)
                if BenchLineScan.isPush(slice) { continue }
                guard BenchLineScan.isOK(slice),
                      let token = BenchLineScan.stringValue(after: Array(#""token":""#.utf8), in: slice, limit: 400) else {
                    throw BenchError("claim \(character) in \(game) refused: \(String(decoding: line, as: UTF8.self))")
                }
                byCharacter[character] = token
                break
            }
        }
        tokens.append(byCharacter)
    }
    return tokens
}

struct BenchLog: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "The event log alone: appends/s and commit latency per batch size, at synchronous FULL and NORMAL.")

    @Option(help: "Appends per case.") var events = 20_000
    @Option(help: "Directory for the databases (default: a new temporary one, removed after).") var directory: String?

    func run() throws {
        let path = directory ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("bq-bench-log-\(getpid())").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        defer { if directory == nil { try? FileManager.default.removeItem(atPath: path) } }
        print(LogBenchmark.run(directory: path, eventsPerCase: events))
    }
}
