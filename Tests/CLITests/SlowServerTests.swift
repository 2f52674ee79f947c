import Client
import Foundation
import JSON
import Testing

/// A server that is slow, not gone: its disk (here, another process's lock on the log) holds a
/// change longer than the client's probe timeout. The client must wait for the answer, not take
/// the connection for lost and send the change again.
@Suite struct SlowServerTests {
    @Test func aChangeHeldByTheDiskIsWaitedForOnTheSameConnection() throws {
        let server = try ServerProcess(environment: ["BQ_BUSY_TIMEOUT_MS": "60000"])
        defer { server.stop() }
        var options = ClientOptions()
        options.probeTimeout = 0.5
        let client = try GameClient.connect(port: server.port, options: options)
        defer { client.close() }
        try client.signInAdmin(key: server.adminKey)
        try client.subscribe()

        let lock = try LogLock(server)
        let change = client.send("adjust_points", ["delta": 5, "reason": "slow disk"])
        // The stall itself: several probe timeouts long, with the connection quiet meanwhile.
        Thread.sleep(forTimeInterval: 2)
        try lock.release()

        let reply = try change.wait()
        #expect(reply.result["points"] == 5)
        #expect(!reply.replayed, "the change was sent again")
        #expect(client.reconnectCount == 0)
    }

    /// An edit expects the version it read, and a change still held by the disk has moved it
    /// already: the edit cannot go through, and says why, rather than that others kept changing
    /// the game.
    @Test func anEditBehindAChangeHeldByTheDiskSaysSo() throws {
        let server = try ServerProcess(environment: ["BQ_BUSY_TIMEOUT_MS": "60000"])
        defer { server.stop() }
        let lock = try LogLock(server)
        let held = try BQProcess.run(["admin"] + server.adminFlags + ["--timeout", "1", "set-day", "2"])
        let edit = try BQProcess.run(["admin"] + server.adminFlags + ["edit-challenge", "c03", "--points", "10"])
        try lock.release()
        #expect(held.status == 75, "\(held.err)")
        #expect(edit.status == 1, "\(edit.out) \(edit.err)")
        #expect(edit.err.contains("A change made before this one is still being written to disk"), "\(edit.err)")
        #expect(edit.err.contains("nothing was saved"), "\(edit.err)")
    }
}
