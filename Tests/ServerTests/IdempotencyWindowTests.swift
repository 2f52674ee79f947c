import Foundation
@testable import EventLog
import JSON
import Server
import Testing

/// Keys are remembered for the game's last `idempotency_window` events, in memory and across a
/// restart; a retry inside the window replays the first answer (read back from the log), one
/// outside it is a new request.
@Suite struct IdempotencyWindowTests {
    private static let window = 1_000

    private static func configure(_ config: inout ServerConfig) {
        config.idempotencyWindow = window
        config.limits.requestsPerSecond = 1_000_000
    }

    @Test func aKeyInsideTheWindowReplaysAndOneOutsideItCommitsAnew() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let first = try ServerHarness(dataDirectory: dir.path, configure: Self.configure)
        let admin = try first.connect()
        try admin.ok("admin", ["key": .string(ServerHarness.adminKey)])
        let old: [String: JSONValue] = ["delta": 3, "reason": "early bird", "idem": "old"]
        let oldReply = try admin.ok("adjust_points", old)
        for index in 0..<Self.window {
            try admin.ok("adjust_points", ["delta": 1, "reason": .string("filler \(index)")])
        }
        let recent: [String: JSONValue] = ["delta": 5, "reason": "late", "idem": "recent"]
        let recentReply = try admin.ok("adjust_points", recent)

        // In memory: the recent key replays its first answer, read back from the log.
        let replay = try admin.ok("adjust_points", recent)
        #expect(replay["replayed"] == true)
        #expect(replay["version"] == recentReply["version"])
        #expect(replay["result"] == recentReply["result"])
        try first.stop()

        let second = try ServerHarness(dataDirectory: dir.path, configure: Self.configure)
        let admin2 = try second.connect()
        try admin2.ok("admin", ["key": .string(ServerHarness.adminKey)])
        let helloVersion = admin2.hello["version"]?.intValue
        let versionAfterRestart = try #require(helloVersion)
        let replayAfterRestart = try admin2.ok("adjust_points", recent)
        #expect(replayAfterRestart["replayed"] == true)
        #expect(replayAfterRestart["result"] == recentReply["result"])
        #expect(try admin2.ok("ping")["version"]?.intValue == versionAfterRestart, "a replay commits nothing")

