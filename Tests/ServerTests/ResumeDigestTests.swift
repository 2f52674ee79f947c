import Foundation
import JSON
import Protocol
import Testing

/// `subscribe since` with `since_digest`: the server patches a client's view only when its game
/// at `since` is that very view. A log restored from an older backup and played on past the
/// version a client last saw has the same version numbers for another game.
@Suite struct ResumeDigestTests {
    /// The last push received, which `subscribe` just consumed.
    static func lastPush(_ client: TestClient) -> JSONValue? {
        client.lines.last { $0.message["push"] != nil }?.message
    }

    /// A new admin connection holding `view` at `version`, to resume from, its lines kept.
    static func admin(of server: ServerHarness, holding view: JSONValue, at version: Int, label: String = "resumer") throws -> TestClient {
        let client = try server.connect()
        client.label = label
        client.recordsLines = true
        try client.signInAsAdmin()
        client.adoptMirror(view, version: version)
        return client
    }

    @Test func aViewOfAGameRestoredFromAnOlderBackupAndPlayedOnGetsASnapshotThatSaysSo() throws {
        let live = try TempDirectory()
        defer { live.remove() }
        let restored = NSTemporaryDirectory() + "bq-e2e-restored-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: restored) }

        // The backup: the game after one change, taken while the server was stopped.
        var server = try ServerHarness(dataDirectory: live.path)
        let admin = try server.connect()
        try admin.signInAsAdmin()
        try admin.ok("adjust_points", ["delta": 10, "reason": "before the backup"])
        try server.stop()
        try FileManager.default.copyItem(atPath: live.path, toPath: restored)

        // The game goes on after the backup, and a phone follows it.
        server = try ServerHarness(dataDirectory: live.path)
        let phone = try server.connect()
        phone.label = "phone"
        try phone.signInAsAdmin()
        _ = try phone.subscribe()
        try phone.ok("adjust_points", ["delta": 50, "reason": "lost with the restore"])
        try phone.ok("set_day", ["day": 2])
        let seen = try #require(phone.mirror)
        let seenVersion = phone.mirrorVersion
        try server.stop()

        // The backup is restored and played on, past the version the phone saw.
        server = try ServerHarness(dataDirectory: restored)
        defer { try? server.stop() }
        let organizer = try server.connect()
        try organizer.signInAsAdmin()
        for reason in ["after the restore", "and again", "once more"] {
            try organizer.ok("adjust_points", ["delta": 1, "reason": .string(reason)])
        }
        let current = try organizer.currentVersion()
        #expect(current > seenVersion)

        // By its version alone the phone's view would be patched as if it were this game's past.
        let unchecked = try Self.admin(of: server, holding: seen, at: seenVersion, label: "unchecked")
        #expect(try unchecked.subscribe(since: seenVersion)["result"] == ["mode": "patch"])

        let resumed = try Self.admin(of: server, holding: seen, at: seenVersion, label: "phone resumed")
        let reply = try resumed.subscribe(since: seenVersion, digest: ViewDigest.of(seen))
        #expect(reply["result"] == ["mode": "snapshot", "diverged": true])
        let push = try #require(Self.lastPush(resumed))
        #expect(push["push"] == "snapshot")
        #expect(push["version"] == .int(current))
        try resumed.checkMirror(step: "resumed across the restore")
        let points = try organizer.ok("state")["result"]?["state"]?["game"]?["points"]
        #expect(resumed.mirror?["game"]?["points"] == points)
        #expect(resumed.problems == [])
    }

    @Test func theCurrentVersionIsCheckedToo() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        defer { try? server.stop() }
        let admin = try server.connect()
        try admin.signInAsAdmin()
        try admin.ok("adjust_points", ["delta": 10, "reason": "something"])
        let current = try admin.currentVersion()
        let view = try #require(try admin.ok("state")["result"]?["state"])

        let same = try Self.admin(of: server, holding: view, at: current, label: "same")
        #expect(try same.subscribe(since: current, digest: ViewDigest.of(view).uppercased())["result"] == ["mode": "patch"])
        #expect(Self.lastPush(same)?["ops"] == [])

