import Dispatch
import Foundation
import Testing
import UV
import POSIXSupport

/// A write with nothing queued ahead of it goes straight to the kernel; what the kernel does
/// not take is queued, in order, behind it.
@Suite("Direct writes")
struct DirectWriteTests {
    @Test("one chunk far larger than the socket buffers: the kernel takes a part, the rest queues, all arrives in order")
    func aLargeWriteIsSplitBetweenTheKernelAndTheQueue() throws {
        let loop = try EventLoop()
        let lineCount = 8_192
        // 8 MiB in one array, numbered lines so that order and completeness are checkable.
        var payload: [UInt8] = []
        for index in 0..<lineCount {
            payload += Array(String(format: "%07d", index).utf8)
            payload += [UInt8](repeating: 0x78, count: 1024 - 8) + [0x0A]
        }
        let total = payload.count
        let startReading = DispatchSemaphore(value: 0)
        let received = Locked<(lines: [String], error: String?)>(([], nil))
        var queuedRightAfterWrite = -1
        var drains = 0
        let (port, notify) = try serverUntilPeerIsDone(loop) { connection in
            connection.onDrain = {
                drains += 1
                connection.closeAfterFlush()
            }
            connection.write(payload)
            queuedRightAfterWrite = connection.queuedWriteBytes
            startReading.signal()
        }
        readLinesOnNewThread(port: port, after: startReading, peerDone: notify) { line in
            received.withLock { $0.lines.append(String(decoding: line.prefix(7), as: UTF8.self)) }
        } failed: { error in
            received.withLock { $0.error = error }
        }
        expectLoopClosesCleanly(loop)
        let result = received.withLock { $0 }
        #expect(result.error == nil)
        #expect(queuedRightAfterWrite > 0 && queuedRightAfterWrite < total,
                "the kernel took part of it at once and the rest was queued (queued \(queuedRightAfterWrite) of \(total))")
        #expect(result.lines == (0..<lineCount).map { String(format: "%07d", $0) })
        #expect(drains == 1)
    }

    @Test("small writes to a reading peer never queue and never call onDrain")
    func smallWritesGoStraightThrough() throws {
        let loop = try EventLoop()
        var queuedAfterWrites: [Int] = []
        var drains = 0
        let received = Locked<[String]>([])
        let (port, notify) = try serverUntilPeerIsDone(loop) { connection in
            connection.onDrain = { drains += 1 }
            for index in 0..<100 {
                connection.write(Array("line \(index)\n".utf8))
                queuedAfterWrites.append(connection.queuedWriteBytes)
            }
            connection.closeAfterFlush()
        }
        let failure = Locked<String?>(nil)
        readLinesOnNewThread(port: port, peerDone: notify) { line in
            received.withLock { $0.append(String(decoding: line, as: UTF8.self)) }
        } failed: { error in
            failure.withLock { $0 = error }
        }
        expectLoopClosesCleanly(loop)
        #expect(failure.withLock { $0 } == nil)
        #expect(received.withLock { $0 } == (0..<100).map { "line \($0)" })
        #expect(queuedAfterWrites == Array(repeating: 0, count: 100))
        #expect(drains == 0)
    }
}

