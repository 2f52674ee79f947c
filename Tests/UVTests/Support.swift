import Foundation
import Testing
import UV

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
