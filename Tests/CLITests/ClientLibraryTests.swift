import Client
import Foundation
import JSON
import Testing

/// The `Client` library against a real server.
@Suite struct ClientLibraryTests {
    private func fastOptions() -> ClientOptions {
        var options = ClientOptions()
        options.initialBackoff = 0.02
        options.maxBackoff = 0.2
        options.requestTimeout = 30
        return options
    }

    /// A client of `fake` signed in as admin that pings after 0.2 s of quiet (so that a fake
    /// which pushes after each answer to a ping keeps the game busy) and gives up on a reply
    /// after `probeTimeout`.
    private func probingAdmin(of fake: FakeServer, probeTimeout: Double) throws -> GameClient {
        var options = fastOptions()
        options.silenceBeforeProbe = 0.2
        options.probeTimeout = probeTimeout
        let client = try GameClient.connect(port: fake.port, options: options)
        try client.signInAdmin(key: "k")
        return client
    }

    @Test func pipelinedRepliesMatchTheirRequests() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let client = try GameClient.connect(port: server.port, options: fastOptions())
        defer { client.close() }
        try client.claim(character: "mia", device: "dev-pipeline")
        let view = try client.subscribe()
        #expect(view["me"]?["character"] == "mia")
        let first = client.send("complete_challenge", ["challenge": "c02", "proof": ["kind": "done"]])
        let second = client.send("whoami")
        let third = client.send("complete_challenge", ["challenge": "c06", "proof": ["kind": "text", "text": "30!"]])
        // Waited for out of order: each reply still reaches its own request.
        #expect(try third.wait().result["points"] == 70)
        #expect(try second.wait().result["character"] == "mia")
        #expect(try first.wait().result["points"] == 35)
        #expect(first.idem != nil && first.idem != third.idem)

