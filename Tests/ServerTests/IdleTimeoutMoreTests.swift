import Foundation
import JSON
import Testing
@testable import EventLog

/// `idle_timeout_seconds`: a connection that sends nothing gets `bye` `idle_timeout` and is
/// closed; one that keeps sending requests is left alone.
@Suite struct IdleTimeoutMoreTests {
    /// Pings `active` until `idle` receives something other than silence; returns what it got.
    /// Each wait is a bounded read on the idle socket, so no sleep stands in for the timer.
    static func pingUntilIdleHearsSomething(active: TestClient, idle: TestClient) throws -> TestClient.ReadOutcome {
        for _ in 0..<150 {
            try active.ok("ping")
            let outcome = try idle.readWithin(milliseconds: 200)
            if case .nothingYet = outcome { continue }
            return outcome
        }
        throw HarnessError("the idle connection heard nothing for 150 rounds")
    }

    @Test func idleConnectionsGetByeActiveOnesStay() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        // 3 s, not 1: `active` must never look idle, and a test thread on a loaded 2-core CI machine
        // can stall for a second between two pings; three seconds of stall is far less likely.
        let server = try ServerHarness(dataDirectory: dir.path) { $0.limits.idleTimeoutSeconds = 3 }
        defer { try? server.stop() }
        let active = try server.connect()
        active.label = "active"
        try active.signInAsAdmin()
        try active.subscribe()
        let idle = try server.connect()
        idle.label = "idle"

        let heard = try Self.pingUntilIdleHearsSomething(active: active, idle: idle)
        guard case .message(let bye) = heard else { throw HarnessError("the idle connection closed without bye") }
        #expect(bye["push"] == "bye")
        #expect(bye["reason"] == "idle_timeout")
        guard case .eof = try idle.readWithin(milliseconds: 10_000) else {
            throw HarnessError("the idle connection was not closed after its bye")
        }

        // `active` connected before `idle` and sent its last request after idle's bye was due:
        // only its requests kept it open.
        #expect(active.byeReason == nil, "the pinging connection was never told to go")
        try active.ok("adjust_points", ["delta": 1, "reason": "still here"])
        try active.checkMirror(step: "after the idle one left")
        #expect(active.problems == [])
    }
}

/// A connection waiting for the reply to its own request is not idle: the reply comes first.
@Suite struct IdleWhileWaitingMoreTests {
    @Test
    func aRequestInFlightIsAnsweredBeforeAnyIdleBye() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path) {
            $0.limits.idleTimeoutSeconds = 1
            // Longer than the idle timer can take (at most 2 s after the last request).
            $0.busyTimeoutMilliseconds = 4_000
        }
        defer { try? server.stop() }
        let client = try server.connect()
        try client.signInAsAdmin()
        let locker = try EventStore(path: dir.path + "/birthdayquest.sqlite",
                                    options: StoreOptions(synchronous: .off, checkIntegrity: false))
        defer { locker.close() }
        try locker.executeForTesting("BEGIN IMMEDIATE")
        let id = try client.send("adjust_points", ["delta": 1, "reason": "slow commit"])
        // The first line after the request must be its reply (here `unavailable`), not a bye.
        let first = try client.readMessage()
        try locker.executeForTesting("ROLLBACK")
        #expect(first?["push"] == nil, "got \(first?.serialized() ?? "EOF") before the reply")
        #expect(first?["id"] == .int(id))
        #expect(first?.errorCode == "unavailable")
    }
}
