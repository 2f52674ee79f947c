import ArgumentParser
import Foundation
import Logging
import Server

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the game server.")

    @OptionGroup var options: ServerOptions
    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.") var logLevel: String = "info"

    func run() throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "bq.server")
        let config = try options.load()
        let server: GameServer
        do {
            server = try GameServer(config: config, logger: logger)
        } catch {
            FileHandle.standardError.write(Data("bq serve: \(error)\n".utf8))
            throw ExitCode(1)
        }
        // The one line scripts and tests wait for.
        FileHandle.standardOutput.write(Data("listening on \(config.host):\(server.port)\n".utf8))
        server.run()
    }
}
