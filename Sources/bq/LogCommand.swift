import ArgumentParser
import EventLog
import Foundation
import JSON
import Server
import Views

struct LogCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "log", abstract: "Print a game's events.")

    @OptionGroup var options: DataOptions
    @Option(help: "The game (default: the configured default game); one the log does not hold is an error.") var game: String?
    @Option(help: "Only events after this version.") var after: Int64 = 0
    @Option(help: "At most this many events.") var limit: Int = 1_000_000
    @Flag(help: "One JSON object per line.") var json = false

    func run() throws {
        let config = try options.loadExistingLog(command: "log")
        do {
            try printEvents(of: config)
        } catch let exit as ExitCode {
            throw exit
        } catch {
            // A log that SQLite cannot read (damaged, not a database), said as the other
            // commands say it rather than as a bare "Error:".
            try? FileHandle.standardError.write(contentsOf: Data(("bq log: cannot read \(config.databasePath): \(error)"
                + GameServer.fullDiskHint(config.dataDirectory, advice: "free some space") + "\n").utf8))
            throw ExitCode.failure
        }
    }

    private func printEvents(of config: ServerConfig) throws {
        let store = try EventStore(path: config.databasePath, options: config.readerOptions)
        defer { store.close() }
        warnOfFramesLost(store, path: config.databasePath, command: "log")
        let name = game ?? config.defaultGame
        var cursor = after
        var printed = 0
        while printed < limit {
            let batch = try store.events(game: name, after: cursor, limit: min(1_000, limit - printed))
            if batch.isEmpty { break }
            for event in batch {
                if json {
                    // As in the `events` op: no credentials (token hashes, devices, PINs).
                    let data = EventRedaction.shown(type: event.type, payload: event.payload)
                    let line: JSONValue = .object(["game": .string(name), "version": .int(Int(event.version)), "type": .string(event.type),
                                                   "actor": .string(event.actor), "at": .string(formatTimestamp(event.at)),
                                                   "idem": event.idempotencyKey.map { .string($0) } ?? .null, "data": data])
                    print(line.serialized(sortedKeys: true))
                } else {
                    print("\(String(event.version).padding(toLength: 6, withPad: " ", startingAt: 0)) \(formatTimestamp(event.at))  \(event.actor.padding(toLength: 8, withPad: " ", startingAt: 0)) \(event.type)\(summary(event))")
                }
                cursor = event.version
                printed += 1
            }
        }
        let games = try store.games()
        let others = games.filter { $0 != name }
        if printed == 0, !games.contains(name), !others.isEmpty {
            // A misspelt name, most likely: an exit status a script can tell from a quiet game.
            let note = "bq log: \(config.databasePath) holds no game \(name); it holds \(others.joined(separator: ", "))\n"
            try? FileHandle.standardError.write(contentsOf: Data(note.utf8))
            throw ExitCode.failure
        }
        if printed == 0 && !json { print("game \(name): no events") }
        // The default game is one of several: said where a person looks, out of the way of a script.
        if game == nil, !others.isEmpty {
            let note = "bq log: this log also holds \(others.joined(separator: ", ")) (bq log --game NAME)\n"
            try? FileHandle.standardError.write(contentsOf: Data(note.utf8))
        }
    }

    /// The payload's scalar fields, short, so a person can scan the log.
    private func summary(_ event: StoredEvent) -> String {
        let shown = EventRedaction.shown(type: event.type, payload: event.payload)
        if shown == .null { return "  (payload unreadable: not JSON)" }
        guard case .object(let fields) = shown else { return "" }
        let parts = fields.keys.sorted().compactMap { key -> String? in
            guard key != "content" else { return nil }
            switch fields[key]! {
            case .string(let text): return "\(key)=\((text.count > 40 ? String(text.prefix(37)) + "..." : text).terminalSafe)"
            case .int(let number): return "\(key)=\(number)"
            case .bool(let flag): return "\(key)=\(flag)"
            default: return nil
            }
        }
        return parts.isEmpty ? "" : "  " + parts.joined(separator: " ")
    }
}
