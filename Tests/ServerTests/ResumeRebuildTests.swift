@testable import EventLog
import Foundation
import JSON
@testable import Server
import Testing

/// `subscribe since` rebuilds the past view off the loop thread: while it is rebuilt the server
/// goes on for everyone, and the patch the reply brings covers what was committed meanwhile.
@Suite struct ResumeRebuildTests {
    @Test func theServerGoesOnWhileAPastViewIsRebuilt() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        let other = try server.connect()
        _ = try other.signInAsAdmin()
        let atOne = try #require(try other.ok("state")["result"]?["state"])
        try other.ok("adjust_points", ["delta": 5, "reason": "a version to resume past"])

        server.rebuildGate.close()
        var gateOpen = false
        defer { if !gateOpen { server.rebuildGate.open() } }
        let resumer = try server.connect()
        _ = try resumer.signInAsAdmin()
        resumer.adoptMirror(atOne, version: 1)
        let resume = try resumer.send("subscribe", ["since": 1])
        // Held at its start, the rebuild would hold everyone if it ran on the loop thread.
        #expect(server.rebuildGate.waitForHeldRebuild(timeout: 30))
        try other.ok("ping")
        let committed = try other.ok("adjust_points", ["delta": 1, "reason": "while the old view is rebuilt"])
        server.rebuildGate.open()
        gateOpen = true

        let reply = try resumer.reply(to: resume)
        #expect(reply["result"]?["mode"] == "patch")
        #expect(reply["version"] == committed["version"], "the patch reaches the version of the reply, the commit made meanwhile included")
        #expect(try resumer.readMessage()?["push"] == "patch")
        try resumer.checkMirror(step: "after the resume")
        #expect(resumer.mirrorVersion == 3)
        #expect(resumer.problems.isEmpty, "\(resumer.problems)")
        try server.stop()
    }

    /// A change pipelined behind a resume waits for the resume's answer: the resume does not
    /// show a change sent after it, and the versions of one connection's replies never go back
    /// (before, the change was decided at once and the resume answered later, at a version
    /// past it, when another player committed meanwhile).
    @Test func aChangeBehindAResumeWaitsForItsAnswer() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        let other = try server.connect()
        _ = try other.signInAsAdmin()
        try other.ok("adjust_points", ["delta": 5, "reason": "a version to resume past"])

        server.rebuildGate.close()
        var gateOpen = false
        defer { if !gateOpen { server.rebuildGate.open() } }
        let resumer = try server.connect()
        _ = try resumer.signInAsAdmin()
        let resume = try resumer.send("subscribe", ["since": 1])
        #expect(server.rebuildGate.waitForHeldRebuild(timeout: 30))
        let change = try resumer.send("adjust_points", ["delta": 1, "reason": "sent after the resume"])
        // A round trip on the same connection would wait too; another connection's commit shows
        // the change has not been decided: it takes the next version.
        let meanwhile = try other.ok("adjust_points", ["delta": 2, "reason": "another player, meanwhile"])
        #expect(meanwhile["version"] == 3)
        server.rebuildGate.open()
        gateOpen = true

        let resumed = try resumer.reply(to: resume)
        let changed = try resumer.reply(to: change)
        #expect(resumed["version"] == 3, "\(resumed.serialized())")
        #expect(changed["version"] == 4, "\(changed.serialized())")
        try server.stop()
    }

    /// A log with a version missing (changed by hand under the server) gives no past view: the
    /// resume gets a snapshot of the present, not a patch from a view that never was. (Both the
    /// gap rule of `Codec.applyNext` and the rebuild's count of versions see this one.)
    @Test func aResumeAcrossAGapInTheLogGetsASnapshot() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        defer { try? server.stop() }
        let admin = try server.connect()
        _ = try admin.signInAsAdmin()
        for index in 0..<4 { try admin.ok("adjust_points", ["delta": 1, "reason": .string("step \(index)")]) }
        let store = try EventStore(path: dir.path + "/birthdayquest.sqlite", options: StoreOptions(synchronous: .off))
        try store.executeForTesting("DELETE FROM events WHERE game = 'main' AND version = 3")
        store.close()

        let resumer = try server.connect()
        _ = try resumer.signInAsAdmin()
        let reply = try resumer.reply(to: resumer.send("subscribe", ["since": 4]))
        #expect(reply["result"]?["mode"] == "snapshot", "\(reply.serialized())")
        #expect(try resumer.readMessage()?["push"] == "snapshot")
    }

    /// A resume whose rebuild is under way at shutdown gets its one reply, `unavailable` (the
    /// rebuilder may be slow to finish, and a reconnect resumes), then `bye`.
    @Test func aResumeBeingRebuiltAtShutdownIsAnswered() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        let client = try server.connect()
        _ = try client.signInAsAdmin()
        try client.ok("adjust_points", ["delta": 5, "reason": "a version to resume past"])
        server.rebuildGate.close()
        let resume = try client.send("subscribe", ["since": 1])
        // Read and under way: a line the server had not read at shutdown would get no reply.
        #expect(server.rebuildGate.waitForHeldRebuild(timeout: 30))
        let stopped = DispatchSemaphore(value: 0)
        // The gate stays closed: the rebuilder opens it when it stops, after the refusals.
        Thread { try? server.stop(); stopped.signal() }.start()
        let reply = try client.reply(to: resume)
        #expect(reply["error"]?["code"] == "unavailable", "\(reply.serialized())")
        while client.byeReason == nil, try client.readMessage() != nil {}
        #expect(client.byeReason == "server_shutdown")
        stopped.wait()
    }
}
