import Foundation
import JSON
import Testing
import UV
@testable import EventLog
import Server

/// The real `bq` executable on a data directory a server wrote: `verify` and `log` read it,
/// `verify` notices tampering, and `serve` refuses a database it cannot trust.
@Suite struct CommandLineTests {
    /// Which build runs, and which logs it can open (an older build refuses a log a newer one
    /// has migrated).
    @Test func versionNamesTheBuildAndTheLogSchemaItWrites() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let run = try BQRun.run(["--version"], workingDirectory: dir.path)
        #expect(run.ending == .exited(0))
        #expect(run.stdoutLines == ["bq \(GameServer.version) (event log schema \(EventStore.currentSchemaVersion))"])
    }

    static var adminEnvironment: [String: String] { ["BQ_ADMIN_KEY": ServerHarness.adminKey] }

    /// A stopped server's data directory with claims, completions, unlocks and snapshots in it;
    /// returns the admin's view of the event list.
    static func playSession(in dir: TempDirectory) throws -> [JSONValue] {
        let server = try ServerHarness(dataDirectory: dir.path) { $0.snapshotEvery = 4 }
        let admin = try server.connect()
        try admin.signInAsAdmin()
        let mia = try server.connect()
        try mia.ok("claim", ["character": "mia", "device": "phone"])
        for challenge in ["c02", "c06", "c13", "c14"] {
            try mia.ok("complete_challenge", ["challenge": .string(challenge), "proof": ["kind": "done"]])
        }
        try mia.ok("unlock_reward", ["reward": "r02"])
        try admin.ok("adjust_points", ["delta": 3, "reason": "bonus", "idem": "bonus-1"])
        try admin.ok("set_day", ["day": 2])
        let events = try admin.allEvents()
        try server.stop()
        return events
    }

    @Test func verifyAndLogReadWhatTheServerWrote() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let events = try Self.playSession(in: dir)
        #expect(events.count == 9)

        let verify = try BQRun.run(["verify", "--data", dir.path], workingDirectory: dir.path)
        #expect(verify.ending == .exited(0), "stdout: \(verify.stdout)\nstderr: \(verify.stderr)")
        #expect(verify.stdoutLines.contains("verify: ok"), "\(verify.stdout)")
        #expect(verify.stdoutLines.contains("game main: \(events.count) events replayed"), "\(verify.stdout)")

        let log = try BQRun.run(["log", "--data", dir.path, "--json"], workingDirectory: dir.path)
        #expect(log.ending == .exited(0), "\(log.stderr)")
        let lines = try log.stdoutLines.map { try JSONParser.parse(Array($0.utf8)) }
        #expect(lines.map(\.versionNumber) == Array(1...events.count), "one object per event, gapless from 1")
        #expect(lines.allSatisfy { $0["game"] == "main" && $0["data"]?.objectValue != nil })
        #expect(lines.map { $0["type"] } == events.map { $0["type"] })
        #expect(lines.map { $0["actor"] } == events.map { $0["actor"] })
        #expect(lines.map { $0["at"] } == events.map { $0["at"] })
        #expect(lines.filter { $0["idem"] == "bonus-1" }.count == 1)
        // No credentials, as in the `events` op: the claim's device, its token's hash, the PINs.
        let human = try BQRun.run(["log", "--data", dir.path], workingDirectory: dir.path)
        #expect(!log.stdout.contains(#""device":"#) && !log.stdout.contains("token_hash") && !log.stdout.contains(#""pin":"#))
        #expect(!human.stdout.contains("device=") && !human.stdout.contains("token_hash="))
        #expect(human.stdout.contains("character_claimed"))

        let page = try BQRun.run(["log", "--data", dir.path, "--json", "--after", "8", "--limit", "1"], workingDirectory: dir.path)
        #expect(try page.stdoutLines.map { try JSONParser.parse(Array($0.utf8)).versionNumber } == [9])
    }

    /// The commands that read a log say plainly when the directory holds none, and make nothing.
    @Test func readingCommandsNameAMissingLog() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let missing = dir.path + "/nothing-here"
        for (arguments, exit) in [(["log"], 1), (["verify"], 2), (["backup", dir.path + "/copy.sqlite"], 1)] as [([String], Int32)] {
            let result = try BQRun.run([arguments[0], "--data", missing] + arguments.dropFirst(), workingDirectory: dir.path)
            #expect(result.ending == .exited(exit), "\(arguments): \(result.stderr)")
            #expect(result.stderr == "bq \(arguments[0]): no event log at \(missing)/birthdayquest.sqlite: is --data the server's data directory?\n",
                    "\(arguments): \(result.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty, "nothing made")
    }

    /// A damaged payload is not printed as its text, which may hold what redaction takes out.
    @Test func logShowsNoCredentialsOfADamagedPayload() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        _ = try Self.playSession(in: dir)
        let store = try EventStore(path: dir.path + "/birthdayquest.sqlite", options: StoreOptions(synchronous: .full))
        // Mia's claim, its last byte cut: no longer JSON, its device and token hash still in the text.
        try store.executeForTesting("""
            UPDATE events SET payload = substr(payload, 1, length(payload) - 1)
            WHERE game = 'main' AND type = 'character_claimed'
            """)
        store.close()

        let log = try BQRun.run(["log", "--data", dir.path, "--json"], workingDirectory: dir.path)
        #expect(log.ending == .exited(0), "\(log.stderr)")
        let claim = try #require(try log.stdoutLines.map { try JSONParser.parse(Array($0.utf8)) }.first { $0["type"] == "character_claimed" })
        #expect(claim["data"] == .null, "\(log.stdout)")
        let human = try BQRun.run(["log", "--data", dir.path], workingDirectory: dir.path)
        #expect(human.stdout.contains("character_claimed  (payload unreadable: not JSON)"), "\(human.stdout)")
        #expect(!log.stdout.contains(#""device""#) && !log.stdout.contains("token_hash"), "\(log.stdout)")
        #expect(!human.stdout.contains("device") && !human.stdout.contains("token_hash"), "\(human.stdout)")
    }

    /// Unlocking the last reward writes two events in one commit, the unlock and the final
    /// badge: a finished game is a clean log, not one "without its badge" between the two.
    @Test func verifyAcceptsAFinishedGame() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        let admin = try server.connect()
        try admin.signInAsAdmin()
        try admin.ok("adjust_points", ["delta": 10_000, "reason": "enough for everything"])
        let mia = try server.connect()
        try mia.ok("claim", ["character": "mia", "device": "phone"])
        for reward in 1...9 { try mia.ok("unlock_reward", ["reward": .string("r0\(reward)")]) }
        let types = try admin.allEvents().compactMap { $0["type"]?.stringValue }
        try server.stop()
        #expect(types.suffix(2) == ["reward_unlocked", "final_badge_unlocked"], "\(types.suffix(3))")

        let verify = try BQRun.run(["verify", "--data", dir.path], workingDirectory: dir.path)
        #expect(verify.ending == .exited(0), "stdout: \(verify.stdout)\nstderr: \(verify.stderr)")
        #expect(verify.stdoutLines.contains("verify: ok"), "\(verify.stdout)")
    }

    /// Given a relative seed path that means nothing where it was started, the server says
    /// where it looked, and leaves nothing behind to trip the next start. (The default path,
    /// missing, means the built-in copy: ServeAnywhereTests.)
    @Test func serveWithoutItsSeedSaysWhereItLookedAndCreatesNothing() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let run = try BQRun.run(["serve", "--port", "0", "--data", dir.path + "/data", "--seed", "seeds/party.json"],
                                workingDirectory: dir.path)
        #expect(run.ending != .exited(0))
        #expect(run.stderr.contains("seeds/party.json: cannot read the seed file")
                && run.stderr.contains("a relative path is read from the working directory"), "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/data"), "a data directory was created")
    }

    /// A seed with several problems is refused with one line for each, every one of them said
    /// to be the server's, as `bq seed` lists them (docs/seed.md).
    @Test func serveListsEachProblemOfABadSeedOnALineOfItsOwn() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        var seed = try String(contentsOfFile: Repo.seedPath, encoding: .utf8)
        seed = seed.replacingOccurrences(of: #""from_character": "sam""#, with: #""from_character": "sammy""#)
        seed = seed.replacingOccurrences(of: #""role": "friend""#, with: #""role": "birthday""#)
        try seed.write(toFile: dir.path + "/bad.json", atomically: true, encoding: .utf8)
        let run = try BQRun.run(["serve", "--port", "0", "--data", dir.path + "/data", "--seed", "bad.json"],
                                workingDirectory: dir.path)
        #expect(run.ending == .exited(1))
        let lines = run.stderr.split(separator: "\n")
        #expect(lines.count >= 2, "\(run.stderr)")
        #expect(lines.allSatisfy { $0.hasPrefix("bq serve: bad.json: ") }, "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/data"), "a data directory was created")
    }

    /// An emptied log is refused, not seeded over: a failed copy or a full disk, far more often
    /// than a wish to start again. A configured key leaves no key file behind, so the refusal
    /// cannot wait for one as the sign of an earlier launch.
    @Test(arguments: [true, false]) func serveRefusesAnEmptiedLog(keyFileLeft: Bool) throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        _ = try Self.playSession(in: dir)
        if keyFileLeft {
            // What a launch without a configured key leaves.
            try "kept-key\n".write(toFile: dir.path + "/admin.key", atomically: true, encoding: .utf8)
        }
        let log = dir.path + "/birthdayquest.sqlite"
        try Data().write(to: URL(fileURLWithPath: log))
        let run = try BQRun.run(["serve", "--data", dir.path, "--port", "0", "--seed", Repo.seedPath],
                                workingDirectory: dir.path, environment: Self.adminEnvironment)
        #expect(run.ending == .exited(1))
        let why = keyFileLeft ? ", though \(dir.path)/admin.key is from an earlier launch" : ": a copy that failed, or a full disk"
        #expect(run.stderr.contains("is empty (0 bytes)\(why)") && run.stderr.contains("Nothing was changed"), "\(run.stderr)")
        #expect((try FileManager.default.attributesOfItem(atPath: log))[.size] as? Int == 0, "the log was written")
    }

    /// A key file that cannot be read is refused before the log is opened, which could
    /// migrate it for good for a start that then fails.
    @Test func anUnreadableKeyFileIsRefusedBeforeTheLogIsOpened() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        // A directory in its place: unreadable as a file to root too.
        try FileManager.default.createDirectory(atPath: dir.path + "/admin.key", withIntermediateDirectories: false)
        let run = try BQRun.run(["serve", "--data", dir.path, "--port", "0", "--seed", Repo.seedPath], workingDirectory: dir.path)
        #expect(run.ending == .exited(1))
        #expect(run.stderr.contains("Cannot read the admin key file \(dir.path)/admin.key"), "\(run.stderr)")
        // Not even an empty one, which the next start, the key mended, would take for an emptied log.
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/birthdayquest.sqlite"), "a log was made before the key was checked")

        // An empty one likewise.
        try FileManager.default.removeItem(atPath: dir.path + "/admin.key")
        try Data().write(to: URL(fileURLWithPath: dir.path + "/admin.key"))
        let empty = try BQRun.run(["serve", "--data", dir.path, "--port", "0", "--seed", Repo.seedPath], workingDirectory: dir.path)
        #expect(empty.ending == .exited(1))
        #expect(empty.stderr.contains("The admin key file \(dir.path)/admin.key is empty"), "\(empty.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/birthdayquest.sqlite"))
    }

    @Test func logSaysWhenItsFileIsNoLog() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        try "not a database".write(toFile: dir.path + "/birthdayquest.sqlite", atomically: true, encoding: .utf8)
        let run = try BQRun.run(["log", "--data", dir.path], workingDirectory: dir.path)
        #expect(run.ending == .exited(1))
        #expect(run.stderr.hasPrefix("bq log: cannot read \(dir.path)/birthdayquest.sqlite: "), "\(run.stderr)")
    }

    @Test func verifyNoticesATamperedSnapshotAndAGap() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let events = try Self.playSession(in: dir)
        let store = try EventStore(path: dir.path + "/birthdayquest.sqlite", options: StoreOptions(synchronous: .full))
        defer { store.close() }
        let snapshots = try store.snapshots(game: "main")
        let newest = try #require(snapshots.last)

        // A snapshot that decodes but disagrees with the replayed log.
        let tampered = newest.state.replacingOccurrences(of: "\"earned\":", with: "\"earned\":9")
        let changed = tampered != newest.state
        try #require(changed, "the snapshot text spells `earned` as expected")
        try store.executeForTesting("UPDATE snapshots SET state = '\(tampered.replacingOccurrences(of: "'", with: "''"))' WHERE game = 'main' AND version = \(newest.version)")
        let snapshotRun = try BQRun.run(["verify", "--data", dir.path], workingDirectory: dir.path)
        #expect(snapshotRun.ending == .exited(2), "\(snapshotRun.stdout)")
        // It names what differs, so that whoever restores the log knows what was changed.
        #expect(snapshotRun.stdout.contains("snapshot at version \(newest.version) differs from the replayed state at /earned\n"),
                "\(snapshotRun.stdout)")
        #expect(!snapshotRun.stdoutLines.contains("verify: ok"))

        // Put the snapshot back, then leave a hole in the log.
        try store.executeForTesting("UPDATE snapshots SET state = '\(newest.state.replacingOccurrences(of: "'", with: "''"))' WHERE game = 'main' AND version = \(newest.version)")
        #expect(try BQRun.run(["verify", "--data", dir.path], workingDirectory: dir.path).ending == .exited(0))
        let bogus = events.count + 2
        try store.executeForTesting("""
            INSERT INTO events(game, version, type, actor, at, idem, payload)
            VALUES ('main', \(bogus), 'points_adjusted', 'admin', 0, NULL, '{"pointsAdjusted":{"delta":1,"reason":"x"}}')
            """)
        let gapRun = try BQRun.run(["verify", "--data", dir.path], workingDirectory: dir.path)
        #expect(gapRun.ending == .exited(2), "\(gapRun.stdout)")
        #expect(gapRun.stdout.contains("version \(bogus) follows \(events.count)"), "\(gapRun.stdout)")

        // The server does not start on a log with a hole either.
        store.close()
        let serve = try BQRun.run(["serve", "--data", dir.path, "--port", "0", "--seed", Repo.seedPath],
                                  workingDirectory: dir.path, environment: Self.adminEnvironment)
        #expect(serve.ending == .exited(1), "\(serve.stderr)")
        #expect(serve.stderr.contains("gap"), "\(serve.stderr)")
        #expect(!serve.stdout.contains("listening on"))
    }

    /// A data directory on another disk, reached by a symbolic link, is a directory.
    @Test func aDataDirectoryBehindASymbolicLinkIsUsed() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.path + "/real", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: dir.path + "/link", withDestinationPath: dir.path + "/real")
        let server = try ServerHarness(dataDirectory: dir.path + "/link")
        defer { try? server.stop() }
        let admin = try server.connect()
        try admin.signInAsAdmin()
        try admin.ok("adjust_points", ["delta": 1, "reason": "through the link"])
        try server.stop()
        #expect(FileManager.default.fileExists(atPath: dir.path + "/real/birthdayquest.sqlite"))
    }

    @Test func serveNamesADataDirectoryThatIsAFileOrCannotBeMade() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let file = dir.path + "/not-a-directory"
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        for (data, said) in [(file, "The data directory \(file) is not a directory"),
                             (file + "/data", "Cannot create the data directory \(file)/data: Not a directory")] {
            let serve = try BQRun.run(["serve", "--data", data, "--port", "0", "--seed", Repo.seedPath],
                                      workingDirectory: dir.path, environment: Self.adminEnvironment)
            #expect(serve.ending == .exited(1), "\(serve.stderr)")
            #expect(serve.stderr.contains(said), "\(serve.stderr)")
            #expect(!serve.stderr.contains("NSCocoaErrorDomain"), "\(serve.stderr)")
        }
    }

    /// Restarted on a full disk, the server's own output may fail: the "listening on" line is
    /// lost, the server is not.
    @Test func serveRunsOnWhenItsOutputCannotBeWritten() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Repo.bqExecutable)
        process.arguments = ["serve", "--data", dir.path, "--port", "0", "--seed", Repo.seedPath]
        process.environment = ProcessInfo.processInfo.environment.merging(Self.adminEnvironment) { $1 }
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/full"))
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        var text = ""
        while !text.contains("seeded game main") {
            let chunk = errors.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        // Blocked until the signal watchers are in place, so it is handled after the line is written.
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit, "ended by a signal: \(text)")
        #expect(process.terminationStatus == 0, "\(text)")
    }

    /// A backup taken while the server runs holds the game as it stands, WAL and all, in one
    /// file of its owner's that a new data directory starts from.
    @Test func aBackupTakenWhileServingRestoresTheGame() throws {
        let running = try TempDirectory(), restored = try TempDirectory()
        defer {
            running.remove()
            restored.remove()
        }
        let server = try ServerHarness(dataDirectory: running.path)
        defer { try? server.stop() }
        let admin = try server.connect()
        try admin.signInAsAdmin()
        try admin.ok("adjust_points", ["delta": 30, "reason": "before the backup"])
        let version = try admin.currentVersion()
        let state = try admin.ok("state")["result"]

        let file = restored.path + "/copy.sqlite"
        let backup = try BQRun.run(["backup", "--data", running.path, file], workingDirectory: running.path)
        #expect(backup.ending == .exited(0), "\(backup.stderr)")
        #expect(backup.stdout.contains("game main: \(version) events"), "\(backup.stdout)")
        let mode = (try FileManager.default.attributesOfItem(atPath: file))[.posixPermissions] as? Int
        #expect(mode == 0o600, "the copy holds PINs and gifts: \(String(mode ?? 0, radix: 8))")
        let again = try BQRun.run(["backup", "--data", running.path, file], workingDirectory: running.path)
        #expect(again.ending == .exited(1))
        #expect(again.stderr.contains("already exists"), "\(again.stderr)")
        try admin.ok("adjust_points", ["delta": 1, "reason": "after the backup"])
        try server.stop()

        try FileManager.default.moveItem(atPath: file, toPath: restored.path + "/birthdayquest.sqlite")
        let verify = try BQRun.run(["verify", "--data", restored.path], workingDirectory: restored.path)
        #expect(verify.ending == .exited(0), "\(verify.stdout)")
        let back = try ServerHarness(dataDirectory: restored.path)
        defer { try? back.stop() }
        let reader = try back.connect()
        try reader.signInAsAdmin()
        #expect(try reader.currentVersion() == version)
        #expect(try reader.ok("state")["result"] == state, "the game as it stood at the backup")
        try back.stop()
    }

    /// A log whose changes all lived in a WAL that is gone (deleted, or a copy of the main file
    /// alone) holds no game: in a directory used before, the new game seeded there is said to be one.
    @Test func aLogThatLostItsGameIsSaidToHaveInADirectoryUsedBefore() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let data = dir.path + "/data"
        #expect(!(try BQProcess.logOfAStart(dataDirectory: data).log.contains("holds no game")))
        // The key file of that earlier launch (this harness configures its key instead).
        try Data(ServerHarness.adminKey.utf8).write(to: URL(fileURLWithPath: data + "/admin.key"))
        chmod(data + "/admin.key", 0o600)
        // The main file as a copy without its WAL would leave it: the tables, no game.
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: data + "/birthdayquest.sqlite" + suffix) }
        let empty = try EventStore(path: data + "/birthdayquest.sqlite", options: StoreOptions(synchronous: .off))
        empty.close()
        chmod(data + "/birthdayquest.sqlite", 0o600)
        let lost = try BQProcess.logOfAStart(dataDirectory: data).log
        #expect(lost.contains("holds no game, though \(data)/admin.key is from an earlier launch"), "\(lost)")
        #expect(!(try BQProcess.logOfAStart(dataDirectory: data).log.contains("holds no game")), "the new game is there now")
    }

    /// A backup cut short (here killed while it copies) leaves nothing under the name asked
    /// for: a person restoring from that name must never find half a log there.
    @Test func aBackupCutShortLeavesNoFileUnderItsName() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        do {
            let store = try EventStore(path: dir.path + "/birthdayquest.sqlite", options: StoreOptions(synchronous: .off))
            defer { store.close() }
            let payload = #"{"text":"\#(String(repeating: "x", count: 400))"}"#
            let events = (0..<100_000).map { _ in NewEvent(type: "t", actor: "a", at: 1, payload: payload) }
            #expect(store.append(AppendRequest(game: "main", expected: 0, events: events)) == .committed(version: 100_000))
        }
        let file = dir.path + "/copy.sqlite"
        let backup = Process()
        backup.executableURL = URL(fileURLWithPath: Repo.bqExecutable)
        backup.arguments = ["backup", "--data", dir.path, file]
        backup.standardOutput = FileHandle.nullDevice
        backup.standardError = FileHandle.nullDevice
        try backup.run()
        let partial = file + ".partial-\(backup.processIdentifier)"
        var copying = false
        for _ in 0..<5_000 where !copying && backup.isRunning {
            copying = [partial, file].contains { ((try? FileManager.default.attributesOfItem(atPath: $0))?[.size] as? Int ?? 0) > 0 }
            if !copying { usleep(1_000) }
        }
        kill(backup.processIdentifier, SIGKILL)
        backup.waitUntilExit()
        try #require(copying, "the backup was never seen copying")
        if FileManager.default.fileExists(atPath: file) {
            // Killed after the copy was whole: then it is the whole log.
            let copy = try EventStore(path: file, options: StoreOptions(readOnly: true))
            defer { copy.close() }
            #expect(try copy.version(game: "main") == 100_000)
        }
    }

    /// A seed applies only to a game with no events: one named for a data directory that holds
    /// the game already is said not to be used, rather than ignored without a word.
    @Test func aSeedNamedForAGameAlreadyPlayedIsSaidNotToBeUsed() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        _ = try BQProcess.logOfAStart(dataDirectory: dir.path + "/data")
        var seed = try String(contentsOfFile: Repo.seedPath, encoding: .utf8)
        seed = seed.replacingOccurrences(of: "Sunrise Swim", with: "Sunrise Paddle")
        try seed.write(toFile: dir.path + "/edited.json", atomically: true, encoding: .utf8)
        for (path, said) in [(Repo.seedPath, nil), (dir.path + "/edited.json", "is not used: main already has events"),
                             (dir.path + "/missing.json", "is not used, and could not be read anyway")] {
            let text = try BQProcess.logOfAStart(dataDirectory: dir.path + "/data", seedPath: path).log
            if let said {
                #expect(text.contains(said), "\(path): \(text)")
            } else {
                #expect(!text.contains("is not used"), "the seed the game was made from: \(text)")
            }
        }
    }

    /// A configured admin key makes the data directory's `admin.key` wrong for `bq admin --data`:
    /// said at start-up, not left for the organizer to find as "Wrong admin key".
    @Test func aConfiguredAdminKeyBesideAnotherKeptOneIsPointedOut() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.path + "/data", withIntermediateDirectories: true)
        var text = ""
        for key in [ServerHarness.adminKey, "an-older-generated-key"] {
            try Data((key + "\n").utf8).write(to: URL(fileURLWithPath: dir.path + "/data/admin.key"))
            text += try BQProcess.logOfAStart(dataDirectory: dir.path + "/data").log
        }
        #expect(text.components(separatedBy: "not the one in").count - 1 == 1, "said once, for the key that differs: \(text)")
    }

    /// Listening on every interface, the server names the addresses players on other machines
    /// can type: "0.0.0.0" is not one of them.
    @Test func listeningOnEveryInterfaceNamesTheAddressesToGivePlayers() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let (port, text) = try BQProcess.logOfAStart(dataDirectory: dir.path + "/data", environment: ["BQ_HOST": "0.0.0.0"],
                                                     logLevel: "notice")
        // A machine with no network but loopback (a container, say) is told so instead.
        #expect(text.contains("players on other machines: bq play --host ADDRESS --port \(port), ADDRESS one of ")
                || text.contains("this machine has no address other machines could use"), "\(text)")
        #expect(!text.contains("127.0.0.1"), "loopback is no address for another machine: \(text)")
        // A socket on 0.0.0.0 takes no IPv6 connection: no IPv6 address is named.
        let named = Self.addressesNamed(in: text)
        #expect(!named.contains(":"), "\(named)")
    }

    /// `claims_need_pin` guards the gifts: the log says it is on, and says nothing when it is off.
    @Test func claimsThatNeedThePinAreSaidAtStart() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let (_, on) = try BQProcess.logOfAStart(dataDirectory: dir.path + "/on", environment: ["BQ_CLAIMS_NEED_PIN": "1"],
                                                logLevel: "notice")
        #expect(on.contains("claims_need_pin is on"), "\(on)")
        // `BQ_PLAIN_INPUT` is the clients' (a shell that sets it for `bq play` starts servers too).
        // A key too long to guess, which no warning is about.
        let (_, off) = try BQProcess.logOfAStart(dataDirectory: dir.path + "/off",
                                                 environment: ["BQ_PLAIN_INPUT": "1", "BQ_ADMIN_KEY": String(repeating: "k", count: 32)],
                                                 logLevel: "notice")
        #expect(!off.contains("claims_need_pin"), "\(off)")
        #expect(!off.contains("warning"), "\(off)")
        // Misspelt, it would be ignored without a word: it is named.
        let (_, typo) = try BQProcess.logOfAStart(dataDirectory: dir.path + "/typo", environment: ["BQ_CLAIM_NEED_PIN": "1"],
                                                  logLevel: "notice")
        #expect(typo.contains("bq serve: warning: BQ_CLAIM_NEED_PIN is set but is no setting (did you mean BQ_CLAIMS_NEED_PIN? "), "\(typo)")
        #expect(!typo.contains("claims_need_pin is on"), "\(typo)")
    }

    /// The list after "ADDRESS one of " in a start's log: the addresses it gives players.
    private static func addressesNamed(in log: String) -> Substring {
        log.components(separatedBy: "ADDRESS one of ").dropFirst().first?.prefix { $0 != "\n" } ?? ""
    }

    /// On "::" the socket takes IPv4 and IPv6 connections alike, and every address is named.
    @Test func listeningOnEveryIPv6InterfaceNamesBothKindsOfAddress() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let (port, text) = try BQProcess.logOfAStart(dataDirectory: dir.path + "/data", environment: ["BQ_HOST": "::"],
                                                     logLevel: "notice")
        let named = Self.addressesNamed(in: text)
        let mine = externalInterfaceAddresses(includingIPv6: true)
        for address in mine { #expect(named.contains(address), "\(address) missing from \(text)") }
        #expect(mine.isEmpty == named.isEmpty, "\(text), port \(port)")
    }

    /// An address the machine does not have (a typo, or one the router has since given to
    /// someone else) is said in those words, not in libuv's.
    @Test func anAddressThisMachineLacksIsSaidPlainly() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        for port in ["0", "7600"] {
            // 203.0.113.0/24 is set aside for documentation: no machine has it.
            let serve = try BQRun.run(["serve", "--host", "203.0.113.77", "--port", port, "--data", dir.path + "/data",
                                       "--seed", Repo.seedPath], workingDirectory: dir.path, environment: Self.adminEnvironment)
            #expect(serve.ending == .exited(1), "\(serve.stderr)")
            #expect(serve.stderr.contains("cannot listen on 203.0.113.77:\(port): this machine has no address 203.0.113.77"),
                    "\(serve.stderr)")
            #expect(!serve.stderr.contains("uv_tcp_bind"), "\(serve.stderr)")
        }
    }

    /// A host that cannot be listened on, with any free port, is found before a game is seeded
    /// for good (from a seed the organizer might have changed before the next try).
    @Test func aHostThatCannotBeListenedOnLeavesNoLogAndNoKey() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        // `.invalid` is reserved: no name under it resolves.
        for host in ["203.0.113.77", "no-such-host.invalid"] {
            let data = dir.path + "/" + host
            let serve = try BQRun.run(["serve", "--host", host, "--port", "0", "--data", data, "--seed", Repo.seedPath],
                                      workingDirectory: dir.path)
            #expect(serve.ending == .exited(1), "\(serve.stderr)")
            #expect(!serve.stderr.contains("seeded"), "\(serve.stderr)")
            // Said plainly, unless the resolver itself could not be reached (a machine without
            // DNS): then its own words are the ones that help.
            if host.hasSuffix(".invalid"), !serve.stderr.contains("EAI_AGAIN") {
                #expect(serve.stderr.contains("cannot listen on \(host):0: no host is known by the name \(host)"), "\(serve.stderr)")
            }
            let files = (try? FileManager.default.contentsOfDirectory(atPath: data)) ?? []
            #expect(!files.contains("birthdayquest.sqlite") && !files.contains("admin.key"), "\(host): \(files)")
        }
    }

    /// A game's changes may all be in the WAL: a new log beside it would have SQLite drop them.
    @Test func serveRefusesAWriteAheadLogWithoutItsLog() throws {
        let running = try TempDirectory(), copy = try TempDirectory()
        defer {
            running.remove()
            copy.remove()
        }
        let server = try ServerHarness(dataDirectory: running.path)
        defer { try? server.stop() }
        let admin = try server.connect()
        try admin.signInAsAdmin()
        try admin.ok("adjust_points", ["delta": 30, "reason": "only in the WAL"])
        // A copy of the data directory that missed the log file, taken while the server runs.
        let walPath = copy.path + "/birthdayquest.sqlite-wal"
        try FileManager.default.copyItem(atPath: running.path + "/birthdayquest.sqlite-wal", toPath: walPath)
        let wal = FileManager.default.contents(atPath: walPath)
        #expect((wal?.count ?? 0) > 0)

        let serve = try BQRun.run(["serve", "--data", copy.path, "--port", "0", "--seed", Repo.seedPath],
                                  workingDirectory: copy.path, environment: Self.adminEnvironment)
        #expect(serve.ending == .exited(1), "\(serve.stderr)")
        #expect(serve.stderr.contains("is missing, but its write-ahead log"), "\(serve.stderr)")
        #expect(!serve.stdout.contains("listening on"))
        #expect(!FileManager.default.fileExists(atPath: copy.path + "/birthdayquest.sqlite"), "no new log was made")
        #expect(FileManager.default.contents(atPath: walPath) == wal, "the WAL is left as it was")
    }

    /// A backup put back over the main file of a server that did not stop cleanly reads through
    /// that server's WAL, and is damaged: the start is refused, names the -wal, and leaves both
    /// files as they were.
    @Test func serveRefusesABackupBesideAnotherLogsWALAndChangesNeither() throws {
        let running = try TempDirectory(), restored = try TempDirectory()
        defer {
            running.remove()
            restored.remove()
        }
        let backup = restored.path + "/birthdayquest.sqlite"
        do {
            let first = try ServerHarness(dataDirectory: running.path)
            let admin = try first.connect()
            try admin.signInAsAdmin()
            for index in 0..<200 { try admin.ok("adjust_points", ["delta": 1, "reason": .string("before the backup \(index)")]) }
            let saved = try BQRun.run(["backup", "--data", running.path, backup], workingDirectory: running.path)
            #expect(saved.ending == .exited(0), "\(saved.stderr)")
            try first.stop()
        }
        let second = try ServerHarness(dataDirectory: running.path)
        let admin = try second.connect()
        try admin.signInAsAdmin()
        for index in 0..<200 { try admin.ok("adjust_points", ["delta": 1, "reason": .string("after the backup \(index)")]) }
        // The WAL as a crash would leave it, beside the backup put back.
        try FileManager.default.copyItem(atPath: running.path + "/birthdayquest.sqlite-wal", toPath: backup + "-wal")
        try second.stop()
        let main = FileManager.default.contents(atPath: backup)
        let wal = FileManager.default.contents(atPath: backup + "-wal")

        let serve = try BQRun.run(["serve", "--data", restored.path, "--port", "0", "--seed", Repo.seedPath],
                                  workingDirectory: restored.path, environment: Self.adminEnvironment)
        #expect(serve.ending == .exited(1), "\(serve.stderr)")
        #expect(serve.stderr.contains("move that -wal and the -shm beside it aside (keep them) to start from the backup"), "\(serve.stderr)")
        #expect(FileManager.default.contents(atPath: backup) == main, "the refused main file was rewritten")
        #expect(FileManager.default.contents(atPath: backup + "-wal") == wal, "the refused log's WAL was changed or deleted")
    }

    /// A main file that is not a database, with no `-wal` to blame, is refused with what to do,
    /// and leaves no admin key behind: a later launch would take the key for a game played here.
    @Test func serveRefusesAFileThatIsNoLogAndMakesNoKey() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let log = dir.path + "/birthdayquest.sqlite"
        let junk = Data(String(repeating: "not an event log. ", count: 64).utf8)
        try junk.write(to: URL(fileURLWithPath: log))
        let serve = try BQRun.run(["serve", "--data", dir.path, "--port", "0", "--seed", Repo.seedPath], workingDirectory: dir.path)
        #expect(serve.ending == .exited(1), "\(serve.stderr)")
        #expect(serve.stderr.contains("The file is damaged, or is not an event log: put the log back from a backup"),
                "\(serve.stderr)")
        #expect(FileManager.default.contents(atPath: log) == junk, "the refused file was changed")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/admin.key"), "a key was made for a log that was refused")
    }

    /// Copies a log that is still open, main file and WAL, into `directory` as the data
    /// directory's log: what a crash would leave there.
    private static func copyLog(_ path: String, into directory: String) throws {
        for suffix in ["", "-wal"] {
            try FileManager.default.copyItem(atPath: path + suffix, toPath: directory + "/birthdayquest.sqlite" + suffix)
        }
    }

    /// A log that passes SQLite's check but whose game cannot be replayed is refused too, and
    /// left as it was found: its WAL is not copied into the main file, nor deleted.
    @Test func serveRefusesAGameItCannotReplayAndChangesNeitherFile() throws {
        let source = try TempDirectory(), crashed = try TempDirectory()
        defer {
            source.remove()
            crashed.remove()
        }
        let path = source.path + "/birthdayquest.sqlite"
        let store = try EventStore(path: path, options: StoreOptions(synchronous: .off))
        let unreadable = NewEvent(type: "game_seeded", actor: "system", at: 1, payload: #"{"not":"a seed"}"#)
        #expect(store.append(AppendRequest(game: "main", expected: 0, events: [unreadable])) == .committed(version: 1))
        // As a crash would leave them: the event in the WAL alone.
        try Self.copyLog(path, into: crashed.path)
        store.close()
        let main = FileManager.default.contents(atPath: crashed.path + "/birthdayquest.sqlite")
        let wal = FileManager.default.contents(atPath: crashed.path + "/birthdayquest.sqlite-wal")
        #expect((wal?.count ?? 0) > 0)

        let serve = try BQRun.run(["serve", "--data", crashed.path, "--port", "0", "--seed", Repo.seedPath],
                                  workingDirectory: crashed.path, environment: Self.adminEnvironment)
        #expect(serve.ending == .exited(1), "\(serve.stderr)")
        #expect(serve.stderr.contains("Game main"), "\(serve.stderr)")
        #expect(FileManager.default.contents(atPath: crashed.path + "/birthdayquest.sqlite") == main, "the refused main file was rewritten")
        #expect(FileManager.default.contents(atPath: crashed.path + "/birthdayquest.sqlite-wal") == wal, "the refused log's WAL was changed or deleted")
    }

    /// A log from a newer bq is not damaged: its refusal says so, and gives no advice about
    /// the WAL beside it, which holds the game's newest changes.
    @Test func aLogFromANewerBqIsRefusedWithoutWALAdvice() throws {
        let source = try TempDirectory(), copy = try TempDirectory()
        defer {
            source.remove()
            copy.remove()
        }
        let path = source.path + "/birthdayquest.sqlite"
        let store = try EventStore(path: path, options: StoreOptions(synchronous: .off))
        try store.executeForTesting("PRAGMA user_version=99")
        try Self.copyLog(path, into: copy.path)
        store.close()
        let serve = try BQRun.run(["serve", "--data", copy.path, "--port", "0", "--seed", Repo.seedPath],
                                  workingDirectory: copy.path, environment: Self.adminEnvironment)
        #expect(serve.ending == .exited(1), "\(serve.stderr)")
        #expect(serve.stderr.contains("schema version 99 is newer than this program knows"), "\(serve.stderr)")
        #expect(!serve.stderr.contains("-wal"), "\(serve.stderr)")
    }

    @Test func serveRefusesAGarbageDatabase() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let garbage = Data(String(repeating: "this is not an SQLite database\n", count: 256).utf8)
        try garbage.write(to: URL(fileURLWithPath: dir.path + "/birthdayquest.sqlite"))
        let serve = try BQRun.run(["serve", "--data", dir.path, "--port", "0", "--seed", Repo.seedPath],
                                  workingDirectory: dir.path, environment: Self.adminEnvironment)
        #expect(serve.ending == .exited(1), "stderr: \(serve.stderr)")
        #expect(serve.stderr.contains("bq serve:"), "\(serve.stderr)")
        #expect(serve.stderr.contains("birthdayquest.sqlite"), "the message names the file: \(serve.stderr)")
        #expect(serve.stderr.lowercased().contains("not a database"), "\(serve.stderr)")
        #expect(!serve.stdout.contains("listening on"))
        let untouched = FileManager.default.contents(atPath: dir.path + "/birthdayquest.sqlite")
        #expect(untouched == garbage, "a refused file is left as it was")

        let verify = try BQRun.run(["verify", "--data", dir.path], workingDirectory: dir.path)
        #expect(verify.ending != .exited(0))
        #expect(verify.ending != .signalled(SIGSEGV) && verify.ending != .signalled(SIGILL) && verify.ending != .signalled(SIGTRAP),
                "a refusal, not a crash: \(verify.stderr)")
    }
}
