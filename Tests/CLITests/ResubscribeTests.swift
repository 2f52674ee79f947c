import Client
import Foundation
import JSON
import Testing

/// After a gap the client asks for a snapshot; if the server refuses that request for a
/// moment, the client must ask again rather than leave the mirror frozen.
@Suite struct ResubscribeTests {
    @Test func aRefusedResubscribeIsAskedAgainUntilASnapshotArrives() throws {
        let counter = CallCounter()
        let fake = FakeServer(hello: ["push": "hello", "protocol": 1, "server": "fake", "game": "main", "version": 1]) { request in
            let id = request["id"] ?? .null
            switch counter.next() {
            case 1:  // the first subscribe, then a patch that does not chain: a gap
                return [["id": id, "ok": true, "version": 1, "result": ["mode": "snapshot"]],
                        ["push": "snapshot", "version": 1, "state": ["game": ["points": 0]]],
                        ["push": "patch", "from": 3, "to": 4, "ops": []]]
            case 2:  // the cure is refused once
                return [["id": id, "ok": false, "error": ["code": "rate_limited", "message": "slow down"]]]
            default:
                return [["id": id, "ok": true, "version": 5, "result": ["mode": "snapshot"]],
                        ["push": "snapshot", "version": 5, "state": ["game": ["points": 50]]]]
            }
        }
        defer { fake.stop() }
        var options = ClientOptions()
        options.reconnect = false
        let client = try GameClient.connect(port: fake.port, options: options)
        defer { client.close() }
        try client.subscribe()
        #expect(client.waitForMirror(atLeast: 5, timeout: 10), "the mirror stayed at \(client.version)")
        #expect(client.version == 5)
        #expect(client.view?["game"]?["points"] == 50)
    }

    /// After a reconnect the client resumes from its version; if the server refuses that for a
    /// while, a snapshot of the present will do. Without either the screen would sit on an old
    /// game unannounced.
    @Test func aRefusedResumeAfterAReconnectFallsBackToASnapshot() throws {
        final class Script: @unchecked Sendable {
            let lock = NSLock()
            var subscribes: [JSONValue] = []
            func record(_ request: JSONValue) -> Int { lock.lock(); defer { lock.unlock() }; subscribes.append(request); return subscribes.count }
        }
        let script = Script()
        let fake = FakeServer(hello: ["push": "hello", "protocol": 1, "server": "fake", "game": "main", "version": 1]) { request in
            let id = request["id"] ?? .null
            guard request["op"] == "subscribe" else { return [["id": id, "ok": true, "version": 1, "result": [:]]] }
            switch script.record(request) {
            case 1:  // subscribed, then the connection drops
                return [["id": id, "ok": true, "version": 1, "result": ["mode": "snapshot"]],
                        ["push": "snapshot", "version": 1, "state": ["game": ["points": 0]]], FakeServer.hangUp]
            case 2:  // the resume from version 1 is refused
                return [["id": id, "ok": false, "error": ["code": "rate_limited", "message": "not now"]]]
            default:
                return [["id": id, "ok": true, "version": 5, "result": ["mode": "snapshot"]],
                        ["push": "snapshot", "version": 5, "state": ["game": ["points": 50]]]]
            }
        }
        defer { fake.stop() }
        var options = ClientOptions()
        options.initialBackoff = 0.05
        let client = try GameClient.connect(port: fake.port, options: options)
        defer { client.close() }
        try client.subscribe()
        #expect(client.waitForMirror(atLeast: 5, timeout: 10), "the mirror stayed at \(client.version)")
        #expect(client.view?["game"]?["points"] == 50)
        let asked = script.lock.withLock { script.subscribes }
        #expect(asked.count == 3 && asked[1]["since"] == 1 && asked[2]["since"] == nil, "\(asked.map { $0.serialized() })")
    }