        // The old key fell out of the window: the same request is decided again, as new.
        let again = try admin2.ok("adjust_points", old)
        #expect(again["replayed"] == nil)
        #expect(again["version"]?.intValue == versionAfterRestart + 1)
        #expect(again["version"] != oldReply["version"])
        // ... and from now on it is remembered again.
        #expect(try admin2.ok("adjust_points", old)["replayed"] == true)
    }

    /// The window's exact edge on a running server: a key committed at version k replays up to
    /// version k + window - 1 and is new at k + window, as after a restart (the loader keeps the
    /// records after version - window, the same rule).
    @Test func theWindowsEdgeInMemory() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path, configure: Self.configure)
        defer { try? server.stop() }
        let admin = try server.connect()
        try admin.ok("admin", ["key": .string(ServerHarness.adminKey)])
        let old: [String: JSONValue] = ["delta": 3, "reason": "early bird", "idem": "old"]
        let committedAt = try #require(try admin.ok("adjust_points", old)["version"]?.intValue)
        for index in 0..<(Self.window - 1) {
            try admin.ok("adjust_points", ["delta": 1, "reason": .string("filler \(index)")])
        }
        let inside = try admin.ok("adjust_points", old)
        #expect(inside["replayed"] == true, "at version \(committedAt + Self.window - 1) the key is inside the window")
        #expect(inside["version"]?.intValue == committedAt)

        try admin.ok("adjust_points", ["delta": 1, "reason": "the last filler"])
        let outside = try admin.ok("adjust_points", old)
        #expect(outside["replayed"] == nil, "at version \(committedAt + Self.window) the key has left the window")
        #expect(outside["version"]?.intValue == committedAt + Self.window + 1)
    }

    /// Keyed requests that change nothing move no version, so the window of versions alone
    /// would keep every one of their keys, in memory and in what a start-up loads. Only the
    /// newest `idempotency_window` of them are kept, and the key of a change is not pushed out.
    @Test func keysOfRequestsThatChangedNothingAreKeptOnlyUpToTheWindow() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let first = try ServerHarness(dataDirectory: dir.path, configure: Self.configure)
        let admin = try first.connect()
        try admin.ok("admin", ["key": .string(ServerHarness.adminKey)])
        try admin.ok("set_day", ["day": 2])
        let change: [String: JSONValue] = ["delta": 4, "reason": "kept", "idem": "change"]
        let changeVersion = try #require(try admin.ok("adjust_points", change)["version"]?.intValue)
        func sameDay(_ index: Int) -> [String: JSONValue] { ["day": 2, "idem": .string("same day \(index)")] }
        for index in 0...Self.window {
            try admin.ok("set_day", sameDay(index))
        }
        #expect(try admin.ok("ping")["version"]?.intValue == changeVersion, "setting the same day changes nothing")

        #expect(try admin.ok("set_day", sameDay(Self.window))["replayed"] == true)
        #expect(try admin.ok("set_day", sameDay(0))["replayed"] == nil, "the oldest key is decided again, as new")
        #expect(try admin.ok("adjust_points", change)["replayed"] == true, "a change's key is not pushed out")
        try first.stop()

        // A start-up loads only the newest: key 0 again, and 2 to the window.
        let second = try ServerHarness(dataDirectory: dir.path, configure: Self.configure)
        let admin2 = try second.connect()
        try admin2.ok("admin", ["key": .string(ServerHarness.adminKey)])
        #expect(try admin2.ok("set_day", sameDay(0))["replayed"] == true)
        #expect(try admin2.ok("set_day", sameDay(2))["replayed"] == true)
        #expect(try admin2.ok("set_day", sameDay(1))["replayed"] == nil)
        let again = try admin2.ok("adjust_points", change)
        #expect(again["replayed"] == true && again["version"]?.intValue == changeVersion)
        try admin2.ok("set_day", sameDay(1))
        try second.stop()

        // `bq verify` knows the rule: a key used again only once it was pushed out.
        #expect(try LogVerifier.verify(path: dir.path + "/birthdayquest.sqlite", idempotencyWindow: Self.window).problems == [])
        let tooSoon = try LogVerifier.verify(path: dir.path + "/birthdayquest.sqlite", idempotencyWindow: Self.window + 1)
        #expect(tooSoon.problems.count == 2, "\(tooSoon.problems)")
        #expect(tooSoon.problems.first?.contains("\"same day 0\" of admin appears twice") == true, "\(tooSoon.problems)")
    }

    /// Told only that nothing was committed, a person would make the change again under a new
    /// key, and twice: the refusal says it was made, and at which version.
    @Test func aRetryWhoseFirstReplyIsMissingFromTheLogSaysTheChangeWasMadeAndCommitsNothing() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path, configure: Self.configure)
        let admin = try server.connect()
        try admin.ok("admin", ["key": .string(ServerHarness.adminKey)])
        let keyed: [String: JSONValue] = ["delta": 2, "reason": "kept", "idem": "lost-reply"]
        let first = try admin.ok("adjust_points", keyed)

        // Another connection makes the record unfindable, as a damaged log would.
        let store = try EventStore(path: dir.path + "/birthdayquest.sqlite", options: StoreOptions(synchronous: .off))
        try store.executeForTesting("UPDATE events SET idem = 'someone-else' WHERE idem = 'lost-reply'")
        store.close()

        let version = try #require(first["version"]?.intValue)
        let retry = try admin.call("adjust_points", keyed)
        #expect(retry["error"]?["code"] == "internal", "trying again will not bring the record back")
        #expect(retry["error"]?["message"]?.stringValue?.hasSuffix("it was applied once, at version \(version)") == true)
        #expect(try admin.ok("ping")["version"] == first["version"], "the retry committed nothing")
    }

    /// A retry whose first answer cannot be read at the moment (here the log's schema is broken
    /// under the server, so the read fails) is told that the change was made, and where: not
    /// that nothing was committed, which would have the person make it again.
    @Test func aRetryWhoseFirstReplyCannotBeReadNowSaysTheChangeWasMade() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path, configure: Self.configure)
        defer { try? server.stop() }
        let admin = try server.connect()
        try admin.ok("admin", ["key": .string(ServerHarness.adminKey)])
        let keyed: [String: JSONValue] = ["delta": 2, "reason": "kept", "idem": "unreadable"]
        let version = try #require(try admin.ok("adjust_points", keyed)["version"]?.intValue)

        let store = try EventStore(path: dir.path + "/birthdayquest.sqlite", options: StoreOptions(synchronous: .off))
        try store.executeForTesting("DROP TABLE idempotency")
        store.close()

        let retry = try admin.call("adjust_points", keyed)
        #expect(retry["error"]?["code"] == "unavailable", "\(retry.serialized())")
        let message = retry["error"]?["message"]?.stringValue ?? ""
        #expect(message.hasPrefix("This change was already made, at version \(version),"), "\(message)")
        #expect(message.contains("do not make it again"), "\(message)")
        #expect(try admin.ok("ping")["version"]?.intValue == version, "the retry committed nothing")
    }
}
