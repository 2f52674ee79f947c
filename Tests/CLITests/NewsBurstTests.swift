import Client
import Foundation
import JSON
import Testing

/// Changes that reach `bq play` together (a phone waking up, a network back) are told as what
/// changed in all, not one piece of news per change, and a long catch-up does not scroll the
/// screen away.
@Suite struct NewsBurstTests {
    @Test func changesThatArriveTogetherAreToldAsTheirSum() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let mia = try BQProcess(["play"] + server.address + ["--character", "mia"], home: try makeTemporaryDirectory())
        #expect(mia.output.waitFor("Type help for commands."))

        let admin = try GameClient.connect(port: server.port)
        defer { admin.close() }
        try admin.signInAdmin(key: server.adminKey)
        try admin.subscribe()

        // Mia's phone sleeps while the organizer makes twelve changes, one at a time.
        let changes = 12
        kill(mia.process.processIdentifier, SIGSTOP)
        var resumed = false
        defer { if !resumed { kill(mia.process.processIdentifier, SIGCONT) } }
        var last = 0
        for _ in 1...changes {
            last = try admin.request("adjust_points", ["delta": 1, "reason": "a round of applause"]).version ?? 0
        }
        // The organizer's own patch of the last change has arrived, and the server has answered
        // a request read after it: every patch is on its way to Mia.
        #expect(admin.waitForMirror(atLeast: last, timeout: 20))
        _ = try admin.request("ping")
        let before = mia.output.text.count

