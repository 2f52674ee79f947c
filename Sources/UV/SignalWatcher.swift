import CLibUV

/// Delivers a POSIX signal to a callback on the loop thread (libuv turns the signal handler
/// into a loop event, so the callback may do anything). Keeps the loop running until closed.
public final class SignalWatcher: HandleOwner {
    public let loop: EventLoop
    /// Heap memory freed in the close callback.
    private let handle: UnsafeMutablePointer<uv_signal_t>
    private var callback: ((Int32) -> Void)?
    private var isClosing = false

    public init(loop: EventLoop, signal: Int32, _ callback: @escaping (Int32) -> Void) throws(UVError) {
        self.loop = loop
        self.callback = callback
        handle = allocateZeroed(uv_signal_t.self)
        let status = uv_signal_init(loop.raw, handle)
        if status < 0 {
            handle.deallocate()
            throw UVError(code: status, operation: "uv_signal_init")
        }
        let started = uv_signal_start(handle, { handle, signal in
            // Loop thread; the owner is alive until the close callback.
            owner(of: asHandle(handle!), as: SignalWatcher.self).callback?(signal)
        }, signal)
        if started < 0 {
            // Registered with the loop but owning nothing: close frees the memory only.
            closeHandle(asHandle(handle))
            throw UVError(code: started, operation: "uv_signal_start \(signal)")
        }
        retainOwner(self, in: handle)
    }

    /// Stops watching and releases the handle. Idempotent.
    public func close() {
        guard !isClosing else { return }
        isClosing = true
        closeHandle(asHandle(handle))
    }

    func handleDidClose() { callback = nil }
}
