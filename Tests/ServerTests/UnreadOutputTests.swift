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

    /// Many such clients hold a bounded share in all: past `max_total_queued_bytes` the ones
    /// owing the most are closed, subscribed or not, and a client that reads is served as before.
    @Test func manyClientsThatDoNotReadAreClosedPastTheServersWholeBound() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        // Each greedy client is owed some 16 KiB and more past its socket's buffers (lines wait
        // past 4 x 4 KiB, each reply a 20 KB view): ten of them owe over twice the 64 KiB bound.
        let server = try ServerHarness(dataDirectory: dir.path) {
            $0.limits.maxQueuedBytes = 4_096
            $0.limits.maxTotalQueuedBytes = 65_536
        }
        defer { try? server.stop() }
        let ended = DispatchSemaphore(value: 0)
        var greedy: [TestClient] = []
        for number in 1...10 {
            let client = try server.connect(receiveBufferBytes: 4_096)
            _ = try client.signInAsAdmin()
            // A subscriber is not closed for its patches, but is for replies it does not read.
            if number.isMultiple(of: 2) { try client.subscribe() }
            try client.sendRaw(Array((1...300).map { PipeliningTests.line($0, "state") }.joined().utf8))
            greedy.append(client)
        }
        let reader = try server.connect()
        _ = try reader.signInAsAdmin()
        _ = try reader.ok("adjust_points", ["delta": 1, "reason": "meanwhile"])
        // Each greedy client reads now, on its own thread: a closed one comes to its end.
        let endedNumbers = LockedBox<[Int]>([])
        for (index, client) in greedy.enumerated() {
            // The thread holds the client, so that its socket stays open while it reads: the
            // server's stop at the end of the test ends the ones still open.
            Thread {
                // Nil at the end, or at a reset: either way, closed.
                while (try? client.socket.readLine(timeoutMilliseconds: 30_000)) != nil {}
                endedNumbers.update { $0.append(index + 1) }
                ended.signal()
            }.start()
        }
        var subscriberClosed = false
        while !subscriberClosed, ended.wait(timeout: .now() + 20) == .success {
            subscriberClosed = endedNumbers.value.contains { $0.isMultiple(of: 2) }
        }
        #expect(subscriberClosed, "no subscriber that did not read its replies was closed; closed: \(endedNumbers.value)")
        #expect(try reader.ok("ping")["version"] != nil, "the client that reads is still served")
    }

    /// Two replies of a whole view each go past the bound in one read, and reading pauses;
    /// a socket that takes them whole sends no drain callback, and nothing is left waiting.
    @Test func readingResumesOnceOutputThatPausedItWasWrittenWhole() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path) { $0.limits.maxQueuedBytes = 4_096 }
        let client = try server.connect()
        _ = try client.signInAsAdmin()
        try client.sendRaw(Array((#"{"id":"a","op":"state"}"# + "\n" + #"{"id":"b","op":"state"}"# + "\n").utf8))
        #expect(try client.nextReply()["id"] == "a")
        #expect(try client.nextReply()["id"] == "b")
        try client.ok("ping")
        try server.stop()
    }

    /// A mutation held behind unread output and started after the turn's writes reaches the
    /// writer in that turn, not whenever the loop next wakes (a timer, seconds later).
    @Test func aMutationStartedAfterTheTurnsWritesIsCommittedInThatTurn() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path) { $0.limits.maxQueuedBytes = 4_096 }
        let client = try server.connect()
        // Well under the 10 s of the server's next timer, which would otherwise hand it over.
        client.timeoutMilliseconds = 5_000
        _ = try client.signInAsAdmin()
        try client.sendRaw(Array((#"{"id":"a","op":"state"}"# + "\n" + #"{"id":"b","op":"state"}"# + "\n"
            + #"{"id":"m","op":"adjust_points","delta":1,"reason":"held"}"# + "\n").utf8))
        _ = try client.nextReply()
        _ = try client.nextReply()
        #expect(try client.nextReply()["ok"] == .bool(true))
        try server.stop()
    }

    /// At shutdown, lines held behind unread output are answered (`unavailable`) before `bye`.
    @Test func heldLinesAreAnsweredBeforeByeAtShutdown() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path) { $0.limits.maxQueuedBytes = 4_096 }
        let greedy = try server.connect(receiveBufferBytes: 4_096)
        _ = try greedy.signInAsAdmin()
        let reads = 300
        try greedy.sendRaw(Array((1...reads).map { #"{"id":\#($0),"op":"state"}"# + "\n" }.joined().utf8))
        // The lines were read (and held) before another client's sign-in was answered: they
        // reached the server first.
        _ = try server.connect().signInAsAdmin()
        let stopped = DispatchSemaphore(value: 0)
        Thread { try? server.stop(); stopped.signal() }.start()
        var answered = 0
        var bye: String?
        while bye == nil, let message = try greedy.readMessage() {
            if let id = message["id"], id != .null { answered += 1 }
            bye = message["push"] == "bye" ? message["reason"]?.stringValue : nil
        }
        #expect(answered == reads, "every line read gets its reply before bye")
        #expect(bye == "server_shutdown")
        stopped.wait()
    }

    /// A peer that leaves lines held behind output it does not read is idle, not waiting on
    /// the server: the idle timeout closes it (it would otherwise hold that output for ever).
    @Test func aPeerThatDoesNotReadWhatItIsOwedIsIdle() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let now = LockedBox<UInt64>(0)
        let server = try ServerHarness(dataDirectory: dir.path, configure: {
            $0.limits.maxQueuedBytes = 4_096
            $0.limits.idleTimeoutSeconds = 10
        }, steadyClock: { now.value })
        let greedy = try server.connect(receiveBufferBytes: 4_096)
        _ = try greedy.signInAsAdmin()
        try greedy.sendRaw(Array((1...300).map { PipeliningTests.line($0, "state") }.joined().utf8))
        let probe = try server.connect()
        _ = try probe.signInAsAdmin()   // the greedy lines were read (and held) by then
        now.update { $0 = 11_000 }
        // Both have been silent for 11 s; the probe's bye says the server's sweep has run.
        while probe.byeReason == nil, try probe.readMessage() != nil {}
        #expect(probe.byeReason == "idle_timeout")
        var answered = 0
        var bye: String?
        while bye == nil, let message = try greedy.readMessage() {
            if let id = message["id"], id != .null { answered += 1 }
            bye = message["push"] == "bye" ? message["reason"]?.stringValue : nil
        }
        #expect(bye == "idle_timeout")
        #expect(answered < 300, "the lines it left held were not started for it")
        try server.stop()
    }
}
