import ArgumentParser
import Foundation
import JSON
import Server

/// Where a server keeps its data, for every command that reads or writes it (`serve`, `log`,
/// `verify`). Precedence: flags, then environment variables, then the config file, then
/// built-in defaults.
struct DataOptions: ParsableArguments {
    @Option(help: "Data directory (default ./data; serve creates it when missing).") var data: String?
    @Option(help: "Config file (default config/server.json when present).") var config: String?

    func load() throws -> ServerConfig {
        var result = ServerConfig()
        let path = config ?? (FileManager.default.fileExists(atPath: "config/server.json") ? "config/server.json" : nil)
        if let path {
            guard let data = FileManager.default.contents(atPath: path) else { throw ValidationError("\(path): cannot read the config file") }
            let json: JSONValue
            do { json = try JSONParser.parse(Array(data)) } catch { throw ValidationError("\(path): not valid JSON: \(error)") }
            try ConfigLoader.apply(file: json, path: path, to: &result)
        }
        try ConfigLoader.apply(environment: ProcessInfo.processInfo.environment, to: &result)
        if let data { result.dataDirectory = data }
        return result
    }
}

/// `serve`'s flags: the data options, and where to listen and what to seed.
struct ServerOptions: ParsableArguments {
    @Option(help: "Address to listen on (default 127.0.0.1).") var host: String?
    @Option(help: "TCP port (default 4747; 0 picks a free one).") var port: Int?
    @OptionGroup var location: DataOptions
    @Option(help: "Seed file for games without events (default seed/birthdayquest.json).") var seed: String?

    func load() throws -> ServerConfig {
        var result = try location.load()
        if let host { result.host = host }
        if let port { result.port = port }
        if let seed { result.seedPath = seed }
        return result
    }
}
