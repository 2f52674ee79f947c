import Domain
import EventLog
import JSON
import POSIXSupport

/// Builds a ServerConfig over its defaults from three sources: the config file, then
/// environment variables, then command-line flags (the caller applies flags last). Every
/// setting is listed once, here, with its checks; docs/configuration.md mirrors this table and
/// `bq serve --help` lists it. (The file's own checks, JSON and no name set twice, are its
/// reader's; `--log-level` is a flag of `serve` alone, not a setting.)
public enum ConfigLoader {
    public struct Setting: Sendable {
        public let key: String
        public let environment: String
        public let help: String
        /// Its value is a number: the environment's text is read as one. Text settings take it
        /// as it is, so that `BQ_ADMIN_KEY=007` is "007", not 7.
        var isNumber = false
        let apply: @Sendable (inout ServerConfig, JSONValue) throws(ConfigError) -> Void
    }

    public static let settings: [Setting] = [
        // An IPv6 address may come as URLs write it, in brackets (`[::1]`).
        string("host", "BQ_HOST", "address to listen on") { $0.host = withoutBrackets($1) },
        int("port", "BQ_PORT", "TCP port (0 picks a free one)", 0...65_535) { $0.port = $1 },
        string("data", "BQ_DATA", "data directory: the SQLite log and the admin key file") { $0.dataDirectory = $1 },
        string("seed", "BQ_SEED", "seed file for games without events") {
            $0.seedPath = $1
            $0.seedIsNamed = true
        },
        Setting(key: "default_game", environment: "BQ_DEFAULT_GAME", help: "the game a request means when it names none") { config, value throws(ConfigError) in
            guard case .string(let name) = value, !name.isEmpty else { throw ConfigError("default_game must be a non-empty string") }
            config.defaultGame = try gameName(name, of: "default_game")
        },
        Setting(key: "games", environment: "BQ_GAMES", help: "the games this server holds besides default_game (comma-separated in the environment)") { config, value throws(ConfigError) in
            switch value {
            case .array(let items):
                config.games = try items.map { item throws(ConfigError) in
                    guard case .string(let name) = item, !name.isEmpty else { throw ConfigError("games must be a list of names") }
                    return try gameName(name, of: "games")
                }
            case .string(let list) where list.trimmingSpaces.isEmpty:
                // The environment's way to say none, over a config file's list.
                config.games = []
            case .string(let list):
                let names = list.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingSpaces }
                // `a,,b` is a slip, as `["a", "", "b"]` is in a file.
                guard !names.contains("") else { throw ConfigError("games must be a list of non-empty names, got \"\(list)\"") }
                config.games = try names.map { name throws(ConfigError) in try gameName(name, of: "games") }
            default: throw ConfigError("games must be a list of names")
            }
        },
        string("admin_key", "BQ_ADMIN_KEY", "organizer console key; made in the data directory when unset") { $0.adminKey = $1 },
        Setting(key: "synchronous", environment: "BQ_SYNCHRONOUS", help: "full (default: a commit survives power loss), normal or off") { config, value throws(ConfigError) in
            guard case .string(let raw) = value, let mode = SyncMode(rawValue: raw.lowercased()) else {
                throw ConfigError("synchronous must be \"full\", \"normal\" or \"off\", got \(value.excerpt(40))")
            }
            config.synchronous = mode
        },
        int("snapshot_every", "BQ_SNAPSHOT_EVERY", "events between snapshots of a game's state", 1...10_000_000) { $0.snapshotEvery = $1 },
        int("idempotency_window", "BQ_IDEMPOTENCY_WINDOW", "idempotency keys are remembered for this many recent events of a game", 1_000...100_000_000) { $0.idempotencyWindow = $1 },
        int("busy_timeout_ms", "BQ_BUSY_TIMEOUT_MS", "how long a commit waits for another process's lock on the database", 0...600_000) { $0.busyTimeoutMilliseconds = $1 },
        int("max_batch_requests", "BQ_MAX_BATCH_REQUESTS", "commands per SQLite transaction at most", 1...100_000) { $0.maxBatchRequests = $1 },
        int("max_line_bytes", "BQ_MAX_LINE_BYTES", "longest request line", 256...16 << 20) { $0.limits.maxLineBytes = $1 },
        int("max_connections", "BQ_MAX_CONNECTIONS", "open connections at once", 1...1_000_000) { $0.limits.maxConnections = $1 },
        int("max_connections_per_address", "BQ_MAX_CONNECTIONS_PER_ADDRESS", "open connections from one address at once (loopback aside)", 1...1_000_000) {
            $0.limits.maxConnectionsPerAddress = $1
        },
        int("requests_per_second", "BQ_REQUESTS_PER_SECOND", "requests per second per connection", 1...10_000_000) { $0.limits.requestsPerSecond = $1 },
        int("resumes_per_second", "BQ_RESUMES_PER_SECOND", "subscribes from a past version per second per viewer", 1...1_000_000) {
            $0.limits.resumesPerSecond = $1
        },
        int("changes_per_second", "BQ_CHANGES_PER_SECOND", "mutations per second per player, over all their connections",
            1...10_000_000) { $0.limits.changesPerSecond = $1 },
        int("max_bad_lines", "BQ_MAX_BAD_LINES", "bad lines in a row before bye too_many_errors", 1...1_000_000) { $0.limits.maxBadLines = $1 },
        int("max_queued_bytes", "BQ_MAX_QUEUED_BYTES", "outbound bytes queued per connection before patches are held", 4_096...1 << 30) { $0.limits.maxQueuedBytes = $1 },
        int("max_total_queued_bytes", "BQ_MAX_TOTAL_QUEUED_BYTES", "outbound bytes queued for all connections together before those owing the most are closed (subscribers only when they also ask for more)", 65_536...1 << 40) { $0.limits.maxTotalQueuedBytes = $1 },
        int("max_pending_requests", "BQ_MAX_PENDING_REQUESTS", "unanswered requests per connection before reading pauses", 1...1_000_000) { $0.limits.maxPendingRequests = $1 },
        int("idle_timeout_seconds", "BQ_IDLE_TIMEOUT_SECONDS", "seconds a connection may send nothing before it is closed (bye idle_timeout); 0 is off", 0...10_000_000) { $0.limits.idleTimeoutSeconds = $1 },
        int("max_json_depth", "BQ_MAX_JSON_DEPTH", "nesting depth of a request's JSON", 2...512) { $0.limits.maxJSONDepth = $1 },
        bool("claims_need_pin", "BQ_CLAIMS_NEED_PIN", "a character with a PIN is claimed only with it, even when nobody holds it") {
            $0.claimsNeedPIN = $1
        },
    ]

    private static let settingsByKey = Dictionary(uniqueKeysWithValues: settings.map { ($0.key, $0) })

    /// Applies a config file's JSON object; unknown keys are errors (a typo must not pass silently).
    public static func apply(file json: JSONValue, path: String, to config: inout ServerConfig) throws(ConfigError) {
        guard case .object(let fields) = json else { throw ConfigError("\(path): must be a JSON object") }
        for key in fields.keys.sorted() {
            guard let setting = settingsByKey[key] else {
                throw ConfigError("\(path): unknown setting \"\(key)\" (known: \(settings.map(\.key).joined(separator: ", ")))")
            }
            do {
                try setting.apply(&config, fields[key]!)
            } catch {
                throw ConfigError("\(path): \(error.message)")
            }
        }
    }

    /// Applies environment variables (strings), parsing numbers where a setting wants one.
    public static func apply(environment: [String: String], to config: inout ServerConfig) throws(ConfigError) {
        for setting in settings {
            guard let raw = environment[setting.environment] else { continue }
            let value: JSONValue = setting.isNumber ? Self.digits(raw).map { .int($0) } ?? .string(raw) : .string(raw)
            do {
                try setting.apply(&config, value)
            } catch {
                throw ConfigError("\(setting.environment): \(error.message)")
            }
        }
    }

    /// The `BQ_` variables of `environment` that name no setting (a misspelt one is otherwise
    /// ignored without a word), less `readElsewhere`, those other parts of the program read.
    public static func unknownVariables(in environment: [String: String], readElsewhere: Set<String> = []) -> [String] {
        let known = Set(settings.map(\.environment)).union(readElsewhere)
        return environment.keys.filter { $0.hasPrefix("BQ_") && !known.contains($0) }.sorted()
    }

    /// The setting's variable `name` is most likely a misspelling of: the nearest by edits
    /// (a letter added, dropped or changed), when two edits at most make one of the other.
    public static func likelyMeant(_ name: String, readElsewhere: Set<String> = []) -> String? {
        let known = Set(settings.map(\.environment)).union(readElsewhere).sorted()
        let nearest = known.map { ($0, editDistance(Array(name.uppercased().utf8), Array($0.utf8))) }.min { $0.1 < $1.1 }
        return nearest.flatMap { $0.1 <= 2 ? $0.0 : nil }
    }

    /// Levenshtein's distance, by rows.
    private static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1]
            for (j, y) in b.enumerated() {
                current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }

    /// Applies command-line flags, keyed by setting (`port`, not `--port`), through the same
    /// checks as the file and the environment.
    public static func apply(flags: [String: JSONValue], to config: inout ServerConfig) throws(ConfigError) {
        for key in flags.keys.sorted() {
            guard let setting = settingsByKey[key] else { preconditionFailure("no setting \(key) for a flag") }
            do {
                try setting.apply(&config, flags[key]!)
            } catch {
                throw ConfigError("--\(key.replacingOccurrences(of: "_", with: "-")): \(error.message)")
            }
        }
    }

    /// A game a client can name: PROTOCOL.md bounds the `game` field, so a longer name would
    /// be seeded and then unreachable; one with a space at an end or a control character would
    /// be a game of its own that nobody types (`" city"` is not `city`).
    private static func gameName(_ name: String, of key: String) throws(ConfigError) -> String {
        let count = name.codePointCount
        guard Limits.gameName.contains(count) else {
            throw ConfigError("\(key): a game's name must be \(Limits.gameName.lowerBound) to \(Limits.gameName.upperBound) characters, "
                + "as requests can name it; got \(count)")
        }
        let ends = [name.unicodeScalars.first, name.unicodeScalars.last].compactMap { $0 }
        guard !ends.contains(where: \.properties.isWhitespace),
              !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw ConfigError("\(key): a game's name must not begin or end with a space, nor hold a control character; "
                + "got \(JSONValue.string(name).serialized())")
        }
        return name
    }

    private static func string(_ key: String, _ environment: String, _ help: String,
                               _ set: @escaping @Sendable (inout ServerConfig, String) -> Void) -> Setting {
        Setting(key: key, environment: environment, help: help) { config, value throws(ConfigError) in
            guard case .string(let text) = value, !text.isEmpty else { throw ConfigError("\(key) must be a non-empty string") }
            set(&config, text)
        }
    }

    /// `true` or `false`; also `1` and `0`, and these as text, the words in any case, wherever
    /// they come from (the environment has only text).
    private static func bool(_ key: String, _ environment: String, _ help: String,
                             _ set: @escaping @Sendable (inout ServerConfig, Bool) -> Void) -> Setting {
        Setting(key: key, environment: environment, help: help) { config, value throws(ConfigError) in
            switch value {
            case .bool(let flag): set(&config, flag)
            case .int(1): set(&config, true)
            case .int(0): set(&config, false)
            case .string(let text) where ["true", "1", "false", "0"].contains(text.lowercased()):
                set(&config, ["true", "1"].contains(text.lowercased()))
            // Quoted as JSON: a file's `"port": "4747"` is text, not a number, and says so.
            default: throw ConfigError("\(key) must be true or false (or 1 or 0), got \(value.excerpt(40))")
            }
        }
    }

    /// A number in the environment is written as digits alone, as configuration.md says: `Int`
    /// would also take a sign (`BQ_PORT=+4800`), which no other place that reads these accepts.
    private static func digits(_ raw: String) -> Int? {
        guard !raw.isEmpty, raw.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        return Int(raw)
    }

    private static func int(_ key: String, _ environment: String, _ help: String, _ range: ClosedRange<Int>,
                            _ set: @escaping @Sendable (inout ServerConfig, Int) -> Void) -> Setting {
        Setting(key: key, environment: environment, help: help, isNumber: true) { config, value throws(ConfigError) in
            guard case .int(let number) = value, range.contains(number) else {
                throw ConfigError("\(key) must be an integer from \(range.lowerBound) to \(range.upperBound), got \(value.excerpt(40))")
            }
            set(&config, number)
        }
    }

}

public struct ConfigError: Error, Sendable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}

extension String {
    var trimmingSpaces: String {
        var text = Substring(self)
        while text.first == " " { text.removeFirst() }
        while text.last == " " { text.removeLast() }
        return String(text)
    }
}
