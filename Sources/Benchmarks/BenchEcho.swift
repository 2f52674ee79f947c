import ArgumentParser
import Foundation
import UV
import POSIXSupport

/// `bq bench echo`: the ceiling a libuv NDJSON server can reach on this machine at the same
/// shape, measured with the same driver against a server that only sends each line back.
struct BenchEcho: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "echo",
        abstract: "The baseline: a bare libuv NDJSON echo server (a child process) under the same driver.")

    @OptionGroup var load: LoadOptions

    func run() throws {
        let server = try SpawnedServer(arguments: ["bench", "echo-server", "--port", "0"], environment: [:],
                                       dataDirectory: nil, passDataFlag: false)
        defer { server.stop() }
        var shape = load.shape(port: server.port, adminKey: "", echo: true)
        shape.host = "127.0.0.1"  // where the child listens, whatever --host says
        var result = try runLoad(shape: shape, tokens: [], server: server)
        result.target = "echo"
        print(load.describe(result))
    }
}

/// The echo server itself, as a child process so that it has its own CPU figures.
struct BenchEchoServer: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "echo-server",
        abstract: "A bare libuv NDJSON echo server (used by bq bench echo).",
        shouldDisplay: false)

    @Option var host = "127.0.0.1"
    @Option var port = 0

    func run() throws {
        ignoreSIGPIPE()
        let loop = try EventLoop()
        let server = try TCPServer(loop: loop, host: host, port: port) { connection in
            connection.setNoDelay(true)
            var partial: [UInt8] = []
            // Each read is answered with every complete line it finished, in one write: the
            // same gathering the game server does per loop turn, and nothing else.
            connection.onRead = { [unowned connection] bytes in
                guard let last = bytes.lastIndex(of: 0x0A) else {
                    partial += bytes
                    return
                }
                if partial.isEmpty {
                    connection.write(last == bytes.count - 1 ? bytes : Array(bytes[...last]))
                } else {
                    partial += bytes[...last]
                    connection.write(partial)
                    partial.removeAll(keepingCapacity: true)
                }
                if last < bytes.count - 1 { partial += bytes[(last + 1)...] }
            }
            connection.startReading()
        }
        let stop = try SignalWatcher(loop: loop, signal: SIGTERM) { _ in loop.stop() }
        _ = stop
        try? FileHandle.standardOutput.write(contentsOf: Data("listening on \(host):\(server.localPort)\n".utf8))
        loop.run()
    }
}