        let refused = #expect(throws: ClientError.self) {
            try client.request("unlock_reward", ["reward": "r04"])
        }
        #expect(refused?.refusal?.code == "insufficient_points")
        #expect(refused?.refusal?.message.contains("Not enough points") == true)
        #expect(refused?.refusal?.field == nil)
        let badField = #expect(throws: ClientError.self) {
            try client.request("unlock_reward", ["reward": ""])
        }
        #expect(badField?.refusal?.code == "bad_request" && badField?.refusal?.field == "reward", "\(String(describing: badField))")
    }

    /// A request is answered to every wait on it: one that gave up first and waits again gets
    /// the reply that came late, and a wait after that gets the same reply.
    @Test func aRequestWaitedForAgainGetsItsReply() throws {
        let release = DispatchSemaphore(value: 0)
        let fake = FakeServer { request in
            // The fake's loop is held here: the reply cannot come before the first wait gives up.
            if request["op"] == "whoami" { _ = release.wait(timeout: .now() + 10) }
            return [["id": request["id"] ?? .null, "ok": true, "version": 1, "result": ["character": "mia", "role": "birthday"]]]
        }
        defer { fake.stop() }
        let client = try GameClient.connect(port: fake.port, options: fastOptions())
        defer { client.close() }
        let request = client.send("whoami")
        let gaveUp = #expect(throws: ClientError.self) { try request.wait(timeout: 0.05) }
        #expect(gaveUp.map { if case .timedOut = $0 { true } else { false } } == true, "\(String(describing: gaveUp))")
        release.signal()
        #expect(try request.wait(timeout: 10).result["character"] == "mia")
        #expect(try request.wait(timeout: 0).result["character"] == "mia")
        #expect(client.isConnected)
    }

    /// A client nobody holds any more closes itself, as `close()` would: its reader thread no
    /// longer keeps it, its connection and its reconnects, for the life of the process.
    @Test func aClientLetGoOfClosesItsConnection() throws {
        let fake = FakeServer { request in
            [["id": request["id"] ?? .null, "ok": true, "version": 1, "result": ["character": "mia", "role": "birthday"]]]
        }
        defer { fake.stop() }
        do {
            let client = try GameClient.connect(port: fake.port, options: fastOptions())
            #expect(try client.request("whoami").result["character"] == "mia")
        }
        #expect(fake.closings.wait(timeout: .now() + 20) == .success, "the connection of a client let go of is still open")
    }

    /// The last reference may go inside one of the client's observers, on a thread holding what
    /// closing waits for (a sent ping's observer runs under the write lock): the observer
    /// returns, and the client still closes.
    @Test func aClientLetGoOfInsideAnObserverStillCloses() throws {
        let fake = FakeServer { request in [["id": request["id"] ?? .null, "ok": true, "version": 1, "result": [:]]] }
        defer { fake.stop() }
        var options = fastOptions()
        options.silenceBeforeProbe = 0.2
        let holder = ClientHolder(try GameClient.connect(port: fake.port, options: options))
        let returned = DispatchSemaphore(value: 0)
        holder.client?.onLine { line, outgoing in
            guard outgoing, line.contains(#""ping""#), holder.client != nil else { return }
            do {
                let last = holder.take()
                _ = last  // the only reference left, let go of here
            }
            returned.signal()
        }
        #expect(returned.wait(timeout: .now() + 20) == .success, "the observer never returned")
        #expect(fake.closings.wait(timeout: .now() + 20) == .success, "the client let go of inside its observer is still open")
    }

    /// A request still awaited holds its client: letting go of the client right after sending
    /// does not cost the reply.
    @Test func aRequestStillAwaitedKeepsItsClientOpen() throws {
        let release = DispatchSemaphore(value: 0)
        let fake = FakeServer { request in
            // Held until the client is let go of, so that the reply comes after.
            if request["op"] == "whoami" { _ = release.wait(timeout: .now() + 10) }
            return [["id": request["id"] ?? .null, "ok": true, "version": 1, "result": ["character": "mia", "role": "birthday"]]]
        }
        defer { fake.stop() }
        let pending = try GameClient.connect(port: fake.port, options: fastOptions()).send("whoami")
        release.signal()
        #expect(try pending.wait(timeout: 10).result["character"] == "mia")
    }

    /// A server that stopped reading leaves a large request's send blocked, holding the client's
    /// write lock; closing the client must still end (the player's `quit`), not wait on it.
    @Test func closeEndsWhileASendIsBlockedOnAServerThatStoppedReading() throws {
        let release = DispatchSemaphore(value: 0)
        let fake = FakeServer { request in
            // The fake's loop stops here, and with it its reading.
            if request["op"] == "whoami" { _ = release.wait(timeout: .now() + 60) }
            return []
        }
        defer {
            release.signal()
            fake.stop()
        }
        let client = try GameClient.connect(port: fake.port, options: fastOptions())
        _ = client.send("whoami")
        let sending = DispatchSemaphore(value: 0)
        client.onLine { line, outgoing in
            if outgoing, line.count > 1_000_000 { sending.signal() }
        }
        // Far more than the kernel buffers on both ends take.
        let large = String(repeating: "x", count: 64 << 20)
        Thread.detachNewThread { _ = client.send("ping", ["padding": .string(large)]) }
        #expect(sending.wait(timeout: .now() + 30) == .success, "the large request was never sent")
        let closed = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            client.close()
            closed.signal()
        }
        #expect(closed.wait(timeout: .now() + 30) == .success, "close() waited on the blocked send")
    }

    /// Closing a client whose reconnect waits on a server that took the connection but does not
    /// answer its handshake ends that connection too, at once, not when the wait runs out.
    @Test func closingDuringAReconnectsHandshakeEndsItsConnection() throws {
        let secondHandshake = DispatchSemaphore(value: 0)
        // The first connection is answered and then dropped; the second never answers its ping.
        let fake = FakeServer(answersPing: { connection, _ in
            if connection == 2 { secondHandshake.signal() }
            return connection == 1
        }) { _ in [FakeServer.hangUp] }
        defer { fake.stop() }
        var options = fastOptions()
        options.requestTimeout = 120
        let client = try GameClient.connect(port: fake.port, options: options)
        _ = client.send("whoami")
        #expect(secondHandshake.wait(timeout: .now() + 30) == .success, "no reconnect")
        client.close()
        #expect(fake.closings.wait(timeout: .now() + 30) == .success, "the first connection never closed")
        #expect(fake.closings.wait(timeout: .now() + 30) == .success, "the reconnect's connection is still open")
    }

    /// A connection that went dead without a word (the server restarted while this machine
    /// slept, a network dropped it) is found out by a ping after a silence, and replaced.
    @Test func aSilentConnectionIsProbedAndReplaced() throws {
        // Each connection answers the handshake's ping, then nothing more: it has gone dead.
        let fake = FakeServer(answersPing: { _, ping in ping == 1 }) { request in
            let id = request["id"] ?? .null
            switch request["op"]?.stringValue {
            case "claim", "auth":
                return [["id": id, "ok": true, "version": 1, "result": ["token": "t", "character": "mia", "role": "birthday"]]]
            case "subscribe":
                return [["id": id, "ok": true, "version": 1, "result": ["mode": "snapshot"]],
                        ["push": "snapshot", "version": 1, "state": LiveNewsTests.view]]
            default:
                return [["id": id, "ok": false, "error": ["code": "unknown_op", "message": "fake"]]]
            }
        }
        defer { fake.stop() }
        var options = fastOptions()
        options.silenceBeforeProbe = 0.3
        options.probeTimeout = 0.3
        let client = try GameClient.connect(port: fake.port, options: options)
        defer { client.close() }
        let events = EventLog()
        client.onEvent { events.append($0) }
        try client.claim(character: "mia", device: "dev-silent")
        _ = try client.subscribe()
        #expect(events.waitFor { event in
            if case .disconnected(let reason) = event { return reason.contains("no answer from the server") }
            return false
        }, "the silent connection was never given up: \(events.all)")
        #expect(events.waitFor { if case .reconnected = $0 { true } else { false } }, "no new connection replaced it: \(events.all)")
    }

    /// A connection that fails one way: the server's pushes keep coming (here, one after each
    /// answer to the client's pings), but what the client sends no longer reaches it. The reply
    /// overdue while pushes come, not a silence, gives it away; the new connection re-sends the
    /// change under its key.
    @Test func aConnectionThatStillHearsTheServerButIsNotHeardIsReplaced() throws {
        let sends = CallCounter()
        let fake = FakeServer(afterPong: { connection in
            connection == 1 ? [["push": "news", "text": "the game goes on"]] : []
        }) { request in
            let id = request["id"] ?? .null
            switch request["op"]?.stringValue {
            case "admin":
                return [["id": id, "ok": true, "version": 1, "result": ["role": "admin"]]]
            case "set_day":
                // The first sending is lost on its way; the second is heard and answered.
                guard sends.next() > 1 else { return [] }
                return [["id": id, "ok": true, "version": 2, "result": [:]]]
            default:
                return [["id": id, "ok": false, "error": ["code": "unknown_op", "message": "fake"]]]
            }
        }
        defer { fake.stop() }
        // Each ping is answered, with a push: the connection is never silent.
        let client = try probingAdmin(of: fake, probeTimeout: 1)
        defer { client.close() }
        let reply = try client.request("set_day", ["day": 2], timeout: 10)
        #expect(reply.version == 2)
        #expect(sends.value == 2)
        #expect(client.reconnectCount == 1)
    }

    /// A network slower than the first wait for the server's hello (a congested hotspot) still
    /// gets through: each try waits twice as long as the one before, up to the request timeout.
    @Test func aHelloSlowerThanTheFirstWaitStillConnects() throws {
        let fake = FakeServer(lineDelayMilliseconds: 700) { request in
            [["id": request["id"] ?? .null, "ok": true, "version": 1, "result": ["role": "admin"]]]
        }
        defer { fake.stop() }
        var options = fastOptions()
        options.connectTimeoutMilliseconds = 200
        options.requestTimeout = 10
        let client = try GameClient.connect(port: fake.port, options: options)
        defer { client.close() }
        #expect(try client.request("admin", ["key": "k"]).result["role"] == "admin")
    }

    /// A reconnect's tries stop doubling (a network back while a long try waits on a connection
    /// lost in the outage would be noticed only once that try gave up), but not below what this
    /// network has been seen to need (twice the slowest handshake that succeeded), and not below
    /// a quarter of the time offline (a network that became slower still gets through).
    @Test func aReconnectsTriesStopDoublingAtTwiceTheSlowestHandshake() {
        var options = ClientOptions()
        options.connectTimeoutMilliseconds = 3_000
        options.requestTimeout = 30
        #expect((0..<6).map { options.connectWait(attempt: $0) } == [3_000, 6_000, 12_000, 24_000, 30_000, 30_000],
                "a first connect doubles up to the request timeout")
        #expect((0..<6).map { options.connectWait(attempt: $0, reconnectingAfter: 40) } == [3_000, 6_000, 6_000, 6_000, 6_000, 6_000])
        #expect((0..<6).map { options.connectWait(attempt: $0, reconnectingAfter: 5_000) }
                == [3_000, 6_000, 10_000, 10_000, 10_000, 10_000])
        #expect(options.connectWait(attempt: 9, reconnectingAfter: 100_000) == 30_000, "never past the request timeout")
        // A network that became slower than every try: the tries grow with the time offline.
        #expect([0, 20_000, 40_000, 80_000, 200_000].map { options.connectWait(attempt: 5, reconnectingAfter: 40, offline: $0) }
                == [6_000, 6_000, 10_000, 20_000, 30_000])
    }

    /// A change whose connection is lost while it waits, and stays lost, ends as unconfirmed
    /// once it has been offline for the wait's `offline` seconds (a person is told it is kept,
    /// and may type again), not after the whole timeout, an hour here. Offline from the hang-up,
    /// or from the server's goodbye (here with no hang-up after it).
    @Test(arguments: [false, true]) func aWaitGivesUpOnceOfflineForItsBudget(saysGoodbye: Bool) throws {
        let fake = FakeServer(afterHello: { connection in connection > 1 ? [FakeServer.hangUp] : [] }) { request in
            let id = request["id"] ?? .null
            switch request["op"]?.stringValue {
            case "admin": return [["id": id, "ok": true, "version": 1, "result": ["role": "admin"]]]
            // Lost with its connection; every reconnect is hung up on before it is signed in.
            default: return saysGoodbye ? [["push": "bye", "reason": "server_shutdown"]] : [FakeServer.hangUp]
            }
        }
        defer { fake.stop() }
        let client = try GameClient.connect(port: fake.port, options: fastOptions())
        defer { client.close() }
        try client.signInAdmin(key: "k")
        let change = client.send("set_day", ["day": 2])
        final class Outcome: @unchecked Sendable {
            /// Written before `ended` is signalled, read after.
            var error: ClientError?
            let ended = DispatchSemaphore(value: 0)
        }
        let outcome = Outcome()
        Thread {
            do { _ = try change.wait(timeout: 3_600, offline: 0.3) } catch let error as ClientError { outcome.error = error } catch {}
            outcome.ended.signal()
        }.start()
        // Bounded only so that a wait that keeps to its hour fails here, not the whole run.
        guard outcome.ended.wait(timeout: .now() + 30) == .success else {
            Issue.record("still waiting, offline for 30 s")
            client.close()
            outcome.ended.wait()
            return
        }
        guard case .unconfirmed(op: "set_day") = outcome.error else {
            Issue.record("\(String(describing: outcome.error))")
            return
        }
        #expect(client.keptMutations.map(\.op) == ["set_day"], "kept, to be sent again once the connection is back")
    }

    /// On a network whose hello comes later than twice the first wait, a reconnect still gets
    /// through: slow from the first connect (`slowFrom` 1), its tries are as long as that connect
    /// showed them to need; slow only since (2), they grow with the time offline.
    @Test(arguments: [1, 2]) func aSlowNetworkStillReconnects(slowFrom: Int) throws {
        let sends = CallCounter()
        let fake = FakeServer(lineDelayMilliseconds: 700, slowFrom: slowFrom) { request in
            let id = request["id"] ?? .null
            switch request["op"]?.stringValue {
            case "admin": return [["id": id, "ok": true, "version": 1, "result": ["role": "admin"]]]
            case "set_day":
                // The first sending ends its connection; the reconnect's is answered.
                guard sends.next() > 1 else { return [FakeServer.hangUp] }
                return [["id": id, "ok": true, "version": 2, "result": [:]]]
            default: return [["id": id, "ok": false, "error": ["code": "unknown_op", "message": "fake"]]]
            }
        }
        defer { fake.stop() }
        var options = fastOptions()
        options.connectTimeoutMilliseconds = 200
        let client = try GameClient.connect(port: fake.port, options: options)
        defer { client.close() }
        try client.signInAdmin(key: "k")
        let reply = try client.request("set_day", ["day": 2], timeout: 20)
        #expect(reply.version == 2)
        #expect(client.reconnectCount == 1)
    }

    /// A slow link is not a dead one: with replies taking longer than the probe timeout and the
    /// game's pushes flowing, the client measures the round trip and waits for the reply
    /// rather than replacing the connection over and over.
    @Test func aLinkSlowerThanTheProbeTimeoutKeepsItsConnection() throws {
        let fake = FakeServer(afterPong: { _ in [["push": "news", "text": "the game goes on"]] },
                              lineDelayMilliseconds: 1_500) { request in
            let id = request["id"] ?? .null
            return request["op"] == "admin" ? [["id": id, "ok": true, "version": 1, "result": ["role": "admin"]]]
                                            : [["id": id, "ok": true, "version": 2, "result": [:]]]
        }
        defer { fake.stop() }
        let client = try probingAdmin(of: fake, probeTimeout: 1)
        defer { client.close() }
        let reply = try client.request("set_day", ["day": 2], timeout: 10)
        #expect(reply.version == 2)
        #expect(client.reconnectCount == 0)
    }

    @Test func theMirrorFollowsOtherPlayersChanges() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let mia = try GameClient.connect(port: server.port, options: fastOptions())
        defer { mia.close() }
        try mia.claim(character: "mia", device: "dev-mia")
        try mia.subscribe()
        let admin = try GameClient.connect(port: server.port, options: fastOptions())
        defer { admin.close() }
        try admin.signInAdmin(key: server.adminKey)
        let reply = try admin.request("adjust_points", ["delta": 80, "reason": "welcome"])
        #expect(mia.waitForMirror(atLeast: reply.version ?? Int.max))
        #expect(mia.view?["game"]?["points"] == 80)
        let fresh = try mia.fetchState()
        #expect(fresh.version == mia.version)
        #expect(fresh.view == mia.view)
    }

    @Test func aRetriedMutationWithItsKeyIsAppliedOnce() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let client = try GameClient.connect(port: server.port, options: fastOptions())
        defer { client.close() }
        try client.claim(character: "mia", device: "dev-idem")
        let args: [String: JSONValue] = ["challenge": "c02", "proof": ["kind": "done"], "idem": "retry-key-1"]
        let first = try client.request("complete_challenge", args)
        let again = try client.request("complete_challenge", args)
        #expect(!first.replayed)
        #expect(again.replayed)
        #expect(again.version == first.version)
        #expect(try client.fetchState().view["game"]?["points"] == 35)
    }

    /// SIGTERM lets the server choose: answer the frozen request before shutting down, or not read
    /// it at all. `SIGKILL` forces the second path: the request was certainly sent and never applied.
    @Test(arguments: [SIGTERM, SIGKILL])
    func aMutationInFlightAcrossAServerRestartIsAppliedExactlyOnce(signal: Int32) throws {
        let first = try ServerProcess()
        var restarted: ServerProcess?
        defer {
            first.stop()
            restarted?.stop()
        }
        let client = try GameClient.connect(port: first.port, options: fastOptions())
        defer { client.close() }
        try client.claim(character: "mia", device: "dev-restart")
        try client.subscribe()
        let events = EventLog()
        client.onEvent { events.append($0) }

        // Frozen, the server cannot answer: the request is surely in flight when the restart begins.
        kill(first.pid, SIGSTOP)
        let inFlight = client.send("complete_challenge", ["challenge": "c15", "proof": ["kind": "done"], "option": "b"])
        kill(first.pid, signal)
        kill(first.pid, SIGCONT)
        first.stop()
        restarted = try ServerProcess(dataDirectory: first.dataDirectory, port: first.port)

        let reply = try inFlight.wait()
        #expect(reply.result["points"] == 100)
        #expect(events.waitFor { if case .reconnected = $0 { true } else { false } })
        #expect(client.reconnectCount >= 1)

        // The mirror, resumed with `since`, equals a fresh read.
        let fresh = try client.fetchState()
        #expect(client.waitForMirror(atLeast: fresh.version))
        #expect(client.version == fresh.version)
        #expect(client.view == fresh.view)
        // Applied once: one completion, its points counted once.
        #expect(fresh.view["game"]?["points"] == 100)
        #expect(fresh.view["game"]?["earned"] == 100)
        let completions = (fresh.view["timeline"]?.arrayValue ?? []).filter { $0["ref"] == "c15" }
        #expect(completions.count == 1)

        // And the connection is fully usable again, still signed in as mia.
        let next = try client.request("complete_challenge", ["challenge": "c02", "proof": ["kind": "done"]])
        #expect(next.result["points"] == 135)
        #expect(client.waitForMirror(atLeast: next.version ?? Int.max))
        #expect(client.view?["game"]?["points"] == 135)
    }

    @Test func aMutationSentWhileTheServerIsDownIsSentAfterTheReconnect() throws {
        let first = try ServerProcess()
        var restarted: ServerProcess?
        defer {
            first.stop()
            restarted?.stop()
        }
        let client = try GameClient.connect(port: first.port, options: fastOptions())
        defer { client.close() }
        try client.signInAdmin(key: first.adminKey)
        try client.subscribe()
        first.stop()
        let queued = client.send("adjust_points", ["delta": 25, "reason": "while down"])
        restarted = try ServerProcess(dataDirectory: first.dataDirectory, port: first.port)
        let reply = try queued.wait()
        #expect(reply.result["points"] == 25)
        let fresh = try client.fetchState()
        #expect(client.waitForMirror(atLeast: fresh.version))
        #expect(client.view == fresh.view)
        #expect(fresh.view["game"]?["points"] == 25)
    }

    /// The server refuses a line it cannot read with `"id": null`; the client must still give
    /// the refusal to the request that sent it, at once, and keep its replies matched after it.
    @Test func aLineTooLongIsRefusedAtOnceAndLaterRepliesStillMatch() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let client = try GameClient.connect(port: server.port, options: fastOptions())
        defer { client.close() }
        try client.signInAdmin(key: server.adminKey)
        let huge = String(repeating: "x", count: 70_000)
        do {
            _ = try client.request("adjust_points", ["delta": 5, "reason": .string(huge)], timeout: 20)
            Issue.record("a line over the limit was accepted")
        } catch {
            #expect(error.refusal?.code == "line_too_long", "\(error)")
        }
        let after = try client.request("adjust_points", ["delta": 3, "reason": "normal"])
        #expect(after.result["points"] == 3, "the long line changed nothing and the next reply is its own")
    }

    /// A server with an idle timeout announces it in `hello`; a client that has nothing to send
    /// pings before it runs out, so a person watching the game is never dropped for it.
    @Test func anIdleClientKeepsItsConnectionAlive() throws {
        let server = try ServerProcess(environment: ["BQ_IDLE_TIMEOUT_SECONDS": "2"])
        defer { server.stop() }
        let client = try GameClient.connect(port: server.port, options: fastOptions())
        defer { client.close() }
        let events = EventLog()
        client.onEvent { events.append($0) }
        let pings = PingCounter()
        client.onLine { line, outgoing in
            guard let id = (try? JSONParser.parse(Array(line.utf8)))?["id"]?.intValue else { return }
            if outgoing && line.contains(#""op":"ping""#) { pings.add(id) } else if !outgoing { pings.received(id) }
        }
        try client.signInAdmin(key: server.adminKey)
        try client.subscribe()
        // Two pings at half the timeout each (a second apart, give or take a read's 250 ms): past
        // the two seconds an idle connection gets, with a second to spare before each deadline.
        #expect(pings.waitFor(3))
        #expect(!events.waitFor(timeout: 0) { if case .disconnected = $0 { return true } else { return false } },
                "the connection was dropped")
        #expect(pings.answersShown.isEmpty, "the keep-alive's replies are not passed to the line observer")
        #expect(try client.request("ping").result == [:], "and it still answers")
    }

    /// A wait that ends before the server is back must not read as a failure, or the person
    /// would send the change again: it is `unconfirmed`, and its answer comes as an event.
    @Test func aMutationThatTimesOutIsUnconfirmedAndItsAnswerComesLater() throws {
        let first = try ServerProcess()
        var restarted: ServerProcess?
        defer {
            first.stop()
            restarted?.stop()
        }
        let client = try GameClient.connect(port: first.port, options: fastOptions())
        defer { client.close() }
        let events = EventLog()
        client.onEvent { events.append($0) }
        try client.signInAdmin(key: first.adminKey)
        first.stop()
        do {
            _ = try client.send("adjust_points", ["delta": 25, "reason": "while down"]).wait(timeout: 0.2)
            Issue.record("a reply came from a stopped server")
        } catch {
            guard case .unconfirmed(let op) = error else {
                Issue.record("expected unconfirmed, got \(error)")
                return
            }
            #expect(op == "adjust_points")
            #expect(error.description.contains("Do not repeat it"))
        }
        restarted = try ServerProcess(dataDirectory: first.dataDirectory, port: first.port)
        #expect(events.waitFor { event in
            if case .lateReply("adjust_points", _, .success(let reply)) = event { return reply.result["points"] == 25 }
            return false
        })
        #expect(try client.fetchState().view["game"]?["points"] == 25, "applied once")
    }
}