/// A connection closed after its queue is flushed must close even when the peer never reads:
/// libuv finishes a shutdown only after the queued writes, which a silent peer never lets end.
@Suite("Flush deadline")
struct FlushDeadlineTests {
    @Test("closeAfterFlush to a peer that never reads closes at its deadline, with ETIMEDOUT")
    func aPeerThatNeverReadsIsClosedAtTheDeadline() throws {
        let loop = try EventLoop()
        let closed = DispatchSemaphore(value: 0)
        var closeError: UVError?
        var queuedAtClose = 0
        let (port, notify) = try serverUntilPeerIsDone(loop) { connection in
            connection.onClose = { error in
                closeError = error
                closed.signal()
            }
            // Far more than the kernel's buffers on both sides hold.
            connection.write(gathering: lines(count: 16_384, lineLength: 1024))
            queuedAtClose = connection.queuedWriteBytes
            connection.closeAfterFlush(deadlineMilliseconds: 50)
        }
        let closedInTime = Locked(false)
        onNewThread {
            do {
                let socket = try BlockingLineSocket(host: "127.0.0.1", port: port, receiveBufferBytes: 65536)
                // Reads nothing. Had the server never closed, this gives up (and its close
                // would then fail the server's writes and end the loop anyway).
                let inTime = closed.wait(timeout: .now() + 20) == .success
                closedInTime.withLock { $0 = inTime }
                socket.close()
            } catch {}
            notify.send()
        }
        expectLoopClosesCleanly(loop)
        #expect(queuedAtClose > 0, "the test needs bytes left queued")
        #expect(closedInTime.withLock { $0 }, "the connection waited for a peer that never reads")
        #expect(closeError?.code == -ETIMEDOUT, "libuv's codes are negated errnos: \(String(describing: closeError))")
    }
}

/// Closing a socket whose peer's bytes were never read sends a reset, and a reset throws away
/// what the kernel still holds to send: a connection closed after a flush must let a slow peer
/// read everything, its FIN included, before it closes.
@Suite("Lingering close")
struct LingeringCloseTests {
    @Test("a slow peer whose requests were never read still reads every line sent before the close, then EOF")
    func unreadRequestsDoNotCostASlowPeerItsReplies() throws {
        let loop = try EventLoop()
        let requestsSent = DispatchSemaphore(value: 0)
        let closed = DispatchSemaphore(value: 0)
        let lineCount = 4_096
        let (port, notify) = try serverUntilPeerIsDone(loop) { connection in
            connection.onClose = { _ in closed.signal() }
            // The peer's requests stay unread: this side never starts reading.
            requestsSent.wait()
            for index in 0..<lineCount {
                connection.write(Array(String(format: "line %05d ", index).utf8) + [UInt8](repeating: 0x78, count: 100) + [0x0A])
            }
            connection.closeAfterFlush(lingerMilliseconds: 20_000)
        }
        let outcome = Locked<(lines: Int, error: String?)>((0, nil))
        onNewThread {
            // Signalled whatever happens: the server's side waits for it on the loop thread.
            var signalled = false
            defer { if !signalled { requestsSent.signal() } }
            do {
                let socket = try BlockingLineSocket(host: "127.0.0.1", port: port, receiveBufferBytes: 65536)
                try socket.send([UInt8](repeating: 0x78, count: 32 * 1024))
                requestsSent.signal()
                signalled = true
                // A slow reader: it starts a while after the server's flush. A server that closed
                // without lingering has closed by then; one that lingers waits for this side.
                _ = closed.wait(timeout: .now() + 1)
                var lines = 0
                while try socket.readLine(timeoutMilliseconds: 10_000) != nil { lines += 1 }
                outcome.withLock { $0 = (lines, nil) }
                socket.close()
            } catch {
                outcome.withLock { $0.error = "\(error)" }
            }
            notify.send()
        }
        expectLoopClosesCleanly(loop)
        let result = outcome.withLock { $0 }
        #expect(result.error == nil, "the lines still in the server's kernel were dropped: \(result.error ?? "")")
        #expect(result.lines == lineCount)
    }
}

