import Foundation
import JSON
import Testing

/// A client that pipelines reads and does not read the replies holds a bounded share of the
/// server's memory: lines wait unstarted while too much output waits for it.
@Suite struct UnreadOutputTests {
    @Test func linesAfterTooMuchUnreadOutputWaitUntilTheClientReads() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        // Output waits past 4 x 4 KiB; each `state` reply is a whole view of some 20 KB.
        let server = try ServerHarness(dataDirectory: dir.path) { $0.limits.maxQueuedBytes = 4_096 }
        let greedy = try server.connect(receiveBufferBytes: 4_096)
        _ = try greedy.signInAsAdmin()
        let reads = 600
        var pipeline = ""
        for id in 1...reads { pipeline += #"{"id":\#(id),"op":"state"}"# + "\n" }
        pipeline += #"{"id":"late","op":"adjust_points","delta":1,"reason":"after the reads"}"# + "\n"
        try greedy.sendRaw(Array(pipeline.utf8))

        // Whoever comes next is served: the loop is not busy answering the greedy client.
        let other = try server.connect()
        _ = try other.signInAsAdmin()
        let otherVersion = try #require(try other.ok("adjust_points", ["delta": 1, "reason": "meanwhile"])["version"]?.intValue)

        var lateReply: JSONValue?
        var stateReplies = 0
        while lateReply == nil {
            guard let message = try greedy.readMessage() else { throw HarnessError("EOF") }
            if message["id"] == .string("late") { lateReply = message } else if message["id"] != nil { stateReplies += 1 }
        }
        #expect(stateReplies == reads, "every read is answered, in order, once the client reads")
        #expect(lateReply?["version"]?.intValue == otherVersion + 1,
                "the mutation after the reads started only once their replies were read, after the other client's")
        try server.stop()
    }
}
