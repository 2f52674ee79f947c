import Foundation
import JSON
import SQLite
import Testing

/// What the server's own log tells the organizer: what it serves, guesses at PINs and admin
/// keys, players held back by their budget; each said once per burst, and the rest of a burst
/// said by the time the server stops.
@Suite struct ServerLogTests {
    @Test func aStartSaysWhatItServesAndThatItsKeyIsShort() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let (port, log) = try BQProcess.logOfAStart(dataDirectory: dir.path + "/data", logLevel: "notice")
        #expect(log.contains("serving main at version 1 from \(dir.path)/data/birthdayquest.sqlite on 127.0.0.1:\(port)"), "\(log)")
        // The harness's key is 13 characters.
        #expect(log.contains("the admin key has 13 characters, few enough to guess"), "\(log)")
        #expect(!log.contains("the last run left its -wal"), "\(log)")
    }

    @Test func aStartAfterAKillSaysThatTheLastRunLeftItsWAL() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let killed = try BQProcess(dataDirectory: dir.path)
        killed.signal(SIGKILL)
        #expect(killed.waitForExit() == .signalled(SIGKILL))
        let (_, log) = try BQProcess.logOfAStart(dataDirectory: dir.path, logLevel: "notice")
        #expect(log.contains("the last run left its -wal (it did not stop cleanly"), "\(log)")
    }

    /// A server killed with changes in its WAL alone; returns what its WAL index said of them.
    private static func killedWithChangesInItsWAL(_ dir: String) throws -> WALIndexHeader {
        let killed = try BQProcess(dataDirectory: dir)
        let admin = try TestClient(port: killed.port)
        try admin.signInAsAdmin()
        for n in 0..<5 { try admin.ok("adjust_points", ["delta": 1, "reason": .string("bonus \(n)")]) }
        killed.signal(SIGKILL)
        #expect(killed.waitForExit() == .signalled(SIGKILL))
        let index = try #require(WALIndexHeader.read(logPath: dir + "/birthdayquest.sqlite"))
        try #require(index.framesOnlyInWAL > 1, "the changes are in the WAL alone")
        return index
    }

    /// The same, its WAL then cut just after the frames a checkpoint passed: the newest commits go.
    private static func killedThenCut(_ dir: String) throws -> WALIndexHeader {
        let index = try killedWithChangesInItsWAL(dir)
        let wal = try FileHandle(forWritingTo: URL(fileURLWithPath: dir + "/birthdayquest.sqlite-wal"))
        try wal.truncate(atOffset: UInt64(32 + (Int(index.copied) + 1) * (24 + index.pageSize)))
        try wal.close()
        return index
    }

    @Test func aStartAndVerifySayThatAWALCutShortAfterAKillLostCommits() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let index = try Self.killedThenCut(dir.path)
        let (_, log) = try BQProcess.logOfAStart(dataDirectory: dir.path, logLevel: "notice")
        #expect(log.contains("the last run's -wal lacks at least \(index.framesOnlyInWAL - 1) frames (page writes) of its newest commits"),
                "\(log)")
        #expect(log.contains("they are lost, and the games are served as they were before them"), "\(log)")
        #expect(!log.contains("its commits were read with the log"), "\(log)")
    }

    @Test func verifyAndLogSayThatAWALCutShortAfterAKillLostCommits() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let index = try Self.killedThenCut(dir.path)
        // The first to open the log rebuilds the index: whichever tool it is says what was lost.
        let copy = try TempDirectory()
        defer { copy.remove() }
        for file in ["birthdayquest.sqlite", "birthdayquest.sqlite-wal", "birthdayquest.sqlite-shm"] {
            try FileManager.default.copyItem(atPath: dir.path + "/" + file, toPath: copy.path + "/" + file)
        }
        let verify = try BQRun.run(["verify", "--data", dir.path], workingDirectory: dir.path)
        #expect(verify.ending == .exited(2), "\(verify.stdout)\(verify.stderr)")
        #expect(verify.stdout.contains("PROBLEM: the -wal lacks at least \(index.framesOnlyInWAL - 1) frames (page writes)"),
                "\(verify.stdout)")
        let log = try BQRun.run(["log", "--data", copy.path], workingDirectory: copy.path)
        #expect(log.ending == .exited(0), "\(log.stderr)")
        #expect(log.stderr.contains("bq log: warning: \(copy.path)/birthdayquest.sqlite-wal lacks at least \(index.framesOnlyInWAL - 1) frames"),
                "\(log.stderr)")
    }

    @Test func aStartAfterAKillWhoseWALWasDeletedIsRefusedAndChangesNothing() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let index = try Self.killedWithChangesInItsWAL(dir.path)
        let log = dir.path + "/birthdayquest.sqlite"
        try FileManager.default.moveItem(atPath: log + "-wal", toPath: dir.path + "/aside-wal")
        let main = FileManager.default.contents(atPath: log), shm = FileManager.default.contents(atPath: log + "-shm")
        let serve = try BQRun.run(["serve", "--data", dir.path, "--port", "0", "--seed", Repo.seedPath],
                                  workingDirectory: dir.path, environment: ["BQ_ADMIN_KEY": ServerHarness.adminKey])
        #expect(serve.ending == .exited(1), "\(serve.stderr)")
        #expect(serve.stderr.contains("the write-ahead log \(log)-wal is missing or unreadable, though its index \(log)-shm says it "
            + "held \(index.framesOnlyInWAL) frames (page writes) of commits"), "\(serve.stderr)")
        #expect(FileManager.default.contents(atPath: log) == main, "the refused main file was rewritten")
        #expect(FileManager.default.contents(atPath: log + "-shm") == shm, "the index that shows the loss was rewritten")

        // Put back, the WAL is read whole: nothing was lost.
        try FileManager.default.moveItem(atPath: dir.path + "/aside-wal", toPath: log + "-wal")
        let (_, again) = try BQProcess.logOfAStart(dataDirectory: dir.path, logLevel: "notice")
        #expect(again.contains("serving main at version 6 from"), "\(again)")
        #expect(again.contains("its commits were read with the log"), "\(again)")
    }

    /// The look for lost commits reads the WAL's index before SQLite opens the log, and only
    /// then: closing a descriptor of a file drops every lock the process holds on it, and a
    /// server (or a tool) that read the index beside its own connection lost SQLite's lock on
    /// it, so the next process to open the log took itself for the first and emptied the
    /// index under the running server.
    @Test func theServerKeepsSQLiteLocksOnItsWALIndexWhileToolsRead() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let bq = try BQProcess(dataDirectory: dir.path)
        defer {
            bq.signal(SIGTERM)
            _ = bq.waitForExit()
        }
        // SQLite's "someone has the log open" lock: a read lock on byte 128 of the -shm
        // (UNIX_SHM_DMS), which a write lock asked for by another process would meet.
        func serverLocksTheIndex() -> Bool {
            let descriptor = open(dir.path + "/birthdayquest.sqlite-shm", O_RDWR)
            guard descriptor >= 0 else { return false }
            defer { close(descriptor) }
            var probe = flock()
            probe.l_type = Int16(F_WRLCK)
            probe.l_whence = Int16(SEEK_SET)
            probe.l_start = 128
            probe.l_len = 1
            return fcntl(descriptor, F_GETLK, &probe) == 0 && probe.l_type == Int16(F_RDLCK) && probe.l_pid == bq.pid
        }
        #expect(serverLocksTheIndex(), "the server holds SQLite's lock on its -shm")
        let verify = try BQRun.run(["verify", "--data", dir.path], workingDirectory: dir.path)
        #expect(verify.ending == .exited(0), "\(verify.stdout)\(verify.stderr)")
        #expect(serverLocksTheIndex(), "still, after bq verify read the log")
    }

    @Test func wrongPINsAndTheClaimsTheyCloseAreSaidAndCounted() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let file = dir.path + "/serve.log"
        let bq = try BQProcess(dataDirectory: dir.path + "/data", environment: ["BQ_CLAIMS_NEED_PIN": "1"], logFile: file)
        let guesser = try TestClient(port: bq.port)
        var refusals: [String] = []
        // Five wrong PINs in a row are free; the sixth closes Sam's claims, which the rest find closed.
        for guess in 0..<8 {
            refusals.append(try guesser.refusal("claim", ["character": "sam", "device": "guesser", "pin": .string("73915\(guess)")]))
        }
        #expect(refusals == Array(repeating: "forbidden", count: 6) + ["rate_limited", "rate_limited"])
        bq.signal(SIGTERM)
        #expect(bq.waitForExit() == .exited(0))
        let log = try String(contentsOfFile: file, encoding: .utf8)
        #expect(log.contains("wrong PIN in a claim of sam"), "\(log)")
        #expect(log.contains("claim of sam refused: wrong PINs keep it closed for"), "\(log)")
        // The five after the first, and the second refused claim, said at the stop.
        #expect(log.contains("since_last_logged=5 [Server] more wrong PINs"), "\(log)")
        #expect(log.contains("since_last_logged=1 [Server] more claims refused after wrong PINs"), "\(log)")
        for pin in (0..<8).map({ "73915\($0)" }) { #expect(!log.contains(pin), "a guessed PIN is in the log") }
    }

    @Test func adminSignInsRefusedAfterWrongKeysAreSaid() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let file = dir.path + "/serve.log"
        let bq = try BQProcess(dataDirectory: dir.path + "/data", logFile: file)
        let console = try TestClient(port: bq.port)
        let codes = try (0..<7).map { _ in try console.refusal("admin", ["key": "not the key"]) }
        #expect(codes == Array(repeating: "unauthenticated", count: 6) + ["rate_limited"])
        // The right key too, while the address is kept out: the organizer's own console.
        #expect(try console.refusal("admin", ["key": .string(ServerHarness.adminKey)]) == "rate_limited")
        bq.signal(SIGTERM)
        #expect(bq.waitForExit() == .exited(0))
        let log = try String(contentsOfFile: file, encoding: .utf8)
        #expect(log.contains("wrong admin key: the right one is the configured admin_key or BQ_ADMIN_KEY"), "\(log)")
        #expect(log.contains("admin sign-in refused: wrong keys keep 127.0.0.1 out for"), "\(log)")
        #expect(log.contains("since_last_logged=1 [Server] more admin sign-ins refused after wrong keys"), "\(log)")
        #expect(!log.contains(ServerHarness.adminKey) && !log.contains("not the key"), "a key is in the log")
    }

    @Test func changesOverAPlayersBudgetAreSaid() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let file = dir.path + "/serve.log"
        let bq = try BQProcess(dataDirectory: dir.path + "/data", environment: ["BQ_CHANGES_PER_SECOND": "1"], logFile: file)
        let mia = try TestClient(port: bq.port)
        try mia.ok("claim", ["character": "mia", "device": "phone"])
        // The claim took the one token there was. Sent in one go, the changes are decided
        // together, before a second can pass and refill it.
        let ids = try (0..<20).map { _ in try mia.send("set_day", ["day": 2]) }
        let codes = try ids.map { try mia.reply(to: $0)["error"]?["code"]?.stringValue ?? "ok" }
        #expect(codes.contains("rate_limited"), "\(codes)")
        bq.signal(SIGTERM)
        #expect(bq.waitForExit() == .exited(0))
        let log = try String(contentsOfFile: file, encoding: .utf8)
        #expect(log.contains("mia's change refused over changes_per_second (1)"), "\(log)")
    }
}
