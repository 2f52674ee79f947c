import Foundation
import Server
import Testing

/// A bad setting, wherever it comes from, stops `bq serve` with one line that names it, exit
/// 64, and nothing made: no data directory, no key, no seeded game.
@Suite struct ConfigErrorTests {
    @Test func everySourceOfABadSettingIsNamedAndNothingIsCreated() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        try Data(#"{"port": 70000}"#.utf8).write(to: URL(fileURLWithPath: dir.path + "/range.json"))
        try Data(#"{"port": "4747"}"#.utf8).write(to: URL(fileURLWithPath: dir.path + "/text.json"))
        try Data(#"{"prot": 4747}"#.utf8).write(to: URL(fileURLWithPath: dir.path + "/typo.json"))
        try Data("{\n  \"port\": 4747,\n}".utf8).write(to: URL(fileURLWithPath: dir.path + "/broken.json"))
        try Data(#"{"port": 7914, "port": 7915}"#.utf8).write(to: URL(fileURLWithPath: dir.path + "/twice.json"))
        try Data(#"{"games": [" city", "lake"]}"#.utf8).write(to: URL(fileURLWithPath: dir.path + "/spaced.json"))
        let data = dir.path + "/data"
        let cases: [(arguments: [String], environment: [String: String], says: String)] = [
            (["--port", "70000"], [:], "bq serve: --port: port must be an integer from 0 to 65535, got 70000"),
            // A number written as text is named as text.
            (["--config", "text.json"], [:], #"bq serve: text.json: port must be an integer from 0 to 65535, got "4747""#),
            (["--port", "-1"], [:], "bq serve: --port: port must be an integer from 0 to 65535"),
            (["--config", "range.json"], [:], "bq serve: range.json: port must be an integer from 0 to 65535"),
            (["--config", "typo.json"], [:], #"bq serve: typo.json: unknown setting "prot""#),
            (["--config", "broken.json"], [:], "bq serve: broken.json: not valid JSON: unexpected character '}' at byte 18 (line 3, column 1)"),
            (["--config", "missing.json"], [:], "bq serve: missing.json: cannot read the config file (No such file or directory)"),
            (["--config", ""], [:], "bq serve: --config: the path is empty"),
            (["--config", "."], [:], "bq serve: .: cannot read the config file (it is a directory)"),
            ([], ["BQ_SYNCHRONOUS": "fast"], #"bq serve: BQ_SYNCHRONOUS: synchronous must be "full", "normal" or "off", got "fast""#),
            ([], ["BQ_MAX_CONNECTIONS": "0"], "bq serve: BQ_MAX_CONNECTIONS: max_connections must be an integer from 1"),
            ([], ["BQ_PORT": "+4800"], #"bq serve: BQ_PORT: port must be an integer from 0 to 65535, got "+4800""#),
            (["--host", ""], [:], "bq serve: --host: host must be a non-empty string"),
            ([], ["BQ_CLAIMS_NEED_PIN": "yes"], #"bq serve: BQ_CLAIMS_NEED_PIN: claims_need_pin must be true or false (or 1 or 0), got "yes""#),
            (["--config", "twice.json"], [:], #"bq serve: twice.json: "port" is set twice"#),
            ([], ["BQ_GAMES": "a,,b"], #"bq serve: BQ_GAMES: games must be a list of non-empty names, got "a,,b""#),
            // Seeded, then out of every client's reach: the `game` field takes 1 to 64 characters.
            ([], ["BQ_GAMES": "main," + String(repeating: "g", count: 65)], "bq serve: BQ_GAMES: games: a game's name must be 1 to 64"),
            ([], ["BQ_DEFAULT_GAME": String(repeating: "g", count: 65)], "bq serve: BQ_DEFAULT_GAME: default_game: a game's name must be 1 to 64"),
            // A game of its own that nobody types (the environment's list is trimmed at its commas).
            (["--config", "spaced.json"], [:], #"bq serve: spaced.json: games: a game's name must not begin or end with a space, nor hold a control character; got " city""#),
            ([], ["BQ_DEFAULT_GAME": "la\tke"], #"bq serve: BQ_DEFAULT_GAME: default_game: a game's name must not begin or end with a space, nor hold a control character; got "la\tke""#),
        ]
        for bad in cases {
            let arguments = ["serve", "--data", data] + bad.arguments
            let result = try BQRun.run(arguments, workingDirectory: dir.path, environment: bad.environment)
            #expect(result.ending == .exited(64), "\(bad.arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix(bad.says), "\(bad.arguments): \(result.stderr)")
            #expect(!result.stderr.contains("Usage:"), "a setting is not a question of usage")
            #expect(result.stderr.split(separator: "\n").count == 1, "one line: \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: data), "\(bad.arguments) made the data directory")
        }

        let level = try BQRun.run(["serve", "--data", data, "--log-level", "loud"], workingDirectory: dir.path)
        #expect(level.ending == .exited(64))
        #expect(level.stderr == "bq serve: --log-level: must be one of trace, debug, info, notice, warning, error, critical (any case; warn for warning), got loud\n",
                "\(level.stderr)")
        #expect(!FileManager.default.fileExists(atPath: data))

        let verify = try BQRun.run(["verify", "--data", data, "--config", "typo.json"], workingDirectory: dir.path)
        #expect(verify.ending == .exited(64))
        #expect(verify.stderr.hasPrefix(#"bq verify: typo.json: unknown setting "prot""#), "\(verify.stderr)")
    }

    /// A misspelt variable is said even when another setting stops the start: it may be why.
    @Test func aMisspeltVariableIsSaidBesideTheRefusal() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let serve = try BQRun.run(["serve", "--data", dir.path + "/data"], workingDirectory: dir.path,
                                  environment: ["BQ_PORT": "x", "BQ_PROT": "4800"])
        #expect(serve.ending == .exited(64), "\(serve.stderr)")
        #expect(serve.stderr.contains("warning: BQ_PROT is set but is no setting (did you mean BQ_PORT?"), "\(serve.stderr)")
        #expect(serve.stderr.contains(#"bq serve: BQ_PORT: port must be an integer from 0 to 65535, got "x""#), "\(serve.stderr)")
    }

    /// Some editors begin a file with a byte order mark: no reason to refuse it.
    @Test func aConfigFileWithAByteOrderMarkIsRead() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        try Data([0xEF, 0xBB, 0xBF] + Array(#"{"data": "elsewhere"}"#.utf8)).write(to: URL(fileURLWithPath: dir.path + "/bom.json"))
        let verify = try BQRun.run(["verify", "--config", "bom.json"], workingDirectory: dir.path)
        #expect(verify.stderr.contains("no event log at elsewhere/"), "the file's data setting was read: \(verify.stderr)")
    }

    /// A port another process holds stops the start before the log, the key or the seeded game
    /// are made: nothing is left to mistake for a server's data.
    @Test func aPortInUseStopsTheStartBeforeAnythingIsMade() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let holder = try ServerHarness(dataDirectory: dir.path + "/holder")
        defer { try? holder.stop() }
        let data = dir.path + "/data"
        let result = try BQRun.run(["serve", "--data", data, "--port", String(holder.port),
                                    "--seed", Repo.seedPath], workingDirectory: dir.path)
        #expect(result.ending == .exited(1), "\(result.stderr)")
        // Said for the organizer, with what to do, rather than as libuv's bind call.
        #expect(result.stderr == "bq serve: cannot listen on 127.0.0.1:\(holder.port): the port is in use "
                + "(a bq serve already running? another port with --port)\n", "\(result.stderr)")
        let left = (try? FileManager.default.contentsOfDirectory(atPath: data)) ?? []
        #expect(!left.contains("birthdayquest.sqlite") && !left.contains("admin.key"), "\(left)")
    }
}


/// A misspelt variable's warning names the setting it most likely meant.
@Suite struct LikelyMeantTests {
    @Test func theNearestSettingWithinTwoEditsIsNamed() {
        #expect(ConfigLoader.likelyMeant("BQ_CLAIM_NEED_PIN") == "BQ_CLAIMS_NEED_PIN")
        #expect(ConfigLoader.likelyMeant("BQ_PROT") == "BQ_PORT")
        #expect(ConfigLoader.likelyMeant("bq_port") == "BQ_PORT", "a variable typed in lower case")
        #expect(ConfigLoader.likelyMeant("BQ_SOMETHING_ELSE_ENTIRELY") == nil, "nothing near: no guess")
    }
}
