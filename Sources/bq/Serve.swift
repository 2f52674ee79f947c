import ArgumentParser
import Foundation
import Logging
import Server
import UV
import POSIXSupport

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the game server.", discussion: settingsHelp)

    /// The flags are a few of the settings; a person at the terminal finds the rest here.
    private static var settingsHelp: String {
        "Every setting, as a key of the config file (config/server.json, or --config) or an environment variable; "
            + "a flag overrides both, a variable the file. docs/configuration.md gives each one's default and range.\n\n"
            + ConfigLoader.settings.map { "  \($0.key) (\($0.environment))\n      \($0.help)" }.joined(separator: "\n")
    }

    @OptionGroup var options: ServerOptions
    @Option(help: "Log level: trace, debug, info, notice, warning (or warn), error, critical; any case.") var logLevel: String = "info"

    /// The level asked for; "warn" and capitals are accepted, as launch scripts write them.
    private var level: Logger.Level? {
        let name = logLevel.lowercased()
        return name == "warn" ? .warning : Logger.Level(rawValue: name)
    }

    func run() throws {
        // Until the server's signal watchers are in place: a SIGTERM during start-up (a long log
        // to load) waits, pending, and is then a clean stop, exit 0, not a death by signal; a
        // start that fails keeps them blocked, and its error is printed rather than cut short.
        // First thing, so that only the process's own launch is left outside.
        blockSignals(GameServer.stopSignals.map(\.0))
        guard let level else {
            // A setting like any other: one line and exit 64, before anything is made.
            let known = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
            try? FileHandle.standardError.write(contentsOf: Data("bq serve: --log-level: must be one of \(known) (any case; warn for warning), got \(logLevel)\n".utf8))
            throw ExitCode.validationFailure
        }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "bq.server")
        let config = try options.load()
        // A process-wide setting, so the executable's to make, not the server library's. Each
        // connection is a descriptor; the log, its WAL and the listener need a few more.
        let descriptorsNeeded = config.limits.maxConnections + 64
        let descriptors = raiseOpenFileLimit(to: descriptorsNeeded)
        if descriptors < descriptorsNeeded {
            logger.warning("only \(descriptors) open files allowed (ulimit -n): connections past about \(max(0, descriptors - 64)) will fail to be accepted, not only those past max_connections \(config.limits.maxConnections)")
        }
        // A write to a client that has gone away fails with EPIPE instead of ending the process.
        ignoreSIGPIPE()
        let server: GameServer
        do {
            server = try GameServer(config: config, logger: logger)
        } catch {
            // The one start-up failure an organizer meets on a working machine, said for them.
            if let failure = error as? UVError, failure.name == "EADDRINUSE" {
                try? FileHandle.standardError.write(contentsOf: Data(("bq serve: cannot listen on \(ServerConfig.addressText(host: config.host, port: config.port)): "
                    + "the port is in use (a bq serve already running? another port with --port)\n").utf8))
                throw ExitCode(1)
            }
            // One problem per line (a seed's, say), each said to be the server's.
            let lines = "\(error)".split(separator: "\n", omittingEmptySubsequences: false).map { "bq serve: \($0)\n" }
            try? FileHandle.standardError.write(contentsOf: Data(lines.joined().utf8))
            throw ExitCode(1)
        }
        // The watchers are in place now (unblocked also for a process whose parent started it
        // with them blocked, which would otherwise never see them).
        unblockSignals(GameServer.stopSignals.map(\.0))
        // The one line scripts and tests wait for.
        try? FileHandle.standardOutput.write(contentsOf: Data("listening on \(ServerConfig.addressText(host: config.host, port: server.port))\n".utf8))
        // A setting that guards the gifts is said, so that a misspelt variable does not leave
        // the organizer believing it is on.
        if config.claimsNeedPIN {
            logger.notice("claims_need_pin is on: a character that has a PIN is claimed only with it, even while free")
        }
        // "0.0.0.0" is no address to give the players: the ones this machine has are. A socket
        // on 0.0.0.0 takes IPv4 alone, so only those; one on "::" takes both.
        if ["0.0.0.0", "::"].contains(config.host) {
            let addresses = externalInterfaceAddresses(includingIPv6: config.host != "0.0.0.0")
            let said = addresses.isEmpty
                ? "listening on every interface, but this machine has no address other machines could use"
                : "players on other machines: bq play --host ADDRESS --port \(server.port), ADDRESS one of "
                    + addresses.joined(separator: ", ")
            logger.notice("\(said)")
        }
        server.run()
    }
}
