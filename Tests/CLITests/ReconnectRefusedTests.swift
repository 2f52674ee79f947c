import Client
import Foundation
import JSON
import Testing

/// A reconnect that reaches a server which turns it away (full, too many connections from one
/// address, shutting down) is told with the server's reason, once per reason, while the client
/// keeps trying: "is the server running?" would send the person looking in the wrong place.
@Suite struct ReconnectRefusedTests {
    private static let crowded = "Too many connections from 10.1.2.3 (64 at once); close some and try again"
    private static let busy = "More than 2000 requests per second"

    /// Drops the connection at the first `discover_secrets`. Then each reconnect, in turn, is
    /// turned away as `script` says: `crowded` right after `hello` (as a server does to one
    /// connection too many), `busy` at sign-in; past the script, it is let back in.
    private static func fake(script reconnects: [String]) -> FakeServer {
        final class Script: @unchecked Sendable {
            let lock = NSLock()
            var signIns = 0
            var subscribes = 0
            var discovers = 0
        }
        let script = Script()
        return FakeServer(afterHello: { connection in
            guard connection >= 2, connection - 2 < reconnects.count, reconnects[connection - 2] == crowded else { return [] }
            return [["id": .null, "ok": false, "error": ["code": "unavailable", "message": .string(crowded)]], FakeServer.hangUp]
        }) { request in
            let id = request["id"] ?? .null
            switch request["op"]?.stringValue {
            case "claim", "auth":
                // The sign-ins that get this far: the first, then the reconnects not turned away at hello.
                let signIn = script.lock.withLock { script.signIns += 1; return script.signIns }
                let turnedAway = reconnects.filter { $0 == busy }.count
                if signIn >= 2, signIn - 2 < turnedAway {
                    return [["id": id, "ok": false, "error": ["code": "rate_limited", "message": .string(busy)]]]
                }
                return [["id": id, "ok": true, "version": 1, "result": ["token": "t", "character": "mia", "role": "birthday"]]]
            case "subscribe":
                let first = script.lock.withLock { script.subscribes += 1; return script.subscribes == 1 }
                return [["id": id, "ok": true, "version": 1, "result": ["mode": first ? "snapshot" : "patch"]],
                        first ? ["push": "snapshot", "version": 1, "state": LiveNewsTests.view]
                              : ["push": "patch", "from": 1, "to": 1, "ops": []]]
            case "discover_secrets":
                let first = script.lock.withLock { script.discovers += 1; return script.discovers == 1 }
                return first ? [FakeServer.hangUp] : [["id": id, "ok": true, "version": 1, "result": ["found": 0]]]
            default:
                return [["id": id, "ok": true, "version": 1, "result": [:]]]
            }
        }
    }

    @Test func theClientReportsEachNewReasonOnceAndKeepsTrying() throws {
        let fake = Self.fake(script: [Self.crowded, Self.busy, Self.crowded, Self.busy, Self.crowded])
        defer { fake.stop() }
        var options = ClientOptions()
        options.initialBackoff = 0.01
        options.maxBackoff = 0.05
        let client = try GameClient.connect(port: fake.port, options: options)
        defer { client.close() }
        let events = EventLog()
        client.onEvent { events.append($0) }
        _ = try client.claim(character: "mia", device: "phone")
        try client.subscribe()
        #expect(try client.request("discover_secrets").result["found"] == 0, "sent again once back in")
        #expect(events.waitFor { if case .reconnected = $0 { true } else { false } })
        let told = events.all.compactMap { event -> String? in
            if case .reconnectRefused(let reason) = event { reason } else { nil }
        }
        #expect(told == [Self.crowded, Self.busy], "each reason once")
    }

    @Test func bqPlaySaysWhyTheServerTurnedItAway() throws {
        let fake = Self.fake(script: [Self.crowded, Self.crowded])
        defer { fake.stop() }
        let mia = try BQProcess(["play", "--port", String(fake.port), "--character", "mia"], home: try makeTemporaryDirectory())
        #expect(mia.output.waitFor("Type help for commands."))
        mia.send("discover")
        #expect(mia.output.waitFor("Connection lost; reconnecting…"))
        #expect(mia.output.waitFor("The server turned the reconnect away: \(Self.crowded). Still trying…"))
        #expect(mia.output.waitFor("Reconnected."))
        #expect(mia.output.text.components(separatedBy: "turned the reconnect away").count == 2, "told once: \(mia.output.text)")
        #expect(mia.finish() == 0)
    }
}

