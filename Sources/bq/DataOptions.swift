import ArgumentParser
import Foundation
import JSON
import POSIXSupport
import EventLog
import Server

/// Where a server keeps its data, for every command that reads or writes it (`serve`, `log`,
/// `verify`, `backup`), and the settings found there. Precedence: flags, then environment variables, then the config file, then
/// built-in defaults.
struct DataOptions: ParsableArguments {
    @Option(help: "Data directory (default: BQ_DATA, else the config's data, else ./data; bq serve creates it when missing).") var data: String?
    @Option(help: "Config file (default config/server.json when present).") var config: String?

    /// The settings, or, when any source has a bad one, a line naming it on stderr and exit
    /// 64 before anything is opened or made.
    func load(command: String, flags: [String: JSONValue] = [:]) throws -> ServerConfig {
        do {
            // A misspelt variable would otherwise be ignored without a word (a `BQ_DATA` typo
            // reads the default directory); said first, since it may be why another is refused.
            let environment = ProcessInfo.processInfo.environment
            let readElsewhere: Set = [Terminal.plainInputVariable]
            for name in ConfigLoader.unknownVariables(in: environment, readElsewhere: readElsewhere) {
                let meant = ConfigLoader.likelyMeant(name, readElsewhere: readElsewhere).map { "did you mean \($0)? " } ?? ""
                try? FileHandle.standardError.write(contentsOf: Data(
                    "bq \(command): warning: \(name) is set but is no setting (\(meant)docs/configuration.md lists them): ignored\n".utf8))
            }
            return try settings(flags: flags)
        } catch {
            try? FileHandle.standardError.write(contentsOf: Data("bq \(command): \(error)\n".utf8))
            throw ExitCode.validationFailure
        }
    }

    /// As `load`, for a command that reads a log already there (`log`, `verify`, `backup`): a
    /// data directory without one is said in words, with `exitCode`, rather than as SQLite's
    /// "unable to open database file".
    func loadExistingLog(command: String, exitCode: Int32 = 1) throws -> ServerConfig {
        let config = try load(command: command)
        guard FileManager.default.fileExists(atPath: config.databasePath) else {
            let advice = data != nil ? "is --data the server's data directory?"
                : ProcessInfo.processInfo.environment["BQ_DATA"] != nil ? "is BQ_DATA the server's data directory?"
                : config.dataDirectory != ServerConfig().dataDirectory ? "is the config file's data the server's data directory?"
                : "run this where bq serve runs, or name its data directory with --data"
            try? FileHandle.standardError.write(contentsOf: Data("bq \(command): no event log at \(config.databasePath): \(advice)\n".utf8))
            throw ExitCode(exitCode)
        }
        return config
    }

    private func settings(flags: [String: JSONValue]) throws(ConfigError) -> ServerConfig {
        var result = ServerConfig()
        let path = config ?? (FileManager.default.fileExists(atPath: "config/server.json") ? "config/server.json" : nil)
        if let path {
            guard !path.isEmpty else { throw ConfigError("--config: the path is empty") }
            guard let data = FileManager.default.contents(atPath: path) else {
                // Why, as the system says it: a path mistyped and a file not readable ask for different fixes.
                let isDirectory = (try? FileManager.default.attributesOfItem(atPath: path))?[.type] as? FileAttributeType == .typeDirectory
                let reason = isDirectory ? "it is a directory" : readabilityError(of: path) ?? "it could not be read"
                throw ConfigError("\(path): cannot read the config file (\(reason))")
            }
            let json: JSONValue
            // A byte order mark, which some editors put first, says nothing here.
            let bytes = Array(data.starts(with: [0xEF, 0xBB, 0xBF]) ? data.dropFirst(3) : data[...])
            do {
                json = try JSONParser.parse(bytes)
            } catch {
                // Edited by hand, as a seed is: the line and column too.
                let (line, column) = error.place(in: bytes)
                throw ConfigError("\(path): not valid JSON: \(error) (line \(line), column \(column))")
            }
            // JSON lets a name come twice, and the last would win without a word.
            var seen = Set<String>()
            for name in JSONParser.memberNames(bytes) ?? [] where !seen.insert(name).inserted {
                throw ConfigError("\(path): \"\(name)\" is set twice")
            }
            try ConfigLoader.apply(file: json, path: path, to: &result)
        }
        try ConfigLoader.apply(environment: ProcessInfo.processInfo.environment, to: &result)
        var flags = flags
        if let data { flags["data"] = .string(data) }
        try ConfigLoader.apply(flags: flags, to: &result)
        return result
    }
}

/// `serve`'s flags: the data options, and where to listen and what to seed.
struct ServerOptions: ParsableArguments {
    @Option(help: "Address to listen on (default 127.0.0.1).") var host: String?
    // Takes the next word whatever it is: "-1" is a port to refuse with the range, not an option.
    @Option(parsing: .unconditional, help: "TCP port (default 4747; 0 picks a free one).") var port: Int?
    @OptionGroup var location: DataOptions
    @Option(help: "Seed file for games without events (default seed/birthdayquest.json, or the copy built into bq when that is missing; a file named here must be there).") var seed: String?

    func load() throws -> ServerConfig {
        var flags: [String: JSONValue] = [:]
        if let host { flags["host"] = .string(host) }
        if let port { flags["port"] = .int(port) }
        if let seed { flags["seed"] = .string(seed) }
        return try location.load(command: "serve", flags: flags)
    }
}

/// A tool that read a log whose WAL lacked commits its index counted says so: the first to open
/// the log rebuilds the index, and the server's next start can no longer tell.
func warnOfFramesLost(_ store: EventStore, path: String, command: String) {
    guard store.walFramesLost > 0 else { return }
    let text = "bq \(command): warning: \(path)-wal lacks at least \(store.walFramesLost) frames (page writes) of its newest "
        + "commits that its index counted (cut short, or lost to a power cut): they are lost, and the log is read as it "
        + "was before them\n"
    try? FileHandle.standardError.write(contentsOf: Data(text.utf8))
}
