import CLibUV

/// Runs a callback once per loop turn, just before the loop blocks for I/O (`uv_prepare`):
/// the place to flush writes gathered during the turn. Loop thread only.
///
/// The hook does not by itself keep the loop running (it is unreferenced): `run()` still
/// returns once nothing else is active.
public final class LoopTurnHook: HandleOwner {
    public let loop: EventLoop
    /// Heap memory freed in the close callback.
    private let handle: UnsafeMutablePointer<uv_prepare_t>
    private var callback: (() -> Void)?
    private var isClosing = false

    public init(loop: EventLoop, _ callback: @escaping () -> Void) throws(UVError) {
        self.loop = loop
        self.callback = callback
        handle = allocateZeroed(uv_prepare_t.self)
        let status = uv_prepare_init(loop.raw, handle)
        if status < 0 {
            handle.deallocate()
            throw UVError(code: status, operation: "uv_prepare_init")
        }
        retainOwner(self, in: handle)
        uv_prepare_start(handle) { handle in
            // Loop thread; the owner is alive until the close callback.
            owner(of: asHandle(handle!), as: LoopTurnHook.self).callback?()
        }
        uv_unref(asHandle(handle))
    }

    /// Stops and releases the hook. Idempotent.
    public func close() {
        guard !isClosing else { return }
        isClosing = true
        closeHandle(asHandle(handle))
    }

    func handleDidClose() { callback = nil }
}
