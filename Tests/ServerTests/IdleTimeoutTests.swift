import Foundation
import JSON
import Testing
@testable import EventLog

/// `idle_timeout_seconds`: a connection that sends nothing gets `bye` `idle_timeout` and is
/// closed; one that keeps sending requests is left alone.
@Suite struct IdleTimeoutTests {
    /// Idle time is the test's to move: no stall of a loaded machine can make the pinging
    /// connection look idle. Only the server's once-a-second sweep runs on real time, and the
    /// test waits for what it sends.
    @Test func idleConnectionsGetByeActiveOnesStay() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let now = LockedBox<UInt64>(0)
        let server = try ServerHarness(dataDirectory: dir.path, configure: { $0.limits.idleTimeoutSeconds = 10 },
                                       steadyClock: { now.value })
        defer { try? server.stop() }
        let active = try server.connect()
        active.label = "active"
        try active.signInAsAdmin()
        try active.subscribe()
        let idle = try server.connect()
        idle.label = "idle"

        now.update { $0 = 6_000 }
        try active.ok("ping")
        now.update { $0 = 11_000 }  // idle has been silent for 11 s, active for 5 s

        guard case .message(let bye) = try idle.readWithin(milliseconds: 30_000) else {
            throw HarnessError("the idle connection got no bye")
        }
        #expect(bye["push"] == "bye")
        #expect(bye["reason"] == "idle_timeout")
        guard case .eof = try idle.readWithin(milliseconds: 10_000) else {
            throw HarnessError("the idle connection was not closed after its bye")
        }
        #expect(active.byeReason == nil, "the pinging connection was never told to go")
        try active.ok("adjust_points", ["delta": 1, "reason": "still here"])
        try active.checkMirror(step: "after the idle one left")
        #expect(active.problems == [])
    }
}

/// A connection waiting for the reply to its own request is not idle: the reply comes first.
@Suite struct IdleWhileWaitingTests {
    @Test
    func aRequestInFlightIsAnsweredBeforeAnyIdleBye() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let now = LockedBox<UInt64>(0)
        let server = try ServerHarness(dataDirectory: dir.path, configure: {
            $0.limits.idleTimeoutSeconds = 1
            // Several runs of the once-a-second idle sweep happen while the commit waits.
            $0.busyTimeoutMilliseconds = 4_000
        }, steadyClock: { now.value })
        defer { try? server.stop() }
        let client = try server.connect()
        try client.signInAsAdmin()
        let probe = try server.connect()
        try probe.signInAsAdmin()
        let before = try probe.currentVersion()
        let locker = try EventStore.holdingWriteLock(in: dir.path)
        defer { locker.close() }
        let id = try client.send("adjust_points", ["delta": 1, "reason": "slow commit"])
        // Once the server has read and decided it (a refused `expect` names the version commands
        // are decided at), idle time jumps far past the timeout: only the request in flight
        // keeps the connection open.
        try #require(try probe.waitUntilDecided(atVersion: before + 1), "the slow commit was never decided")
        now.update { $0 = 100_000 }
        // The first line after the request must be its reply (here `unavailable`), not a bye.
        let first = try client.readMessage()
        try locker.executeForTesting("ROLLBACK")
        #expect(first?["push"] == nil, "got \(first?.serialized() ?? "EOF") before the reply")
        #expect(first?["id"] == .int(id))
        #expect(first?.errorCode == "unavailable")
    }
}
