import Client
import Foundation
import JSON
import Protocol
import Testing

/// A log restored from a backup and played on past the version a running `bq play` last saw:
/// by version numbers alone the restored game looks like the one shown moving on, and the
/// player's screen would keep the lost changes (`since_digest` tells the two apart).
@Suite struct RestoredGameTests {
    @Test func aGameRestoredAndPlayedOnBeforeTheReconnectIsSaidToDiffer() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let home = try makeTemporaryDirectory()
        let mia = try BQProcess(["play", "--no-color"] + server.address + ["--character", "mia"], home: home)
        defer { mia.kill() }
        #expect(mia.output.waitFor("Type help for commands."))
        let backup = home.appendingPathComponent("before.sqlite").path
        let backedUp = try BQProcess.run(["backup", "--data", server.dataDirectory.path, backup])
        #expect(backedUp.status == 0, "\(backedUp.err)")

        // A change the restore loses, which Mia sees.
        #expect(try BQProcess.run(["admin", "adjust-points", "50", "--reason", "lost with the restore"] + server.adminFlags).status == 0)
        #expect(mia.output.waitFor("+50 ✦"))
        server.stop()
        #expect(mia.output.waitFor("The server is stopping"))

        // The organizer restores the backup into an empty directory, and the game goes on
        // (here on another port, so that Mia cannot reconnect in between) past the version
        // Mia last saw.
        let restored = try makeTemporaryDirectory()
        try FileManager.default.copyItem(atPath: backup, toPath: restored.appendingPathComponent("birthdayquest.sqlite").path)
        try FileManager.default.copyItem(at: server.dataDirectory.appendingPathComponent("admin.key"),
                                         to: restored.appendingPathComponent("admin.key"))
        let elsewhere = try ServerProcess(dataDirectory: restored)
        for _ in 1...3 {
            #expect(try BQProcess.run(["admin", "adjust-points", "1", "--reason", "after the restore"] + elsewhere.adminFlags).status == 0)
        }
        elsewhere.stop()

        let back = try ServerProcess(dataDirectory: restored, port: server.port)
        defer { back.stop() }
        #expect(mia.output.waitFor("The game on the server is not the one shown until now (restored from a backup"))
        mia.send("home")
        #expect(mia.output.waitFor("Points: 3 ✦"))
        // News goes on from the restored game.
        #expect(try BQProcess.run(["admin", "adjust-points", "7", "--reason", "cake"] + back.adminFlags).status == 0)
        #expect(mia.output.waitFor("The organizer adjusted the points: +7 ✦"))
        #expect(mia.finish() == 0)
        #expect(!mia.output.text.contains("-50"), "the lost change is not told as taken back: \(mia.output.text)")
    }
}

/// `diverged` speaks of the snapshot that follows it: when the connection is lost before that
/// snapshot came, the next connection's resubscribe says again whether the game differs.
@Suite struct DivergedAnswerTests {
    @Test func aDivergedAnswerWhoseSnapshotNeverCameDoesNotMarkALaterView() throws {
        let subscribes = CallCounter(), discovers = CallCounter()
        let fake = FakeServer { request in
            let id = request["id"] ?? .null
            switch request["op"]?.stringValue {
            case "claim":
                return [["id": id, "ok": true, "version": 1, "result": ["token": "t", "character": "mia", "role": "birthday"]]]
            case "auth":
                return [["id": id, "ok": true, "version": 1, "result": ["character": "mia", "role": "birthday"]]]
            case "subscribe":
                switch subscribes.next() {
                case 1:
                    return [["id": id, "ok": true, "version": 1, "result": ["mode": "snapshot"]],
                            ["push": "snapshot", "version": 1, "state": LiveNewsTests.view]]
                case 2:  // diverged, and the connection ends before the snapshot
                    return [["id": id, "ok": true, "version": 1, "result": ["mode": "snapshot", "diverged": true]], FakeServer.hangUp]
                default:  // the same game after all: an empty patch
                    return [["id": id, "ok": true, "version": 1, "result": ["mode": "patch"]],
                            ["push": "patch", "from": 1, "to": 1, "ops": []]]
                }
            case "discover_secrets":
                if discovers.next() == 1 {
                    return [["id": id, "ok": true, "version": 1, "result": ["found": 0]], FakeServer.hangUp]
                }
                return [["push": "patch", "from": 1, "to": 2, "ops": [["op": "replace", "path": "/game/points", "value": 10],
                                                                    ["op": "replace", "path": "/game/earned", "value": 10]]],
                        ["id": id, "ok": true, "version": 2, "result": ["found": 0]]]
            default:
                return [["id": id, "ok": false, "error": ["code": "unknown_op", "message": "fake"]]]
            }
        }
        defer { fake.stop() }
        let mia = try NewsBurstTests.mia(playingAt: fake)
        defer { mia.kill() }
        mia.send("discover")
        #expect(mia.output.waitFor("Reconnected."))
        mia.send("discover")
        #expect(mia.output.waitFor("The organizer adjusted the points: +10 ✦"))
        #expect(subscribes.value == 3)
        #expect(mia.finish() == 0)
        #expect(!mia.output.text.contains("went back") && !mia.output.text.contains("not the one shown"), "\(mia.output.text)")
    }
}

/// The usual reconnect, to the same game: the client sends its mirror's digest, and the server,
/// finding it the view it holds, answers with a patch, not a snapshot.
@Suite struct SameGameResumeTests {
    /// Lines seen by a client's line observer, from any thread.
    final class SentLines: @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [JSONValue] = []
        func append(_ line: String) { if let value = try? JSONParser.parse(line) { lock.withLock { lines.append(value) } } }
        var all: [JSONValue] { lock.withLock { lines } }
    }

    @Test func aReconnectToTheSameGameSendsTheMirrorsDigestAndIsPatched() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let sent = SentLines()
        let client = try GameClient.connect(port: server.port, onLine: { line, outgoing in if outgoing { sent.append(line) } })
        defer { client.close() }
        let events = EventLog()
        client.onEvent { events.append($0) }
        try client.signInAdmin(key: server.adminKey)
        try client.subscribe()
        let version = try #require(try client.request("adjust_points", ["delta": 5, "reason": "before the restart"]).version)
        #expect(client.waitForMirror(atLeast: version, timeout: 20))
        let view = try #require(client.view)

        server.stop()
        let back = try ServerProcess(dataDirectory: server.dataDirectory, port: server.port)
        defer { back.stop() }
        #expect(events.waitFor { if case .patch(let from, let to, _, _, _) = $0 { from == version && to == version } else { false } })

        let resubscribe = sent.all.last { $0["op"] == "subscribe" }
        #expect(resubscribe?["since"] == .int(version))
        #expect(resubscribe?["since_digest"] == .string(ViewDigest.of(view)))
        let kinds = events.all.compactMap { event -> String? in
            switch event {
            case .snapshot: "snapshot"
            case .diverged: "diverged"
            case .reconnected: "reconnected"
            default: nil
            }
        }
        #expect(kinds == ["snapshot", "reconnected"], "one snapshot, the first; no other after the reconnect")
    }
}
