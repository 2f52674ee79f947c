import Foundation
import POSIXSupport

/// A value several threads share, reachable only while its lock is held: the compiler, not a
/// convention, keeps every access under the lock. (A POSIX lock and condition, not
/// `Synchronization.Mutex`: ThreadSanitizer reports false races inside `Mutex` on Linux. And
/// one that waits on the monotonic clock: a reply's timeout is not stretched or cut short when
/// the wall clock is set.)
final class Guarded<Value: Sendable>: @unchecked Sendable {
    private let condition = MonotonicCondition()
    /// Touched only between `condition.lock()` and `unlock()`.
    private var value: Value

    init(_ value: Value) { self.value = value }

    /// Runs `body` holding the lock.
    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        condition.lock()
        defer { condition.unlock() }
        return try body(&value)
    }

    /// Runs `body` holding the lock, then wakes every thread in `wait`: for a change someone may
    /// be waiting for (a reply, the mirror, the end of the reader, closing).
    func changing<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        return try body(&value)
    }

    /// Holds the lock and calls `body` until it returns a result, waiting for a `changing` call
    /// between tries. The try once `seconds` have passed is told so (`expired`), and must
    /// return a result.
    func wait<T>(seconds: Double, _ body: (inout Value, _ expired: Bool) -> T?) -> T {
        let deadline = monotonicDeadline(after: seconds)
        condition.lock()
        defer { condition.unlock() }
        var expired = false
        while true {
            if let result = body(&value, expired) { return result }
            precondition(!expired, "a wait's last try must give a result")
            expired = !condition.wait(untilMonotonic: deadline)
        }
    }
}
