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
        wait(seconds: seconds, dueAt: { _ in nil }, body)
    }

    /// As `wait(seconds:_:)`, with a try also at the moment `due` reads from the value (a
    /// `monotonicNanoseconds` time, nil for none): for something the value holds that falls due
    /// without a change, which `body` then tells by the clock (it is not `expired`).
    func wait<T>(seconds: Double, dueAt due: (Value) -> UInt64?, _ body: (inout Value, _ expired: Bool) -> T?) -> T {
        let deadline = monotonicDeadline(after: seconds)
        condition.lock()
        defer { condition.unlock() }
        var expired = false
        while true {
            if let result = body(&value, expired) { return result }
            precondition(!expired, "a wait's last try must give a result")
            let wake = min(deadline, due(value) ?? deadline)
            expired = !condition.wait(untilMonotonic: wake) && wake == deadline
        }
    }
}
