import Foundation
import JSON
import Testing
@testable import EventLog

/// Another process holding SQLite's write lock (a backup, a stray `sqlite3` shell): commits
/// fail with `unavailable` once the busy timeout runs out, reads keep being served from
/// memory, nothing half-happens, and everything works again once the lock is gone.
@Suite struct LockedLogTests {
    @Test func aLockedDatabaseRefusesMutationsKeepsReadsAndRecovers() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path) { $0.busyTimeoutMilliseconds = 50 }
        defer { try? server.stop() }
        let admin = try server.connect()
        admin.label = "admin"
        try admin.signInAsAdmin()
        let watcher = try server.connect()
        watcher.label = "watcher"
        try watcher.signInAsAdmin()
        try watcher.subscribe()
        let mia = try server.connect()
        mia.label = "mia"
        try mia.ok("claim", ["character": "mia", "device": "phone"])
        try admin.ok("adjust_points", ["delta": 10, "reason": "warm-up"])
        try watcher.checkMirror(step: "before the lock")

        let versionBefore = try admin.currentVersion()
        let eventsBefore = try admin.allEvents()
        let stateBefore = try admin.ok("state")["result"]
        let timelineBefore = try admin.ok("timeline")["result"]
        let patchesBefore = watcher.patches

        // A second connection to the same file takes the write lock and keeps it.
        let locker = try EventStore.holdingWriteLock(in: dir.path)
        defer { locker.close() }

        let keyed: [String: JSONValue] = ["delta": 25, "reason": "locked out", "idem": "retry-me"]
        let refused = try admin.call("adjust_points", keyed)
        #expect(refused.errorCode == "unavailable", "\(refused.serialized())")
        // Two mutations in flight together: the second was decided on top of the first, so it fails with it.
        let first = try mia.send("complete_challenge", ["challenge": "c02", "proof": ["kind": "done"]])
        let second = try mia.send("complete_challenge", ["challenge": "c06", "proof": ["kind": "done"]])
        #expect(try mia.reply(to: first).errorCode == "unavailable")
        #expect(try mia.reply(to: second).errorCode == "unavailable")

        // Reads are answered from the durable state while the lock is held.
        #expect(try admin.currentVersion() == versionBefore)
        let stateDuring = try admin.ok("state")
        #expect(stateDuring.versionNumber == versionBefore)
        #expect(stateDuring["result"] == stateBefore, "a refused commit left no trace in the state")
        #expect(try admin.ok("timeline")["result"] == timelineBefore)
        #expect(try mia.ok("whoami")["result"]?["character"] == "mia")
        #expect(try admin.allEvents() == eventsBefore, "nothing was committed")
        try watcher.checkMirror(step: "while locked")
        #expect(watcher.patches == patchesBefore, "no patch for a commit that did not happen")

        try locker.executeForTesting("ROLLBACK")

        // The refused key was not remembered: its retry commits, once.
        let retried = try admin.ok("adjust_points", keyed)
        #expect(retried["replayed"] == nil)
        #expect(retried.versionNumber == versionBefore + 1)
        #expect(retried["result"]?["points"] == .int(35))
        let replayed = try admin.ok("adjust_points", keyed)
        #expect(replayed["replayed"] == .bool(true))
        #expect(replayed.versionNumber == versionBefore + 1)
        let completed = try mia.ok("complete_challenge", ["challenge": "c02", "proof": ["kind": "done"]])
        #expect(completed.versionNumber == versionBefore + 2)

        let eventsAfter = try admin.allEvents()
        #expect(eventsAfter.count == eventsBefore.count + 2)
        #expect(eventsAfter.map(\.versionNumber) == Array(1...(versionBefore + 2)), "the log stays gapless")
        #expect(eventsAfter.filter { $0["data"]?["reason"] == "locked out" }.count == 1)
        try watcher.checkMirror(step: "after the lock")
        #expect(watcher.mirrorVersion == versionBefore + 2)
        #expect(admin.problems + watcher.problems + mia.problems == [])
    }

    @Test func aFailedSnapshotCommitAndAKeySentTwiceLeaveAConsistentLog() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path) {
            $0.busyTimeoutMilliseconds = 50
            $0.snapshotEvery = 2
        }
        defer { try? server.stop() }
        let first = try server.connect()
        try first.signInAsAdmin()
        let second = try server.connect()
        try second.signInAsAdmin()
        try first.subscribe()
        try first.ok("adjust_points", ["delta": 1, "reason": "one"])
        let start = try first.currentVersion()
        let viewAtStart = try #require(try first.ok("state")["result"]?["state"])

        let locker = try EventStore.holdingWriteLock(in: dir.path)
        defer { locker.close() }
        // The same key from two connections of one identity while commits fail: neither commits.
        let keyed: [String: JSONValue] = ["delta": 5, "reason": "twice", "idem": "shared"]
        let a = try first.send("adjust_points", keyed)
        let b = try second.send("adjust_points", keyed)
        #expect(try first.reply(to: a).errorCode == "unavailable")
        #expect(try second.reply(to: b).errorCode == "unavailable")
        #expect(try first.currentVersion() == start)
        try locker.executeForTesting("ROLLBACK")

        let retryA = try first.send("adjust_points", keyed)
        let retryB = try second.send("adjust_points", keyed)
        let answers = [try first.reply(to: retryA), try second.reply(to: retryB)]
        #expect(answers.allSatisfy { $0["ok"] == true }, "\(answers.map { $0.serialized() })")
        #expect(answers.map(\.versionNumber) == [start + 1, start + 1])
        #expect(answers.filter { $0["replayed"] == true }.count == 1, "one commit, one replay")
        for index in 0..<4 { try second.ok("adjust_points", ["delta": 1, "reason": .string("after \(index)")]) }
        let current = try first.currentVersion()
        #expect(current == start + 5)
        let events = try first.allEvents()
        #expect(events.map(\.versionNumber) == Array(1...current))
        #expect(events.filter { $0["data"]?["reason"] == "twice" }.count == 1)
        try first.checkMirror(step: "after recovery")
        #expect(first.problems == [])

        // Snapshots written around the failure agree with the log: a resume from before it works.
        let resumer = try server.connect()
        try resumer.signInAsAdmin()
        resumer.adoptMirror(viewAtStart, version: start)
        #expect(try resumer.subscribe(since: start)["result"] == ["mode": "patch"])
        try resumer.checkMirror(step: "resumed across the failure")
        #expect(resumer.problems == [])
        try server.stop()
        let verify = try BQRun.run(["verify", "--data", dir.path], workingDirectory: dir.path)
        #expect(verify.ending == .exited(0), "\(verify.stdout)")
    }

    /// After commits failed, the log must not end on the failures while the game saves again:
    /// the first commit that succeeds says so, counting the failures not logged one by one.
    @Test func theServersLogSaysWhenCommitsSucceedAgain() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let logFile = dir.path + "/serve.log"
        let bq = try BQProcess(dataDirectory: dir.path + "/data", environment: ["BQ_BUSY_TIMEOUT_MS": "50"],
                               logFile: logFile, logLevel: "notice")
        let admin = try TestClient(port: bq.port)
        try admin.signInAsAdmin()
        try admin.ok("adjust_points", ["delta": 1, "reason": "before"])
        let locker = try EventStore.holdingWriteLock(in: dir.path + "/data")
        defer { locker.close() }
        for index in 0..<3 {
            #expect(try admin.call("adjust_points", ["delta": 1, "reason": .string("locked \(index)")]).errorCode == "unavailable")
        }
        try locker.executeForTesting("ROLLBACK")
        try admin.ok("adjust_points", ["delta": 1, "reason": "after"])
        bq.signal(SIGTERM)
        #expect(bq.waitForExit() == .exited(0))
        let log = (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? ""
        let failed = try #require(log.range(of: "commit failed"), "\(log)")
        let recovered = try #require(log.range(of: "commits succeed again"), "\(log)")
        #expect(failed.lowerBound < recovered.lowerBound)
        #expect(log.contains("failed=3"), "every failure counted: \(log)")
        #expect(!log.contains("more commits failed"), "no report of failures after the recovery: \(log)")
    }

    /// A keyed command that changes nothing writes only its record, at the version it found. A
    /// change decided behind it expects that same version, so when the record's commit fails
    /// the version check alone would let the change commit after it was answered "nothing was
    /// committed" (and the server's copy of the game would then be behind its log).
    @Test func aChangeDecidedBehindAFailedNoOpNeverCommitsAfterItsRefusal() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        // Long enough for the change to reach the writer while the no-op still waits for the lock.
        let server = try ServerHarness(dataDirectory: dir.path) { $0.busyTimeoutMilliseconds = 400 }
        defer { try? server.stop() }
        let admin = try server.connect()
        try admin.signInAsAdmin()
        let other = try server.connect()
        try other.signInAsAdmin()
        let watcher = try server.connect()
        try watcher.signInAsAdmin()
        try watcher.subscribe()
        let day = try #require(try admin.ok("state")["result"]?["state"]?["game"]?["day"])
        let versionBefore = try admin.currentVersion()

        let locker = try EventStore.holdingWriteLock(in: dir.path)
        defer { locker.close() }
        let noOp = try admin.send("set_day", ["day": day, "idem": "same-day"])
        // A round trip, so that the no-op is with the writer before the change is decided.
        _ = try watcher.ok("whoami")
        let change = try other.send("adjust_points", ["delta": 5, "reason": "behind the no-op", "idem": "behind"])
        #expect(try admin.reply(to: noOp).errorCode == "unavailable")
        // The lock goes while the change may still be on its way to the writer.
        try locker.executeForTesting("ROLLBACK")
        let answer = try other.reply(to: change)
        let committed = answer["ok"] == .bool(true)
        #expect(committed || answer.errorCode == "unavailable", "\(answer.serialized())")

        // The game goes on: nothing the server answered differs from its log.
        let next = try admin.ok("adjust_points", ["delta": 1, "reason": "afterwards"])
        #expect(next.versionNumber == versionBefore + (committed ? 2 : 1))
        let events = try admin.allEvents()
        #expect(events.map(\.versionNumber) == Array(1...(versionBefore + (committed ? 2 : 1))))
        #expect(events.filter { $0["data"]?["reason"] == "behind the no-op" }.count == (committed ? 1 : 0),
                "the change is in the log exactly when it was answered ok")
        try watcher.checkMirror(step: "after the failed no-op")
        #expect(admin.problems + other.problems + watcher.problems == [])
        try server.stop()
        let verify = try BQRun.run(["verify", "--data", dir.path], workingDirectory: dir.path)
        #expect(verify.ending == .exited(0), "\(verify.stdout)")
    }

    /// A second tap decided while the first is on its way to disk would be refused as already
    /// done; if the first then fails, that refusal would describe a state that never was.
    @Test func aRefusalDecidedOnAChangeThatFailsSaysNothingWasDecided() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path) { $0.busyTimeoutMilliseconds = 50 }
        defer { try? server.stop() }
        let mia = try server.connect()
        try mia.ok("claim", ["character": "mia", "device": "phone"])
        let locker = try EventStore.holdingWriteLock(in: dir.path)
        defer { locker.close() }
        let done: [String: JSONValue] = ["challenge": "c02", "proof": ["kind": "done"]]
        let first = try mia.send("complete_challenge", done)
        let second = try mia.send("complete_challenge", done)
        #expect(try mia.reply(to: first).errorCode == "unavailable")
        let refused = try mia.reply(to: second)
        #expect(refused.errorCode == "unavailable", "not already_completed: \(refused.serialized())")
        try locker.executeForTesting("ROLLBACK")

        // Once the disk is back, the same two taps: one completion, one refusal after it.
        let again = [try mia.send("complete_challenge", done), try mia.send("complete_challenge", done)]
        #expect(try mia.reply(to: again[0])["ok"] == true)
        #expect(try mia.reply(to: again[1]).errorCode == "already_completed")
        #expect(mia.problems == [])
        try server.stop()
    }
}
