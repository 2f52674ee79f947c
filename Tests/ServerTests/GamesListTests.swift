import Foundation
import Testing

/// The `games` setting changed between starts: a game left out keeps its events and is said to
/// be unserved; a game added is seeded, and the seed is said to be used for it alone.
@Suite struct GamesListTests {
    @Test func aGameLeftOutOfTheListIsSaidAndKept() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let data = dir.path + "/data"
        _ = try BQProcess.logOfAStart(dataDirectory: data, environment: ["BQ_GAMES": "lake"])
        // Misspelt on the next start.
        let (_, log) = try BQProcess.logOfAStart(dataDirectory: data, environment: ["BQ_GAMES": "lkae"])
        #expect(log.contains("the log holds a game this server does not serve: lake (kept"), "\(log)")

        let read = try BQRun.run(["log", "--data", data], workingDirectory: dir.path)
        #expect(read.ending == .exited(0))
        #expect(read.stderr.contains("bq log: this log also holds lake, lkae (bq log --game NAME)"), "\(read.stderr)")
        for json in [false, true] {
            let typo = try BQRun.run(["log", "--data", data, "--game", "lak"] + (json ? ["--json"] : []), workingDirectory: dir.path)
            #expect(typo.ending == .exited(1), "a script can tell a misspelt game from a quiet one")
            #expect(typo.stderr.contains("bq log: \(data)/birthdayquest.sqlite holds no game lak; it holds lake, lkae, main"),
                    "\(typo.stderr)")
            #expect(typo.stdout.isEmpty, "\(typo.stdout)")
            #expect(!typo.stderr.contains("cannot read"), "\(typo.stderr)")
        }
        let past = try BQRun.run(["log", "--data", data, "--game", "lake", "--after", "1000"], workingDirectory: dir.path)
        #expect(past.ending == .exited(0))
        #expect(past.stdout.contains("game lake: no events"), "\(past.stdout)")
        let lake = try BQRun.run(["log", "--data", data, "--game", "lake"], workingDirectory: dir.path)
        #expect(lake.stdout.contains("game_seeded"), "\(lake.stdout)")
        #expect(!lake.stderr.contains("also holds"), "\(lake.stderr)")
    }

    /// A log whose every game is left out (the games renamed) did not lose them: it is
    /// not said to hold no game, as a log whose `-wal` was lost is.
    @Test func aLogWhoseGamesAreAllRenamedIsNotTakenForALostLog() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let data = dir.path + "/data"
        _ = try BQProcess.logOfAStart(dataDirectory: data)
        // The key file a launch without a configured key leaves: the sign of an earlier launch.
        try Data(ServerHarness.adminKey.utf8).write(to: URL(fileURLWithPath: data + "/admin.key"))
        chmod(data + "/admin.key", 0o600)
        let (_, log) = try BQProcess.logOfAStart(dataDirectory: data, environment: ["BQ_DEFAULT_GAME": "party", "BQ_GAMES": "party"])
        #expect(log.contains("the log holds a game this server does not serve: main (kept"), "\(log)")
        #expect(!log.contains("holds no game"), "\(log)")
    }

    @Test func aSeedThatSeedsOnlyAnAddedGameIsSaidSo() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let data = dir.path + "/data"
        _ = try BQProcess.logOfAStart(dataDirectory: data)
        let other = dir.path + "/other-seed.json"
        let text = try String(contentsOfFile: Repo.seedPath, encoding: .utf8)
        try text.replacingOccurrences(of: "\"title\": \"", with: "\"title\": \"Another ").write(toFile: other, atomically: true, encoding: .utf8)
        let (_, log) = try BQProcess.logOfAStart(dataDirectory: data, environment: ["BQ_GAMES": "lake"], logLevel: "notice",
                                                 seedPath: other)
        #expect(log.contains("seeded game lake from \(other)"), "\(log)")
        #expect(log.contains("the seed \(other) seeded only lake, which had no events: main keeps what it was seeded from"), "\(log)")
        #expect(!log.contains("is not used"), "\(log)")
    }
}