/// A closing connection reads (and drops) what its peer sends from the moment it starts
/// closing, whatever its owner asks.
@Suite("Reading while closing")
struct ReadingWhileClosingTests {
    @Test("a peer that writes everything before it reads, both ways beyond the buffers, still gets every line")
    func aPeerThatWritesBeforeItReadsIsNotDeadlocked() throws {
        let loop = try EventLoop()
        let lineCount = 8_192
        let (port, notify) = try serverUntilPeerIsDone(loop) { connection in
            // Never reads as the owner: 8 MiB out, then close.
            connection.write(gathering: lines(count: lineCount, lineLength: 1024))
            connection.closeAfterFlush()
        }
        let outcome = Locked<(lines: Int, error: String?)>((0, nil))
        onNewThread {
            do {
                let socket = try BlockingLineSocket(host: "127.0.0.1", port: port)
                // 8 MiB in: more than both kernels buffer, so this returns only if the server reads.
                try socket.send([UInt8](repeating: 0x78, count: 8 << 20))
                var count = 0
                while try socket.readLine(timeoutMilliseconds: 10_000) != nil { count += 1 }
                outcome.withLock { $0 = (count, nil) }
                socket.close()
            } catch {
                outcome.withLock { $0.error = "\(error)" }
            }
            notify.send()
        }
        expectLoopClosesCleanly(loop)
        let result = outcome.withLock { $0 }
        #expect(result.error == nil)
        #expect(result.lines == lineCount)
    }

    @Test("stopReading on a closing connection does not stop it waiting for the peer's end of file")
    func stopReadingLeavesAClosingConnectionReading() throws {
        let loop = try EventLoop()
        let closed = DispatchSemaphore(value: 0)
        let (port, notify) = try serverUntilPeerIsDone(loop) { connection in
            connection.onClose = { _ in closed.signal() }
            connection.startReading()
            connection.write(Array("bye\n".utf8))
            connection.closeAfterFlush(lingerMilliseconds: 60_000)
            // As a server that begins to shut down does to every connection.
            connection.stopReading()
        }
        let closedOnPeersEOF = Locked(false)
        onNewThread {
            if let socket = try? BlockingLineSocket(host: "127.0.0.1", port: port) {
                _ = try? socket.readLine(timeoutMilliseconds: 10_000)
                _ = try? socket.readLine(timeoutMilliseconds: 10_000)  // the server's end of file
                socket.close()
                let inTime = closed.wait(timeout: .now() + 20) == .success
                closedOnPeersEOF.withLock { $0 = inTime }
            }
            notify.send()
        }
        expectLoopClosesCleanly(loop)
        #expect(closedOnPeersEOF.withLock { $0 }, "the server closed only at its linger deadline")
    }

    /// A server that pauses reading while it is busy resumes it when the work is done, and the
    /// end of the stream can come in between. libuv reads a stream past its end again if asked
    /// (and reports the end again, every loop turn): resuming then must do nothing.
    @Test("startReading after the peer's end of file does nothing: one end of file, and what is owed still arrives")
    func startReadingAfterEndOfFileIsHarmless() throws {
        let loop = try EventLoop()
        var endsOfFile = 0
        var serverSide: TCPConnection?
        let peerReadTheReply = try AsyncWakeup(loop: loop) { serverSide?.closeAfterFlush() }
        let peerRead = peerReadTheReply.sender
        let (port, notify) = try serverUntilPeerIsDone(loop) { connection in
            serverSide = connection
            connection.onRead = { _ in }
            connection.onClose = { _ in peerReadTheReply.close() }
            connection.onEOF = {
                endsOfFile += 1
                connection.startReading()
                if endsOfFile == 1 { connection.write(Array("owed\n".utf8)) }
            }
            connection.startReading()
        }
        let received = Locked<[String]>([])
        onNewThread {
            if let socket = try? BlockingLineSocket(host: "127.0.0.1", port: port) {
                try? socket.sendLine("request")
                socket.shutdownWrite()
                while let line = try? socket.readLine(timeoutMilliseconds: 10_000) {
                    received.withLock { $0.append(String(decoding: line, as: UTF8.self)) }
                    // Loop turns have passed since the server's end of file: any repeat came.
                    peerRead.send()
                }
                socket.close()
            }
            notify.send()
        }
        expectLoopClosesCleanly(loop)
        #expect(received.withLock { $0 } == ["owed"])
        #expect(endsOfFile == 1)
    }
}
