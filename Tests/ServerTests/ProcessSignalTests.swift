import Foundation
@testable import EventLog
import JSON
import POSIXSupport
import Testing

/// The real executable under load: SIGTERM drains and says bye; SIGKILL loses nothing
/// acknowledged; idempotency keys make a full re-send apply each request exactly once.
@Suite(.serialized) struct ProcessSignalTests {
    static let clients = 4
    static let warmAfter = 40

    /// A SIGTERM while the server starts (a long log to load) is a clean stop once it runs,
    /// exit 0, not a death by the signal's default action before its watchers exist.
    @Test func aSigtermDuringStartUpIsACleanStop() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let bq = try BQProcess(dataDirectory: dir.path, signalAtSpawn: SIGTERM)
        #expect(bq.waitForExit() == .exited(0))
    }

    /// The same for a server started with nothing blocked and signalled while it waits for its
    /// log (another connection holds it): `bq serve` holds the signal from before the server
    /// starts until it is up.
    @Test func aSigtermWhileStartUpWaitsForTheLogIsACleanStop() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let first = try BQProcess(dataDirectory: dir.path)
        first.signal(SIGTERM)
        #expect(first.waitForExit() == .exited(0))
        let holder = try EventStore(path: dir.path + "/birthdayquest.sqlite", options: StoreOptions(synchronous: .off))
        try holder.executeForTesting("PRAGMA locking_mode=EXCLUSIVE")
        try holder.executeForTesting("BEGIN EXCLUSIVE; COMMIT")
        let bq = try BQProcess(dataDirectory: dir.path, environment: ["BQ_BUSY_TIMEOUT_MS": "60000"], waitsForAddress: false)
        // No signal says "blocked now": the child's mask is polled until it shows the block,
        // which comes before the log is opened, where the held lock keeps it waiting.
        var blocked = false
        for _ in 0..<10_000 where !blocked {
            blocked = bq.blocks(SIGTERM)
            if !blocked { usleep(2_000) }
        }
        #expect(blocked, "bq serve never blocked SIGTERM during its start-up")
        bq.signal(SIGTERM)
        holder.close()
        #expect(bq.waitForExit() == .exited(0))
    }

    /// A stop waits for the commits under way; while the disk does not answer (here another
    /// connection holds the log's write lock), a second SIGTERM stops the process at once, and
    /// the log is whole for the next start.
    @Test func aSecondSigtermStopsAServerWaitingOnItsDisk() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let bq = try BQProcess(dataDirectory: dir.path, environment: ["BQ_BUSY_TIMEOUT_MS": "120000"])
        let admin = try TestClient(port: bq.port)
        try admin.ok("admin", ["key": .string(ServerHarness.adminKey)])
        let made = try #require(try admin.ok("adjust_points", ["delta": 5, "reason": "made"])["version"]?.intValue)
        let locker = try EventStore(path: dir.path + "/birthdayquest.sqlite",
                                    options: StoreOptions(synchronous: .off, checkIntegrity: false))
        defer { locker.close() }
        try locker.executeForTesting("BEGIN IMMEDIATE")
        _ = try admin.send("adjust_points", ["delta": 7, "reason": "held", "idem": "held"])
        // Asked on a connection of its own: replies come in order, so this one's wait behind the held change.
        let prober = try TestClient(port: bq.port)
        try prober.ok("admin", ["key": .string(ServerHarness.adminKey)])
        try #require(try prober.waitUntilDecided(atVersion: made + 1), "the held change was never decided")

        bq.signal(SIGTERM)
        // The first stops taking connections; the second may come any time after it.
        var refused = false
        for _ in 0..<5_000 where !refused {
            refused = (try? BlockingLineSocket(host: "127.0.0.1", port: bq.port)) == nil
            if !refused { usleep(2_000) }
        }
        #expect(refused, "the server never began to stop")
        #expect(bq.waitForExit(seconds: 1) == nil, "it waits for the held commit")
        bq.signal(SIGTERM)
        #expect(bq.waitForExit(seconds: 30) == .signalled(SIGTERM))
        try locker.executeForTesting("ROLLBACK")

        let again = try BQProcess(dataDirectory: dir.path)
        defer {
            again.signal(SIGTERM)
            _ = again.waitForExit()
        }
        let admin2 = try TestClient(port: again.port)
        try admin2.ok("admin", ["key": .string(ServerHarness.adminKey)])
        #expect(try admin2.ok("ping")["version"]?.intValue == made, "what was made is there, what was held is not")
        let retried = try admin2.ok("adjust_points", ["delta": 7, "reason": "held", "idem": "held"])
        #expect(retried["replayed"] == nil && retried["version"]?.intValue == made + 1)
    }

    /// A disk that stops answering (here another connection holds the log's write lock, and
    /// the server waits on it as long as on a frozen disk) is said in the log, and so is its end.
    @Test func aWriterStuckOnItsDiskIsSaidInTheLog() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let logFile = dir.path + "/serve.log"
        let bq = try BQProcess(dataDirectory: dir.path + "/data", environment: ["BQ_BUSY_TIMEOUT_MS": "120000"], logFile: logFile,
                               logLevel: "notice")
        defer {
            bq.signal(SIGTERM)
            _ = bq.waitForExit()
        }
        let admin = try TestClient(port: bq.port)
        try admin.ok("admin", ["key": .string(ServerHarness.adminKey)])
        let locker = try EventStore(path: dir.path + "/data/birthdayquest.sqlite",
                                    options: StoreOptions(synchronous: .off, checkIntegrity: false))
        defer { locker.close() }
        try locker.executeForTesting("BEGIN IMMEDIATE")
        let held = try admin.send("adjust_points", ["delta": 7, "reason": "held"])
        func logSays(_ text: String) -> Bool {
            // The report runs every 10 s: a stall of 5 s is said within 15.
            for _ in 0..<300 {
                if (try? String(contentsOfFile: logFile, encoding: .utf8))?.contains(text) == true { return true }
                usleep(100_000)
            }
            return false
        }
        #expect(logSays("the disk holding the log does not answer"), "\((try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "")")
        try locker.executeForTesting("ROLLBACK")
        #expect(try admin.reply(to: held)["ok"] == true)
        #expect(logSays("commits finish again"))
    }

    /// Runs load against a fresh `bq serve`, sends the signal once every client is warm.
    static func loadThenSignal(_ signal: Int32, dataDirectory: String) throws -> (BQProcess, [LoadClient]) {
        let bq = try BQProcess(dataDirectory: dataDirectory)
        let warm = DispatchSemaphore(value: 0)
        let load = (0..<clients).map { LoadClient(name: "w\($0)") }
        for client in load { client.start(port: bq.port, warmAfter: warmAfter, warm: warm) }
        for _ in load {
            guard warm.wait(timeout: .now() + 60) == .success else { throw HarnessError("load clients did not warm up") }
        }
        bq.signal(signal)
        for client in load where !client.waitUntilDone() { throw HarnessError("\(client.name) still running after the signal") }
        return (bq, load)
    }

    /// Restarts in-process on the same directory and checks the log against what clients saw.
    static func verifyAfterRestart(_ dataDirectory: String, _ load: [LoadClient]) throws {
        let server = try ServerHarness(dataDirectory: dataDirectory) { $0.synchronous = .full }
        let admin = try server.connect()
        try admin.ok("admin", ["key": .string(ServerHarness.adminKey)])
        let reasons = try admin.adjustmentReasons()
        #expect(Set(reasons).count == reasons.count, "no request applied twice")
        let acknowledged = load.flatMap { $0.acknowledged.value }
        #expect(acknowledged.count >= clients * warmAfter)
        let missing = Set(acknowledged).subtracting(reasons)
        #expect(missing.isEmpty, "acknowledged but lost: \(missing.sorted().prefix(10))")

        // Re-send everything: the acknowledged ones replay, the rest apply now or replay.
        let sent = load.flatMap { $0.sent.value }
        for key in sent {
            let reply = try admin.ok("adjust_points", LoadClient.request(key))
            if acknowledged.contains(key) { #expect(reply["replayed"] == .bool(true), "\(key) replays") }
        }
        let final = try admin.adjustmentReasons()
        #expect(final.count == Set(final).count, "each applied exactly once")
        #expect(Set(final) == Set(sent))
        let points = try admin.ok("state")["result"]?["state"]?["game"]?["points"]
        #expect(points == .int(sent.count))
        try server.stop()
    }

    @Test func sigtermUnderLoadDrainsSaysByeAndExitsZero() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let (bq, load) = try Self.loadThenSignal(SIGTERM, dataDirectory: dir.path)
        let exit = try #require(bq.waitForExit())
        #expect(exit == .exited(0))
        for client in load { #expect(client.bye.value == "server_shutdown", "\(client.name) got bye") }
        try Self.verifyAfterRestart(dir.path, load)
    }

    /// SIGHUP (the organizer's terminal closed) stops the server as cleanly as SIGTERM.
    @Test func sighupUnderLoadDrainsSaysByeAndExitsZero() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let (bq, load) = try Self.loadThenSignal(SIGHUP, dataDirectory: dir.path)
        #expect(try #require(bq.waitForExit()) == .exited(0))
        for client in load { #expect(client.bye.value == "server_shutdown", "\(client.name) got bye") }
        try Self.verifyAfterRestart(dir.path, load)
    }

    /// A server started to outlive its terminal (`nohup`) keeps running through a hang-up.
    @Test func underNohupAHangUpDoesNotStopTheServer() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let logFile = dir.path + "/serve.log"
        let bq = try BQProcess(dataDirectory: dir.path + "/data", logFile: logFile, logLevel: "notice", underNohup: true)
        // Both pending together at worst: the hang-up comes first (the lower number), so a watched
        // one would be the reason the log gives.
        bq.signal(SIGHUP)
        bq.signal(SIGTERM)
        #expect(bq.waitForExit() == .exited(0))
        let log = (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? ""
        #expect(log.contains("reason=SIGTERM") && !log.contains("SIGHUP"), "\(log)")
    }

    /// A closing terminal sends its hang-up twice: the second does not cut the clean stop short.
    @Test func aSecondHangUpDoesNotCutTheStopShort() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let logFile = dir.path + "/serve.log"
        let bq = try BQProcess(dataDirectory: dir.path + "/data", logFile: logFile, logLevel: "notice")
        // A client that never reads its `bye` keeps the stop in its grace period a while.
        let lingering = try TestClient(port: bq.port)
        try lingering.ok("ping")
        bq.signal(SIGHUP)
        var stopping = false
        for _ in 0..<2_000 where !stopping {
            stopping = (try? String(contentsOfFile: logFile, encoding: .utf8))?.contains("reason=SIGHUP") == true
            if !stopping { usleep(2_000) }
        }
        #expect(stopping, "the first hang-up did not start the stop")
        bq.signal(SIGHUP)
        #expect(bq.waitForExit() == .exited(0))
    }

    @Test func sigkillUnderLoadLosesNothingAcknowledged() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let (bq, load) = try Self.loadThenSignal(SIGKILL, dataDirectory: dir.path)
        let exit = try #require(bq.waitForExit())
        #expect(exit == .signalled(SIGKILL))
        try Self.verifyAfterRestart(dir.path, load)
    }
}