/// A goodbye from a server that stops while a reconnect is being set up ends no connection the
/// organizer had: a later real loss must still be told.
@Suite struct ConnectionNoticeTests {
    @Test func aLossAfterAStoppingServersGoodbyeDuringAReconnectIsStillTold() throws {
        final class Script: @unchecked Sendable {
            let lock = NSLock()
            var signIns = 0
            var reads = 0
        }
        let script = Script()
        let fake = FakeServer(hello: ["push": "hello", "protocol": 1, "server": "fake", "game": "main", "version": 1]) { request in
            let id = request["id"] ?? .null
            switch request["op"]?.stringValue {
            case "admin":
                let signIn = script.lock.withLock { script.signIns += 1; return script.signIns }
                let ok: JSONValue = ["id": id, "ok": true, "version": 1, "result": ["role": "admin"]]
                switch signIn {
                case 2: return [["push": "bye", "reason": "server_shutdown"], FakeServer.hangUp]  // stopping
                case 3: return [ok, FakeServer.hangUp]  // back, then lost at once
                default: return [ok]
                }
            case "state":
                // The organizer's first command finds the connection gone.
                let first = script.lock.withLock { script.reads += 1; return script.reads == 1 }
                return first ? [FakeServer.hangUp]
                    : [["id": id, "ok": true, "version": 1, "result": ["state": LiveNewsTests.view]]]
            default:
                return [["id": id, "ok": true, "version": 1, "result": [:]]]
            }
        }
        defer { fake.stop() }
        let console = try BQProcess(["admin", "console", "--port", String(fake.port), "--key", "k"])
        #expect(console.output.waitFor("Signed in as admin."))
        console.send("show c01")
        #expect(console.output.waitFor("Connection lost; reconnecting…"))
        #expect(console.output.waitFor("The server is stopping (a restart?)"))
        // Back on the third connection, which is lost at once, then back on the fourth.
        #expect(console.output.waitFor("Reconnected."))
        #expect(console.output.waitFor("Connection lost; reconnecting…"), "the loss after the goodbye: \(console.output.text)")
        #expect(console.output.waitFor("Reconnected."))
        console.closeInput()
        _ = console.waitForExit()
    }
}

/// A connection lost in the moment between the subscribe and the home screen is told, like any
/// other loss, and so is what changed while it was away.
@Suite struct EarlyLossTests {
    @Test func aLossRightAfterTheSubscribeIsToldAndTheNewsItMissedFollows() throws {
        final class Script: @unchecked Sendable {
            let lock = NSLock()
            var subscribes = 0
        }
        let script = Script()
        let fake = FakeServer(hello: ["push": "hello", "protocol": 1, "server": "fake", "game": "main", "version": 1]) { request in
            let id = request["id"] ?? .null
            switch request["op"]?.stringValue {
            case "claim", "auth":
                return [["id": id, "ok": true, "version": 1, "result": ["token": "t", "character": "mia", "role": "birthday"]]]
            case "subscribe":
                let first = script.lock.withLock { script.subscribes += 1; return script.subscribes == 1 }
                if first {
                    return [["id": id, "ok": true, "version": 1, "result": ["mode": "snapshot"]],
                            ["push": "snapshot", "version": 1, "state": LiveNewsTests.view], FakeServer.hangUp]
                }
                // The resume: the organizer gave ten points while the connection was down.
                return [["id": id, "ok": true, "version": 2, "result": ["mode": "patch"]],
                        ["push": "patch", "from": 1, "to": 2, "ops": [
                            ["op": "replace", "path": "/game/points", "value": 10],
                            ["op": "replace", "path": "/game/earned", "value": 10]]]]
            default:
                return [["id": id, "ok": true, "version": 2, "result": [:]]]
            }
        }
        defer { fake.stop() }
        let mia = try BQProcess(["play", "--port", String(fake.port), "--character", "mia"], home: try makeTemporaryDirectory())
        #expect(mia.output.waitFor("Connection lost; reconnecting…"), "\(mia.output.text)")
        #expect(mia.output.waitFor("Reconnected."))
        #expect(mia.output.waitFor("While the connection was down:"), "\(mia.output.text)")
        #expect(mia.output.waitFor("The organizer adjusted the points: +10 ✦"), "\(mia.output.text)")
        #expect(mia.output.text.contains("Type help for commands."))
        #expect(mia.finish() == 0)
    }
}
