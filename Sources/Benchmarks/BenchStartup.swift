import ArgumentParser
import Foundation

/// `bq bench startup`: fills one game's log through the server, then measures how long a
/// fresh `bq serve` takes to listen on that log, and its memory once it does.
struct BenchStartup: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "startup",
        abstract: "Fill a log with N events through the server, restart it, and time start-up to listening.")

    @Option(help: "Events to commit before the restart.") var events = 1_000_000
    @Option(help: "Connections x depth used to fill the log.") var connections = 50
    @Option(help: "Requests in flight per connection while filling.") var depth = 16
    @Option(help: "synchronous mode: full or normal (normal fills faster; start-up reads the same log).") var sync = "normal"
    @Option(help: "Restarts to time.") var restarts = 3
    @Option(help: "Seed file (default seed/birthdayquest.json).") var seed: String?
    @Flag(help: "Print one JSON object instead of the table.") var json = false

    func run() throws {
        let adminKey = "bench-admin-key"
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("bq-bench-startup-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: data) }
        let environment = benchServerEnvironment(games: ["main"], synchronous: sync, adminKey: adminKey, connections: connections + 8)
        let arguments = ["serve", "--port", "0", "--host", "127.0.0.1", "--log-level", "error"] + benchSeedArguments(seed)

        let filler = try SpawnedServer(arguments: arguments, environment: environment, dataDirectory: data, passDataFlag: true)
        let tokens = try claimCharacters(host: "127.0.0.1", port: filler.port, games: ["main"])
        var shape = LoadShape()
        shape.port = filler.port
        shape.games = ["main"]
        shape.connections = connections
        shape.depth = depth
        shape.subscribersPerGame = 0
        shape.durationSeconds = 3600
        shape.warmupSeconds = 0
        shape.adminKey = adminKey
        shape.stopAfterAcknowledged = events
        let started = benchNow()
        let fill = try runLoad(shape: shape, tokens: tokens, server: filler)
        let fillSeconds = Double(benchNow() - started) / 1e9
        filler.stop(removeData: false)
        let logBytes = (try? FileManager.default.contentsOfDirectory(atPath: data))?.reduce(0) { total, name in
            total + (((try? FileManager.default.attributesOfItem(atPath: data + "/" + name))?[.size] as? Int) ?? 0)
        } ?? 0

        var timings: [Double] = []
        var rss: [Double] = []
        for _ in 0..<restarts {
            let server = try SpawnedServer(arguments: arguments, environment: environment, dataDirectory: data, passDataFlag: true)
            timings.append(server.startupSeconds)
            rss.append(Double(server.peakRSSBytes ?? 0) / 1_048_576)
            server.stop(removeData: false)
        }
        if json {
            let object: [String: Any] = [
                "events": fill.acknowledged, "fillSeconds": fillSeconds, "logBytes": logBytes,
                "startupSeconds": timings, "peakRSSMiB": rss, "synchronous": sync,
            ]
            let bytes = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            print(String(decoding: bytes, as: UTF8.self))
        } else {
            print(String(format: "filled        %d events in %.1f s (%.0f/s), log %.1f MiB", fill.acknowledged, fillSeconds,
                         Double(fill.acknowledged) / fillSeconds, Double(logBytes) / 1_048_576))
            print("start-up      " + timings.map { String(format: "%.3f s", $0) }.joined(separator: ", ") + " (launch to listening)")
            print("peak RSS      " + rss.map { String(format: "%.1f MiB", $0) }.joined(separator: ", "))
        }
    }
}
