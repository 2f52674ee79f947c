import Foundation

/// The stop handshake of a worker thread, with the condition variable that guards it: a
/// subclass keeps its own fields under the same `condition`, so that "stopping" and "there is
/// work" are read together. `stopAndWait()` asks the worker to stop and blocks until the worker
/// calls `markFinished()` on its way out.
class WorkerThreadState: @unchecked Sendable {
    // `stopping`, `finished` and every field a subclass adds are guarded by `condition`.
    let condition = NSCondition()
    private(set) var stopping = false
    private var finished = false

    /// Idempotent; call from any thread but the worker's.
    func stopAndWait() {
        condition.lock()
        defer { condition.unlock() }
        stopping = true
        condition.broadcast()
        while !finished { condition.wait() }
    }

    /// The worker's last call.
    func markFinished() {
        condition.lock()
        defer { condition.unlock() }
        finished = true
        condition.broadcast()
    }
}
