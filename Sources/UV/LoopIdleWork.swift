import CLibUV

/// Runs a callback once per loop turn while started, before the turn's wait for I/O (`uv_idle`),
/// and makes that wait return at once: work put off to let other sockets be served is taken
/// up again right after they were polled, not when the next byte happens to arrive.
/// Loop thread only.
public final class LoopIdleWork: HandleOwner {
    public let loop: EventLoop
    /// Heap memory freed in the close callback.
    private let handle: UnsafeMutablePointer<uv_idle_t>
    private var callback: (() -> Void)?
    private var isClosing = false
    private var isStarted = false

    public init(loop: EventLoop, _ callback: @escaping () -> Void) throws(UVError) {
        self.loop = loop
        self.callback = callback
        handle = allocateZeroed(uv_idle_t.self)
        let status = uv_idle_init(loop.raw, handle)
        if status < 0 {
            handle.deallocate()
            throw UVError(code: status, operation: "uv_idle_init")
        }
        retainOwner(self, in: handle)
    }

    /// From the next turn on, until `stop`. Idempotent.
    public func start() {
        guard !isClosing, !isStarted else { return }
        isStarted = true
        uv_idle_start(handle) { handle in
            // Loop thread; the owner is alive until the close callback.
            owner(of: asHandle(handle!), as: LoopIdleWork.self).callback?()
        }
    }

    /// Idempotent; the loop may block for I/O again.
    public func stop() {
        guard isStarted else { return }
        isStarted = false
        uv_idle_stop(handle)
    }

    /// Stops and releases the handle. Idempotent.
    public func close() {
        guard !isClosing else { return }
        isClosing = true
        isStarted = false
        closeHandle(asHandle(handle))
    }

    func handleDidClose() { callback = nil }
}
