import CLibUV
import Foundation

/// Wakes the loop from another thread (`uv_async_send`). The wake-up itself belongs to the loop
/// thread, like every handle; other threads get its `sender`, the only value of this module that
/// crosses threads, which can do nothing but send.
///
/// Sends coalesce: many sends before the loop wakes give one callback, so the callback must
/// drain its whole queue each time. Keeps the loop running until closed.
public final class AsyncWakeup: HandleOwner {
    /// What other threads hold: the handle behind a lock, and whether it is closed.
    public struct Sender: Sendable {
        fileprivate let line: Line

        /// Any thread. Schedules the callback; a no-op once the wake-up is closed.
        public func send() { line.send() }
    }

    /// Keeps the loop alive as long as the handle.
    private let loop: EventLoop
    private let line: Line
    /// Loop thread only.
    private var callback: (() -> Void)?

    /// `callback` runs on the loop thread.
    public init(loop: EventLoop, _ callback: @escaping () -> Void) throws(UVError) {
        self.loop = loop
        self.callback = callback
        let handle = allocateZeroed(uv_async_t.self)
        let status = uv_async_init(loop.raw, handle) { handle in
            // Loop thread; the owner is alive until the close callback.
            owner(of: asHandle(handle!), as: AsyncWakeup.self).callback?()
        }
        if status < 0 {
            handle.deallocate()
            throw UVError(code: status, operation: "uv_async_init")
        }
        line = Line(handle: handle)
        retainOwner(self, in: handle)
    }

    /// For other threads; valid for as long as they hold it (sends after `close()` do nothing).
    public var sender: Sender { Sender(line: line) }

    /// Loop thread. Later sends are ignored. Idempotent.
    public func close() {
        guard let handle = line.closeForSenders() else { return }
        closeHandle(asHandle(handle))
    }

    func handleDidClose() { callback = nil }
}

/// The handle as senders see it.
///
/// Memory: the handle is the wake-up's, freed in its close callback on the loop thread. Senders
/// touch it only through `uv_async_send` (the one thread-safe libuv call), holding `lock` while
/// `isClosed` is false, and `close()` sets `isClosed` under the same lock before `uv_close`: so
/// no send reaches freed memory. The line itself outlives the handle for as long as any sender
/// holds it.
private final class Line: @unchecked Sendable {
    /// Valid while `isClosed` is false; used by senders only while holding `lock`.
    private let handle: UnsafeMutablePointer<uv_async_t>
    // Guarded by `lock`.
    private var isClosed = false
    private let lock = NSLock()

    init(handle: UnsafeMutablePointer<uv_async_t>) { self.handle = handle }

    func send() {
        lock.lock()
        defer { lock.unlock() }
        guard !isClosed else { return }
        uv_async_send(handle)
    }

    /// The handle to close, once: nil if it was already.
    func closeForSenders() -> UnsafeMutablePointer<uv_async_t>? {
        lock.lock()
        defer { lock.unlock() }
        guard !isClosed else { return nil }
        isClosed = true
        return handle
    }
}
