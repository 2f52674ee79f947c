import ArgumentParser
import Foundation
import JSON
import Server

/// The flags every server-side command shares. Precedence: flags, then
/// environment variables, then the config file, then built-in defaults.
struct ServerOptions: ParsableArguments {
    @Option(help: "Address to listen on (default 127.0.0.1).") var host: String?
    @Option(help: "TCP port (default 4747; 0 picks a free one).") var port: Int?
    @Option(help: "Data directory, created if missing (default ./data).") var data: String?
    @Option(help: "Config file (default config/server.json when present).") var config: String?
    @Option(help: "Seed file for games without events (default seed/birthdayquest.json).") var seed: String?

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
        if let host { result.host = host }
        if let port { result.port = port }
        if let data { result.dataDirectory = data }
        if let seed { result.seedPath = seed }
        return result
    }
}