/// Events collected from the reader thread.
final class EventLog: @unchecked Sendable {
    /// Guards `events`; signalled on each new one.
    private let condition = NSCondition()
    private var events: [ClientEvent] = []

    func append(_ event: ClientEvent) {
        condition.lock()
        events.append(event)
        condition.broadcast()
        condition.unlock()
    }

    /// Every event so far, in order.
    var all: [ClientEvent] {
        condition.lock()
        defer { condition.unlock() }
        return events
    }

    /// Waits until an event matching `predicate` has arrived; false at the deadline.
    func waitFor(timeout: Double = 20, _ predicate: (ClientEvent) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !events.contains(where: predicate) {
            if !condition.wait(until: deadline) { return events.contains(where: predicate) }
        }
        return true
    }

    /// A first connection the server took and dropped before the session began (a network that
    /// blinked at the start) is tried again within the wait for a reply, as a later one is.
    @Test func aFirstConnectionDroppedBeforeItsSessionIsTriedAgain() throws {
        let hello: JSONValue = ["push": "hello", "protocol": 1, "server": "fake", "game": "main", "version": 7]
        let fake = FakeServer(hello: hello, afterHello: { connection in connection <= 2 ? [FakeServer.hangUp] : [] }) { request in
            [["id": request["id"] ?? .null, "ok": true, "version": 7, "result": [:]]]
        }
        defer { fake.stop() }
        let client = try GameClient.connect(port: fake.port)
        defer { client.close() }
        #expect(try client.request("whoami").version == 7)
    }
}