    /// A token revoked while the client was away: its sign-in is refused (the session is lost),
    /// and so would be a resubscribe. The reconnect still completes, so the app can claim again.
    @Test func aReconnectWhoseSessionWasLostStillCompletes() throws {
        final class Script: @unchecked Sendable {
            let lock = NSLock()
            var requests: [JSONValue] = []
            func record(_ request: JSONValue) -> Int { lock.lock(); defer { lock.unlock() }; requests.append(request); return requests.count }
        }
        let script = Script()
        let fake = FakeServer(hello: ["push": "hello", "protocol": 1, "server": "fake", "game": "main", "version": 1]) { request in
            let id = request["id"] ?? .null
            switch (script.record(request), request["op"]?.stringValue) {
            case (1, _): return [["id": id, "ok": true, "version": 1, "result": ["character": "mia", "role": "birthday"]]]
            case (2, _):  // subscribed, then the connection drops
                return [["id": id, "ok": true, "version": 1, "result": ["mode": "snapshot"]],
                        ["push": "snapshot", "version": 1, "state": ["game": ["points": 0]]], FakeServer.hangUp]
            case (_, "auth"?): return [["id": id, "ok": false, "error": ["code": "unauthenticated", "message": "revoked"]]]
            case (_, "subscribe"?): return [["id": id, "ok": false, "error": ["code": "unauthenticated", "message": "Sign in first"]]]
            default: return [["id": id, "ok": true, "version": 1, "result": [:]]]
            }
        }
        defer { fake.stop() }
        var options = ClientOptions()
        options.initialBackoff = 0.05
        let client = try GameClient.connect(port: fake.port, options: options)
        defer { client.close() }
        let reconnected = DispatchSemaphore(value: 0)
        client.onEvent { event in
            if case .reconnected = event { reconnected.signal() }
        }
        _ = try client.request("auth", ["token": "t"])
        try client.subscribe()
        #expect(reconnected.wait(timeout: .now() + 10) == .success,
                "\(script.lock.withLock { script.requests.suffix(4).map { $0.serialized() } })")
    }

    /// A read whose wait timed out still owns its place among the replies: a refusal with
    /// `"id": null` in that place is its answer, not the answer of the mutation sent after it
    /// (which would tell the person a committed change was refused).
    @Test func aTimedOutReadKeepsItsPlaceForAnAnonymousRefusal() throws {
        let fake = FakeServer(hello: ["push": "hello", "protocol": 1, "server": "fake", "game": "main", "version": 1]) { request in
            switch request["op"]?.stringValue {
            case "timeline": return []  // answered only below, as if its line had been unreadable
            case "adjust_points":
                return [["id": .null, "ok": false, "error": ["code": "line_too_long", "message": "Line too long"]],
                        ["id": request["id"] ?? .null, "ok": true, "version": 2, "result": ["points": 5]]]
            default: return [["id": request["id"] ?? .null, "ok": true, "version": 1, "result": [:]]]
            }
        }
        defer { fake.stop() }
        var options = ClientOptions()
        options.reconnect = false
        let client = try GameClient.connect(port: fake.port, options: options)
        defer { client.close() }
        do {
            _ = try client.request("timeline", timeout: 0.2)
            Issue.record("the fake never answers timeline")
        } catch {
            guard case .timedOut = error else {
                Issue.record("expected a timeout, got \(error)")
                return
            }
        }
        let reply = try client.request("adjust_points", ["delta": 5, "reason": "after the timeout"])
        #expect(reply.result["points"] == 5)
    }
}

