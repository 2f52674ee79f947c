import Foundation
import JSON
import Testing

/// Regressions found in review: each pins a promise of PROTOCOL.md that an earlier
/// version of the server broke under a particular sequence of requests.
@Suite struct ProtocolPromiseTests {
    /// Reads lines up to `count` replies (pushes skipped) and returns their ids in order.
    private func replyIDs(_ client: TestClient, count: Int) throws -> [JSONValue] {
        var ids: [JSONValue] = []
        while ids.count < count {
            guard let message = try client.readMessage() else { throw HarnessError("EOF after \(ids.count) replies") }
            if message["push"] == nil { ids.append(message["id"] ?? .null) }
        }
        return ids
    }

    /// "`auth`: `unauthenticated`": a token that cannot be one (blank, or longer than any the
    /// server makes) is still a token that does not sign in, not a bad request.
    @Test func anyStringTokenThatSignsNothingInIsUnauthenticated() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        let client = try server.connect()
        for token in ["", "x", String(repeating: "a", count: 300)] {
            #expect(try client.refusal("auth", ["token": .string(token)]) == "unauthenticated", "\(token.count)")
        }
        #expect(try client.refusal("auth", ["token": 7]) == "bad_request", "not a string")
        #expect(try client.refusal("auth") == "bad_request", "no token")
        try server.stop()
    }

    @Test func aKeyedMutationThatChangedNothingReplaysInsteadOfCommittingLater() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        let admin = try server.connect()
        _ = try admin.signInAsAdmin()
        let first = try admin.ok("unclaim", ["character": "theo", "idem": "k-noop"])
        let player = try server.connect()
        _ = try player.ok("claim", ["character": "theo", "device": "theo-phone"])
        let version = try admin.currentVersion()

        let retry = try admin.ok("unclaim", ["character": "theo", "idem": "k-noop"])
        #expect(retry["replayed"] == true)
        #expect(retry["version"] == first["version"])
        #expect(try admin.currentVersion() == version, "the retry committed nothing")
        #expect(try admin.refusal("unclaim", ["character": "dani", "idem": "k-noop"]) == "idempotency_mismatch")
        try server.stop()
    }

    @Test func refusalsKeepTheirPlaceBehindAHeldRead() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        let admin = try server.connect()
        _ = try admin.signInAsAdmin()
        let lines = [#"{"id":1,"op":"set_day","day":2}"#, #"{"id":2,"op":"state"}"#, #"{"id":3,"op":"nope"}"#,
                     #"{"id":4}"#, "garbage", #"{"id":6,"op":"ping"}"#]
        try admin.sendRaw(Array((lines.joined(separator: "\n") + "\n").utf8))
        #expect(try replyIDs(admin, count: 6) == [1, 2, 3, 4, nil, 6])
        try server.stop()
    }

    @Test func badLinesAreCountedInTheOrderTheClientSeesThem() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        let admin = try server.connect()
        _ = try admin.signInAsAdmin()
        var lines = Array(repeating: "x", count: 19)
        lines.append(#"{"id":"m","op":"adjust_points","delta":5,"reason":"between bad lines"}"#)
        lines.append("x")
        try admin.sendRaw(Array((lines.joined(separator: "\n") + "\n").utf8))
        let ids = try replyIDs(admin, count: 21)
        #expect(ids[19] == "m", "the mutation's ok is sent, in its place")
        // Its ok reset the count: the connection is still usable.
        #expect(try admin.ok("ping")["ok"] == true)
        try server.stop()
    }

    @Test func aPeerThatHalfClosesStillGetsEveryReply() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        let client = try server.connect()
        let lines = [#"{"id":1,"op":"admin","key":"\#(ServerHarness.adminKey)"}"#,
                     #"{"id":2,"op":"adjust_points","delta":7,"reason":"half close"}"#, #"{"id":3,"op":"ping"}"#]
        try client.sendRaw(Array((lines.joined(separator: "\n") + "\n").utf8))
        client.socket.shutdownWrite()
        let all = try client.readToEOF().filter { $0["push"] == nil }
        #expect(all.map { $0["id"] ?? .null } == [1, 2, 3])
        #expect(all.allSatisfy { $0["ok"] == true })
        try server.stop()
    }

    /// `printf '{"id":1,"op":"ping"}' | nc host port`: the end of the stream ends the last line.
    @Test func aLastLineWithoutItsNewlineIsAnsweredWhenThePeerHalfCloses() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        let client = try server.connect()
        try client.sendRaw(Array((#"{"id":1,"op":"ping"}"# + "\n" + #"{"id":2,"op":"ping"}"#).utf8))
        client.socket.shutdownWrite()
        let all = try client.readToEOF().filter { $0["push"] == nil }
        #expect(all.map { $0["id"] ?? .null } == [1, 2])
        #expect(all.allSatisfy { $0["ok"] == true })
        try server.stop()
    }

    @Test func aPipelinedClaimSignsInBeforeTheRequestsAfterIt() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        let client = try server.connect()
        let lines = [#"{"id":1,"op":"claim","character":"mia","device":"mia-phone"}"#,
                     #"{"id":2,"op":"discover_secrets"}"#, #"{"id":3,"op":"whoami"}"#]
        try client.sendRaw(Array((lines.joined(separator: "\n") + "\n").utf8))
        var replies: [JSONValue] = []
        while replies.count < 3 {
            guard let message = try client.readMessage() else { throw HarnessError("EOF") }
            if message["push"] == nil { replies.append(message) }
        }
        #expect(replies.map { $0["ok"] ?? .null } == [true, true, true], "\(replies.map { $0.serialized() })")
        #expect(replies[2]["result"]?["character"] == "mia")
        try server.stop()
    }

    @Test func aPatchBiggerThanTheQueueBoundStillReachesAnIdleSubscriber() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path) { $0.limits.maxQueuedBytes = 4_096 }
        let watcher = try server.connect()
        _ = try watcher.signInAsAdmin()
        _ = try watcher.subscribe()
        let admin = try server.connect()
        _ = try admin.signInAsAdmin()
        let content: JSONValue = ["text": .string(String(repeating: "a long letter ", count: 400)), "urls": []]
        let saved = try admin.ok("save_reward", ["from": "Aunt May", "title": "A letter", "teaser": "Read it",
                                                 "type": "text", "content": content])
        let target = try #require(saved["version"]?.intValue)
        while watcher.mirrorVersion < target {
            guard try watcher.readMessage() != nil else { throw HarnessError("EOF") }
        }
        try watcher.checkMirror(step: "after an oversize patch")
        #expect(watcher.problems.isEmpty, "\(watcher.problems)")
        try server.stop()
    }

    /// A subscriber too slow for its patches is sent no patch until its socket drains; its own
    /// change's reply must still come after a view that holds the change.
    @Test func aSlowSubscribersOwnChangeReachesItsViewBeforeItsReply() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path) { $0.limits.maxQueuedBytes = 4_096 }
        let slow = try server.connect(receiveBufferBytes: 4_096)
        _ = try slow.signInAsAdmin()
        _ = try slow.subscribe()
        let editor = try server.connect()
        _ = try editor.signInAsAdmin()
        // Megabytes of patches that the slow subscriber does not read: far more than the
        // sockets' buffers hold, so the server stops sending it patches.
        let letter = String(repeating: "a long letter ", count: 600)
        for round in 1...1_000 {
            let content: JSONValue = ["text": .string("\(round): " + letter), "urls": []]
            try editor.ok("save_reward", ["reward": "r01", "from": "Aunt May", "title": "A letter", "teaser": "Read it",
                                          "type": "text", "content": content])
        }
        try slow.sendRaw(Array((#"{"id":"mine","op":"adjust_points","delta":3,"reason":"while slow"}"# + "\n").utf8))
        let reply = try slow.nextReply()
        #expect(reply["id"] == "mine" && reply["ok"] == true, "\(reply.serialized())")
        let version = try #require(reply["version"]?.intValue)
        #expect(slow.mirrorVersion >= version, "the view was at \(slow.mirrorVersion) when the reply at \(version) came")
        #expect(slow.snapshots > 1, "the patches were held, and a snapshot took their place")
        #expect(slow.problems.isEmpty, "\(slow.problems)")
        try slow.checkMirror(step: "after the reply")
        try server.stop()
    }
}
