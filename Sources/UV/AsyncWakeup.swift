import CLibUV
import Foundation

/// Wakes the loop from another thread (`uv_async_send`). The only type in this module that
/// may be used across threads: `send()` from any thread, everything else on the loop thread.
///
/// Sends coalesce: many sends before the loop wakes give one callback, so the callback must
/// drain its whole queue each time. Keeps the loop running until closed.
public final class AsyncWakeup: HandleOwner, @unchecked Sendable {
    /// Keeps the loop alive as long as the handle; private, because this object crosses
    /// threads and the loop must not.
    private let loop: EventLoop
    /// Heap memory freed in the close callback on the loop thread. Other threads touch it only
    /// through `uv_async_send` while holding `lock` with `isClosed == false`, so never after
    /// `uv_close` was called.
    private let handle: UnsafeMutablePointer<uv_async_t>
    /// Read only on the loop thread.
    private var callback: (() -> Void)?
    /// Guards `isClosed` and every use of `handle` that can happen off the loop thread.
    private let lock = NSLock()
    private var isClosed = false

    /// `callback` runs on the loop thread.
    public init(loop: EventLoop, _ callback: @escaping () -> Void) throws(UVError) {
        self.loop = loop
        self.callback = callback
        handle = allocateZeroed(uv_async_t.self)
        let status = uv_async_init(loop.raw, handle) { handle in
            // Loop thread; the owner is alive until the close callback.
            owner(of: asHandle(handle!), as: AsyncWakeup.self).callback?()
        }
        if status < 0 {
            handle.deallocate()
            throw UVError(code: status, operation: "uv_async_init")
        }
        retainOwner(self, in: handle)
    }

    /// Any thread. Schedules the callback; a no-op after `close()`.
    public func send() {
        lock.lock()
        defer { lock.unlock() }
        guard !isClosed else { return }
        uv_async_send(handle)
    }

    /// Loop thread. Later sends are ignored. Idempotent.
    public func close() {
        lock.lock()
        defer { lock.unlock() }
        guard !isClosed else { return }
        isClosed = true
        closeHandle(asHandle(handle))
    }

    func handleDidClose() { callback = nil }
}
