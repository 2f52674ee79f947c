import Foundation
import Testing
import UV
import POSIXSupport

/// A value shared between a test's loop thread and the threads it starts.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<R>(_ body: (inout Value) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}

/// Runs `body` on a new thread (never on the test's cooperative pool, which may be busy).
func onNewThread(_ body: @escaping @Sendable () -> Void) {
    Thread(block: body).start()
}

/// Runs the loop to completion and proves nothing was left open.
func expectLoopClosesCleanly(_ loop: EventLoop, sourceLocation: SourceLocation = #_sourceLocation) {
    loop.run()
    #expect(loop.openHandleCount == 0, "open: \(loop.openHandleTypes)", sourceLocation: sourceLocation)
    #expect(throws: Never.self, sourceLocation: sourceLocation) { try loop.close() }
}

/// `count` bytes of lines of `lineLength` bytes each ("xxx...x\n").
func lines(count: Int, lineLength: Int) -> [[UInt8]] {
    let line = [UInt8](repeating: 0x78, count: lineLength - 1) + [0x0A]
    return Array(repeating: line, count: count)
}

/// A loopback server on `loop` that stays open until the peer's side is done: `send()` on the
/// returned wake-up (from the peer's thread) closes the server and the wake-up itself, so the
/// loop runs out once the connections have closed too.
func serverUntilPeerIsDone(_ loop: EventLoop,
                           onConnection: @escaping (TCPConnection) -> Void) throws -> (port: Int, peerDone: AsyncWakeup.Sender) {
    var server: TCPServer?
    var wakeup: AsyncWakeup?
    wakeup = try AsyncWakeup(loop: loop) {
        wakeup?.close()
        server?.close()
    }
    server = try TCPServer(loop: loop, host: "127.0.0.1", port: 0, onConnection: onConnection)
    return (try #require(server?.localPort), try #require(wakeup).sender)
}

/// The peer of `serverUntilPeerIsDone`, on a new thread: connects to `port` (with a small
/// receive buffer, so a large write cannot all fit in the kernel at once), waits for `start` if
/// given, hands each line to `line` until the server hangs up, then tells `peerDone`. An error
/// goes to `failed` instead.
func readLinesOnNewThread(port: Int, after start: DispatchSemaphore? = nil, peerDone: AsyncWakeup.Sender,
                          line: @escaping @Sendable ([UInt8]) -> Void, failed: @escaping @Sendable (String) -> Void) {
    onNewThread {
        do {
            let socket = try BlockingLineSocket(host: "127.0.0.1", port: port, receiveBufferBytes: 65536)
            start?.wait()
            while let next = try socket.readLine(timeoutMilliseconds: 10_000) { line(next) }
            socket.close()
        } catch {
            failed("\(error)")
        }
        peerDone.send()
    }
}
