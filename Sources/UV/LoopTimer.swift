import CLibUV

/// A libuv timer. Loop thread only. Keeps the loop running while started.
public final class LoopTimer: HandleOwner {
    public let loop: EventLoop
    /// Heap memory owned by libuv's close path: freed in the close callback, never here.
    private let handle: UnsafeMutablePointer<uv_timer_t>
    private var callback: (() -> Void)?
    private var isClosing = false

    public init(loop: EventLoop) throws(UVError) {
        self.loop = loop
        handle = allocateZeroed(uv_timer_t.self)
        let status = uv_timer_init(loop.raw, handle)
        if status < 0 {
            handle.deallocate()
            throw UVError(code: status, operation: "uv_timer_init")
        }
        retainOwner(self, in: handle)
    }

    /// Fires after `afterMilliseconds`, then every `repeatMilliseconds` if that is not 0.
    /// Starting again replaces the previous schedule and callback. No-op after `close()`.
    public func start(afterMilliseconds: UInt64, repeatMilliseconds: UInt64 = 0,
                      _ callback: @escaping () -> Void) {
        guard !isClosing else { return }
        self.callback = callback
        uv_timer_start(handle, { handle in
            // Loop thread; the owner is alive until the close callback.
            owner(of: asHandle(handle!), as: LoopTimer.self).callback?()
        }, afterMilliseconds, repeatMilliseconds)
    }

    /// Stops firing; the timer can be started again.
    public func stop() {
        guard !isClosing else { return }
        uv_timer_stop(handle)
    }

    /// Stops and releases the timer. Idempotent.
    public func close() {
        guard !isClosing else { return }
        isClosing = true
        closeHandle(asHandle(handle))
    }

    func handleDidClose() { callback = nil }
}
