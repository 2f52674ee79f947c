import Foundation
import JSON
import Testing

/// `resumes_per_second`: a viewer's resumes from a past version beyond its budget wait their
/// turn (each rebuilds a past view from the log); none is refused, since every version
/// in the log must stay resumable.
@Suite struct ResumeBudgetTests {
    /// A server whose viewers may each resume once a second, with a version 2 in each of
    /// `games` to resume from version 1 to.
    private func serverWithOneResumeASecond(in dir: TempDirectory, games: [String] = ["main"]) throws -> ServerHarness {
        let server = try ServerHarness(dataDirectory: dir.path) {
            $0.games = games
            $0.limits.resumesPerSecond = 1
        }
        for game in games {
            let setup = try server.connect()
            _ = try setup.signInAsAdmin(game: game)
            try setup.ok("adjust_points", ["delta": 5, "reason": "a second version"])
        }
        return server
    }

    @Test func resumesBeyondTheBudgetWaitTheirTurnInOrderAndAreNeverRefused() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try serverWithOneResumeASecond(in: dir)
        let client = try server.connect()
        _ = try client.signInAsAdmin()
        let lines = (1...3).map { #"{"id": \#($0), "op": "subscribe", "since": 1}"# } + [#"{"id": 4, "op": "ping"}"#]
        try client.sendRaw(Array((lines.joined(separator: "\n") + "\n").utf8))
        let replies = try (1...4).map { _ in try client.nextReply() }
        #expect(replies.map { $0["id"] } == [1, 2, 3, 4], "in request order")
        #expect(replies.allSatisfy { $0["ok"] == .bool(true) }, "\(replies.map { $0.serialized() })")
        #expect(replies.prefix(3).allSatisfy { $0["result"]?["mode"] == "patch" })
        // The budget is the viewer's, over its connections, and another viewer has its own.
        let second = try server.connect()
        _ = try second.signInAsAdmin()
        #expect(try second.ok("subscribe", ["since": 1])["result"]?["mode"] == "patch")
        let mia = try server.connect()
        try mia.ok("claim", ["character": "mia", "device": "phone"])
        #expect(try mia.ok("subscribe", ["since": 1])["result"]?["mode"] == "patch")
        try server.stop()
    }

    /// While its resume waits, a subscriber gets no live patch: the one its reply brings, from
    /// the version it asked for, replaces them, so what it sees still chains.
    @Test func aWaitingResumeGetsNoLivePatchBeforeItsReply() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try serverWithOneResumeASecond(in: dir)
        let watcher = try server.connect()
        _ = try watcher.signInAsAdmin()
        let admin = try server.connect()
        _ = try admin.signInAsAdmin()
        // One read: the first takes the budget, the second waits, both before the reply to the first.
        try watcher.sendRaw(Array((#"{"id": "first", "op": "subscribe", "since": 1}"# + "\n"
            + #"{"id": "second", "op": "subscribe", "since": 1}"# + "\n").utf8))
        // The reply to the first, then the patch it brings (in the same write).
        while try watcher.nextReply()["id"] != "first" {}
        #expect(try watcher.readMessage()?["push"] == "patch")
        var seen: [String] = []
        let committed = try #require(try admin.ok("adjust_points", ["delta": 1, "reason": "while it waits"])["version"]?.intValue)
        var lastPatch: JSONValue?
        while lastPatch?["to"]?.intValue != committed {
            guard let message = try watcher.readMessage() else { throw HarnessError("EOF") }
            if let id = message["id"]?.stringValue { seen.append("reply \(id)") }
            if message["push"] == "patch" {
                seen.append("patch \(message["from"]?.intValue ?? -1)")
                lastPatch = message
            }
        }
        #expect(seen == ["reply second", "patch 1"], "the reply, then one patch from the version asked for, through the new commit")
        try server.stop()
    }

    /// At shutdown a waiting resume is answered, `unavailable`, before `bye`.
    @Test func aWaitingResumeIsAnsweredBeforeByeAtShutdown() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try serverWithOneResumeASecond(in: dir)
        let client = try server.connect()
        _ = try client.signInAsAdmin()
        let lines = (1...3).map { #"{"id": \#($0), "op": "subscribe", "since": 1}"# }
        try client.sendRaw(Array((lines.joined(separator: "\n") + "\n").utf8))
        #expect(try client.nextReply()["ok"] == .bool(true), "the first had budget; the others were read with it")
        let stopped = DispatchSemaphore(value: 0)
        Thread { try? server.stop(); stopped.signal() }.start()
        var codes: [String] = []
        while client.byeReason == nil, let message = try client.readMessage() {
            if message["id"] != nil { codes.append(message["error"]?["code"]?.stringValue ?? "ok") }
        }
        #expect(codes.count == 2 && codes.allSatisfy { $0 == "unavailable" || $0 == "ok" }, "\(codes)")
        #expect(client.byeReason == "server_shutdown")
        stopped.wait()
    }

    /// An answered resume lets its connection go on: here to sign in to another game and resume
    /// there, where it waits in turn. The timer must run for it too, whichever order the games
    /// are visited in (a dictionary's: several names try both orders).
    @Test(arguments: ["aa", "g2", "g4", "zz"])
    func aResumeThatWaitsInAnotherGameIsStillAnswered(other: String) throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try serverWithOneResumeASecond(in: dir, games: ["main", other])
        let client = try server.connect()
        _ = try client.signInAsAdmin()
        let lines = [#"{"id": 1, "op": "subscribe", "since": 1}"#, #"{"id": 2, "op": "subscribe", "since": 1}"#,
                     #"{"id": 3, "op": "admin", "key": "\#(ServerHarness.adminKey)", "game": "\#(other)"}"#,
                     #"{"id": 4, "op": "subscribe", "since": 1}"#, #"{"id": 5, "op": "subscribe", "since": 1}"#]
        try client.sendRaw(Array((lines.joined(separator: "\n") + "\n").utf8))
        let replies = try (1...5).map { _ in try client.nextReply() }
        #expect(replies.map { $0["id"] } == [1, 2, 3, 4, 5])
        #expect(replies.allSatisfy { $0["ok"] == .bool(true) })
        try server.stop()
    }
}