@Suite struct ClientGapTests {
    /// The fake sends a patch that skips versions after the first snapshot: the client must not
    /// apply it, must resubscribe, and must follow the fresh snapshot and the patches after it.
    @Test func aPatchThatDoesNotChainMakesTheClientResubscribe() throws {
        let subscribes = CallCounter()
        let fake = FakeServer(hello: ["push": "hello", "protocol": 1, "server": "fake", "game": "main", "version": 1]) { request in
            let id = request["id"] ?? .null
            guard request["op"] == "subscribe" else {
                return [["id": id, "ok": false, "error": ["code": "unknown_op", "message": "fake"]]]
            }
            if subscribes.next() == 1 {
                return [["id": id, "ok": true, "version": 1, "result": ["mode": "snapshot"]],
                        ["push": "snapshot", "version": 1, "state": ["game": ["points": 0]]],
                        ["push": "patch", "from": 3, "to": 4,
                         "ops": [["op": "replace", "path": "/game/points", "value": 999]]]]
            }
            return [["id": id, "ok": true, "version": 4, "result": ["mode": "snapshot"]],
                    ["push": "snapshot", "version": 4, "state": ["game": ["points": 40]]],
                    ["push": "patch", "from": 4, "to": 5,
                     "ops": [["op": "replace", "path": "/game/points", "value": 50]]]]
        }
        defer { fake.stop() }
        let (client, events) = try fake.subscribedClient()
        defer { client.close() }
        #expect(events.waitFor { if case .gap(mirror: 1, from: 3) = $0 { true } else { false } })
        #expect(client.waitForMirror(atLeast: 5, timeout: 10))
        #expect(client.view == ["game": ["points": 50]])
        #expect(client.version == 5)
    }
}

/// Counts the pings a client sends, from its line observer (another thread).
final class PingCounter: @unchecked Sendable {
    private let condition = NSCondition()
    private var count = 0
    private var sent: Set<Int> = []
    private var shown: Set<Int> = []

    func add(_ id: Int) {
        condition.lock()
        count += 1
        sent.insert(id)
        condition.broadcast()
        condition.unlock()
    }

    func received(_ id: Int) {
        condition.lock()
        if sent.contains(id) { shown.insert(id) }
        condition.unlock()
    }

    var answersShown: Set<Int> {
        condition.lock()
        defer { condition.unlock() }
        return shown
    }

    func waitFor(_ wanted: Int, timeout: Double = 20) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while count < wanted {
            if !condition.wait(until: deadline) { return count >= wanted }
        }
        return true
    }
}

/// Holds a client so that a test can let go of it from another thread.
private final class ClientHolder: @unchecked Sendable {
    private let lock = NSLock()
    /// Guarded by `lock`.
    private var held: GameClient?

    init(_ client: GameClient) { held = client }

    var client: GameClient? { lock.withLock { held } }

    /// The client, no longer held here.
    func take() -> GameClient? {
        lock.withLock {
            defer { held = nil }
            return held
        }
    }
}