/// `bye` comes before the server closes a connection; one that says it and stays would hold the
/// client offline for good (it sends nothing after a goodbye, and waits for the close).
@Suite struct GoodbyeWithoutCloseTests {
    @Test func aServerThatSaysGoodbyeAndStaysIsLeftForANewConnection() throws {
        let subscribes = CallCounter()
        let fake = FakeServer { request in
            let id = request["id"] ?? .null
            guard request["op"] == "subscribe" else { return [["id": id, "ok": true, "version": 1, "result": [:]]] }
            if subscribes.next() == 1 {
                return [["id": id, "ok": true, "version": 1, "result": ["mode": "snapshot"]],
                        ["push": "snapshot", "version": 1, "state": ["game": ["points": 0]]],
                        ["push": "bye", "reason": "server_shutdown"]]
            }
            return [["id": id, "ok": true, "version": 5, "result": ["mode": "snapshot"]],
                    ["push": "snapshot", "version": 5, "state": ["game": ["points": 50]]]]
        }
        defer { fake.stop() }
        var options = ClientOptions()
        options.probeTimeout = 1
        let client = try GameClient.connect(port: fake.port, options: options)
        defer { client.close() }
        try client.subscribe()
        #expect(client.waitForMirror(atLeast: 5, timeout: 20), "still on the first connection, at version \(client.version)")
    }
}

/// A server whose patches do not fit (a faulty one: here every other one) is asked for a
/// snapshot after each gap: at once after the first, then ever more slowly, not dozens of
/// times a second; one patch that fits between gaps does not start that over.
@Suite struct RepeatedGapTests {
    @Test func gapsInARowAreAskedAboutEverMoreSlowly() throws {
        let subscribes = CallCounter()
        let fifth = DispatchSemaphore(value: 0)
        let fake = FakeServer { request in
            let id = request["id"] ?? .null
            guard request["op"] == "subscribe" else { return [["id": id, "ok": true, "version": 1, "result": [:]]] }
            if subscribes.next() == 5 { fifth.signal() }
            return [["id": id, "ok": true, "version": 1, "result": ["mode": "snapshot"]],
                    ["push": "snapshot", "version": 1, "state": ["game": ["points": 0]]],
                    ["push": "patch", "from": 1, "to": 2, "ops": []],
                    ["push": "patch", "from": 5, "to": 6, "ops": []]]
        }
        defer { fake.stop() }
        var options = ClientOptions()
        options.reconnect = false
        let client = try GameClient.connect(port: fake.port, options: options)
        defer { client.close() }
        let start = Date()
        try client.subscribe()
        #expect(fifth.wait(timeout: .now() + 20) == .success, "the client stopped asking: \(subscribes.value) subscribes")
        // The second at once, then after 0.25, 0.5 and 1 s: a slower machine only adds to it.
        let took = Date().timeIntervalSince(start)
        #expect(took >= 1.7, "five snapshots asked for in \(took) s")
    }
}

/// A server that drops every connection at the same request (a bug it hits each time the client
/// sends that request again) is reconnected to ever more slowly, not dozens of times a second:
/// the backoff goes on from one short-lived connection to the next.
@Suite struct ShortLivedConnectionTests {
    @Test func connectionsThatEndAtOnceAreRetriedEverMoreSlowly() throws {
        let connections = CallCounter()
        let sixth = DispatchSemaphore(value: 0)
        let fake = FakeServer(afterHello: { _ in
            if connections.next() == 6 { sixth.signal() }
            return []
        }) { request in
            request["op"] == "discover_secrets" ? [FakeServer.hangUp] : [["id": request["id"] ?? .null, "ok": true, "version": 1, "result": [:]]]
        }
        defer { fake.stop() }
        let client = try GameClient.connect(port: fake.port)
        defer { client.close() }
        let started = Date()
        // Held until the end, so that it is sent again on every connection.
        let request = client.send("discover_secrets")
        #expect(sixth.wait(timeout: .now() + 20) == .success, "\(connections.value) connections")
        // Pauses of 0.05, 0.1, 0.2, 0.4 and 0.8 s (each within a fifth) before the second to the
        // sixth: at least 1.24 s, which a slower machine only adds to.
        let took = Date().timeIntervalSince(started)
        #expect(took >= 1.2, "six connections in \(took) s")
        withExtendedLifetime(request) {}
    }
}