        // The same version, another game: its points differ.
        var game = try #require(view["game"]?.objectValue)
        game["points"] = .int(99_999)
        var members = try #require(view.objectValue)
        members["game"] = .object(game)
        let other = JSONValue.object(members)
        let differs = try Self.admin(of: server, holding: other, at: current, label: "differs")
        #expect(try differs.subscribe(since: current, digest: ViewDigest.of(other))["result"] == ["mode": "snapshot", "diverged": true])
        #expect(Self.lastPush(differs)?["push"] == "snapshot")
        #expect(differs.mirror.map(ViewDigest.of) == ViewDigest.of(view), "the snapshot replaced the other game's view")
        #expect(same.problems + differs.problems == [])
    }

    /// "Café" written with a combining accent is the same text to Swift's `String` equality but
    /// other bytes on the wire: a patch that left the new spelling out would leave every mirror
    /// with the old bytes, and the next resume with a digest would be told `diverged`.
    @Test func anotherSpellingOfATitleReachesEveryMirror() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        defer { try? server.stop() }
        let priya = try server.connect()
        priya.label = "priya"
        try priya.ok("claim", ["character": "priya", "device": "phone"])
        _ = try priya.subscribe()
        try priya.ok("save_secret", ["title": "Caf\u{E9}", "description": "d", "points": 25])
        let before = try #require(priya.mirror)
        let beforeVersion = priya.mirrorVersion
        // Another spelling with another change in the same commit, then the spelling alone
        // over two commits (a resume from before them sees only the two ends).
        try priya.ok("save_secret", ["title": "Cafe\u{301}", "description": "d", "points": 50])
        try priya.checkMirror(step: "respelt with new points")
        try priya.ok("save_secret", ["title": "x", "description": "d", "points": 50])
        try priya.ok("save_secret", ["title": "Cafe\u{301}", "description": "d", "points": 50])
        try priya.checkMirror(step: "respelt again")
        let mirror = try #require(priya.mirror)
        #expect(mirror["challenges"]?["dare-priya"]?["title"] == "Cafe\u{301}")

        let resumed = try server.connect()
        resumed.recordsLines = true
        try resumed.ok("claim", ["character": "priya", "device": "phone"])
        resumed.adoptMirror(before, version: beforeVersion)
        #expect(try resumed.subscribe(since: beforeVersion, digest: ViewDigest.of(before))["result"] == ["mode": "patch"])
        try resumed.checkMirror(step: "resumed from the first spelling")
        #expect(resumed.mirror?["challenges"]?["dare-priya"]?["title"] == "Cafe\u{301}")
        #expect(resumed.mirror.map(ViewDigest.of) == ViewDigest.of(mirror))
        #expect(priya.problems + resumed.problems == [])
    }

    @Test func aVersionThisGameNeverReachedDivergesAndSinceZeroDoesNot() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        defer { try? server.stop() }
        let admin = try server.connect()
        try admin.signInAsAdmin()
        let view = try #require(try admin.ok("state")["result"]?["state"])
        let current = try admin.currentVersion()
        let digest = ViewDigest.of(view)
        let cases: [(since: Int, digest: String?, result: JSONValue)] = [
            (current + 1, nil, ["mode": "snapshot", "diverged": true]),
            (current + 1, digest, ["mode": "snapshot", "diverged": true]),
            // Nothing to continue from: the snapshot is simply the start.
            (0, digest, ["mode": "snapshot"]),
        ]
        for (since, digest, result) in cases {
            let client = try server.connect()
            try client.signInAsAdmin()
            #expect(try client.subscribe(since: since, digest: digest)["result"] == result, "since \(since), digest \(digest ?? "none")")
            #expect(client.mirrorVersion == current)
        }
    }

    @Test func aDigestThatIsNotOneIsRefusedAndSubscribesNothing() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        defer { try? server.stop() }
        let admin = try server.connect()
        try admin.signInAsAdmin()
        let current = try admin.currentVersion()
        for bad: JSONValue in ["abc", .string(String(repeating: "g", count: 64)), 12] {
            let reply = try admin.call("subscribe", ["since": .int(current), "since_digest": bad])
            #expect(reply.errorCode == "bad_request", "\(bad.serialized())")
            #expect(reply["error"]?["message"]?.stringValue?.contains("since_digest") == true, "\(reply.serialized())")
        }
        // Not subscribed by any of them: a change brings no patch before its reply.
        admin.recordsLines = true
        try admin.ok("adjust_points", ["delta": 1, "reason": "after"])
        #expect(Self.lastPush(admin) == nil)
    }
}