        kill(mia.process.processIdentifier, SIGCONT)
        resumed = true
        #expect(mia.output.waitFor("Points: \(changes) ✦"))
        mia.send("whoami")
        #expect(mia.output.waitFor("You are Mia"))
        // What one read brings is told at once; TCP may hand a sleeper's backlog over in a few
        // reads (its receive window), so the sums are counted, not the pieces.
        let told = String(mia.output.text.dropFirst(before)).split(separator: "\n")
        let sums = told.filter { $0.contains("The organizer adjusted the points: +") }
        let total = sums.compactMap { line in
            line.split(separator: "+").last?.split(separator: " ").first.flatMap { Int($0) }
        }.reduce(0, +)
        #expect(total == changes, "every point told, once: \(told)")
        #expect(sums.count < changes, "told as sums, not once per change: \(told)")
        #expect(sums.allSatisfy { $0.hasSuffix("in all") || $0.contains("+1 ✦") }, "a sum says so: \(told)")
        #expect(mia.finish() == 0)
    }

    /// The client library says when the lines that came together are all handled: once after a
    /// burst, after the line that ends it (here a reply), and once after a single patch.
    @Test func theClientSaysOnceWhenABurstIsRead() throws {
        let fake = FakeServer { request in
            let id = request["id"] ?? .null
            switch request["op"]?.stringValue {
            case "subscribe": return Self.snapshotAtOne(answering: id)
            case "burst":
                return (1...3).map { step -> JSONValue in
                    ["push": "patch", "from": .int(step), "to": .int(step + 1),
                     "ops": [["op": "replace", "path": "/game/points", "value": .int(step)]]]
                } + [["id": id, "ok": true, "version": 4, "result": [:]]]
            default:
                return [["push": "patch", "from": 4, "to": 5, "ops": [["op": "replace", "path": "/game/points", "value": 4]]],
                        ["id": id, "ok": true, "version": 5, "result": [:]]]
            }
        }
        defer { fake.stop() }
        let (client, events) = try fake.subscribedClient()
        defer { client.close() }
        _ = try client.request("burst")
        _ = try client.request("single")
        // The reader handles lines in order: past the ping's reply, it is past the single patch's.
        _ = try client.request("ping")
        let kinds = events.all.compactMap { event -> String? in
            switch event {
            case .snapshot(let version, _): "snapshot \(version)"
            case .patch(_, let to, _, _, _): "patch \(to)"
            case .caughtUp: "caught up"
            default: nil
            }
        }
        #expect(kinds == ["snapshot 1", "caught up", "patch 2", "patch 3", "patch 4", "caught up", "patch 5", "caught up"])
    }

    /// A snapshot older than the game shown (the server's log restored from a backup): said so,
    /// and the news after it is measured from the restored game, not the one before.
    @Test func aGameThatWentBackIsSaidSoAndNewsGoesOnFromIt() throws {
        let calls = CallCounter()
        @Sendable func points(_ value: Int) -> [PatchOp] {
            [.replace(path: "/game/points", value: .int(value)), .replace(path: "/game/earned", value: .int(value))]
        }
        let snapshot = try JSONPatch.apply(points(20), to: LiveNewsTests.view)
        let fake = LiveNewsTests.miaServer { id in
            switch calls.next() {
            case 1:  // the game moves on to version 5, at 50 points
                return [["push": "patch", "from": 1, "to": 5, "ops": .array(points(50).map(\.json))],
                        ["id": id, "ok": true, "version": 5, "result": ["found": 0]]]
            case 2:  // restored to version 3, at 20 points
                return [["push": "snapshot", "version": 3, "state": snapshot],
                        ["id": id, "ok": true, "version": 3, "result": ["found": 0]]]
            default:  // the organizer adds 10 to the restored game: version 4, below the 5 told
                return [["push": "patch", "from": 3, "to": 4, "ops": .array(points(30).map(\.json))],
                        ["id": id, "ok": true, "version": 4, "result": ["found": 0]]]
            }
        }
        defer { fake.stop() }
        let mia = try Self.mia(playingAt: fake)
        mia.send("discover")
        #expect(mia.output.waitFor("The organizer adjusted the points: +50 ✦"))
        mia.send("discover")
        #expect(mia.output.waitFor("The game on the server went back to an earlier point"))
        mia.send("discover")
        #expect(mia.output.waitFor("The organizer adjusted the points: +10 ✦"), "\(mia.output.text)")
        #expect(mia.output.waitFor("Points: 30 ✦"), "\(mia.output.text)")
        #expect(mia.finish() == 0)
    }

    /// A reconnect that missed nothing (the server's first patch is empty) ends the catching up:
    /// news of a change made later is not headed "While the connection was down:".
    @Test func aReconnectThatMissedNothingLeavesLaterNewsUnheaded() throws {
        let discovers = CallCounter()
        let fake = FakeServer(hello: ["push": "hello", "protocol": 1, "server": "fake", "game": "main", "version": 1]) { request in
            let id = request["id"] ?? .null
            switch request["op"]?.stringValue {
            case "claim":
                return [["id": id, "ok": true, "version": 1, "result": ["token": "t", "character": "mia", "role": "birthday"]]]
            case "auth":
                return [["id": id, "ok": true, "version": 1, "result": ["character": "mia", "role": "birthday", "game": "main"]]]
            case "subscribe":
                guard let since = request["since"] else {
                    return [["id": id, "ok": true, "version": 1, "result": ["mode": "snapshot"]],
                            ["push": "snapshot", "version": 1, "state": LiveNewsTests.view]]
                }
                return [["id": id, "ok": true, "version": 1, "result": ["mode": "patch"]],
                        ["push": "patch", "from": since, "to": since, "ops": []]]
            case "discover_secrets":
                switch discovers.next() {
                case 1: return [FakeServer.hangUp]
                case 2: return [["id": id, "ok": true, "version": 1, "result": ["found": 0]]]
                default:
                    return [["push": "patch", "from": 1, "to": 2, "ops": [["op": "replace", "path": "/game/points", "value": 7],
                                                                          ["op": "replace", "path": "/game/earned", "value": 7]]],
                            ["id": id, "ok": true, "version": 2, "result": ["found": 0]]]
                }
            default:
                return [["id": id, "ok": false, "error": ["code": "unknown_op", "message": "fake"]]]
            }
        }
        defer { fake.stop() }
        let mia = try Self.mia(playingAt: fake)
        mia.send("discover")
        #expect(mia.output.waitFor("Reconnected."), "\(mia.output.text)")
        #expect(mia.output.waitFor("No hidden dares right now."), "the discovery, sent again: \(mia.output.text)")
        mia.send("discover")
        #expect(mia.output.waitFor("The organizer adjusted the points: +7 ✦"), "\(mia.output.text)")
        #expect(mia.finish() == 0)
        #expect(!mia.output.text.contains("While the connection was down"), "\(mia.output.text)")
    }

    /// Views followed by a line that ends the connection (one that is not JSON) are told before
    /// the loss is, not after a reconnect that may take long.
    @Test func viewsBeforeALostConnectionAreCaughtUpFirst() throws {
        let fake = FakeServer { request in
            let id = request["id"] ?? .null
            switch request["op"]?.stringValue {
            case "subscribe": return Self.snapshotAtOne(answering: id)
            default:
                return [["push": "patch", "from": 1, "to": 2, "ops": [["op": "replace", "path": "/game/points", "value": 5]]],
                        FakeServer.raw("not json"), ["id": id, "ok": true, "version": 2, "result": [:]]]
            }
        }
        defer { fake.stop() }
        let (client, events) = try fake.subscribedClient()
        defer { client.close() }
        _ = client.send("burst")
        #expect(events.waitFor { if case .disconnected = $0 { true } else { false } })
        let kinds = events.all.compactMap { event -> String? in
            switch event {
            case .patch(_, let to, _, _, _): "patch \(to)"
            case .caughtUp: "caught up"
            case .disconnected: "disconnected"
            default: nil
            }
        }
        #expect(kinds.suffix(3) == ["patch 2", "caught up", "disconnected"], "\(kinds)")
    }

    /// Ten entries new on the timeline at once: the newest eight are listed, with a word that
    /// the timeline has the rest.
    @Test func aLongCatchUpListsTheNewestTimelineEntries() throws {
        let entries: [JSONValue] = (1...10).map { seq in
            ["op": "add", "path": "/timeline/-", "value": [
                "seq": .int(seq), "at": "2026-11-21T18:02:11.345Z", "kind": "challenge_completed", "ref": "c02",
                "title": .string("Entry number \(seq)"), "subtitle": "", "from": .null]]
        }
        let fake = LiveNewsTests.miaServer { id in
            [["push": "patch", "from": 1, "to": 11, "ops": .array(entries)],
             ["id": id, "ok": true, "version": 11, "result": ["found": 0]]]
        }
        defer { fake.stop() }
        let mia = try Self.mia(playingAt: fake)
        mia.send("discover")
        #expect(mia.output.waitFor("… 2 earlier entries on the timeline (type timeline to see them)"))
        #expect(mia.output.waitFor("Entry number 10"))
        #expect(mia.finish() == 0)
        let text = mia.output.text
        #expect(!text.contains("Entry number 2\n") && !text.contains("Entry number 1\n"), "\(text)")
        #expect((3...10).allSatisfy { text.contains("Entry number \($0)") }, "\(text)")
    }

    /// `bq play` as Mia at `fake`, once the game is on screen.
    static func mia(playingAt fake: FakeServer) throws -> BQProcess {
        let mia = try BQProcess(["play", "--port", String(fake.port), "--character", "mia"], home: try makeTemporaryDirectory())
        #expect(mia.output.waitFor("Type help for commands."))
        return mia
    }

    /// The answer to a subscribe: a game at version 1, with no points.
    static func snapshotAtOne(answering id: JSONValue) -> [JSONValue] {
        [["id": id, "ok": true, "version": 1, "result": ["mode": "snapshot"]],
         ["push": "snapshot", "version": 1, "state": ["game": ["points": 0]]]]
    }
}
