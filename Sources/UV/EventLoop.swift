import CLibUV
import Glibc

/// One libuv loop. Not Sendable: create it, run it and use every handle on it from one thread.
///
/// Every handle keeps its loop alive; the loop memory is freed at deinit only if `close()`
/// succeeded (freeing a loop with open handles would leave libuv pointing at freed memory).
public final class EventLoop {
    /// Owned by this object, allocated in `init`, freed in `deinit` after a successful close.
    let raw: UnsafeMutablePointer<uv_loop_t>
    /// One read buffer for every connection on this loop. Safe to share because the loop is
    /// single-threaded and each read callback copies the bytes out before the next read starts.
    let readBuffer: UnsafeMutablePointer<CChar>
    private var isClosed = false
    /// Bytes handed to `write` on any of this loop's TCP connections whose write callback has
    /// not run yet: what the loop holds for peers that have not taken it.
    public internal(set) var queuedWriteBytes = 0

    /// Bytes offered to libuv for each read.
    static let readBufferSize = 64 * 1024

    public init() throws(UVError) {
        let loop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
        let status = uv_loop_init(loop)
        if status < 0 {
            loop.deallocate()
            throw UVError(code: status, operation: "uv_loop_init")
        }
        raw = loop
        readBuffer = .allocate(capacity: Self.readBufferSize)
    }

    deinit {
        // A loop that was never closed may still be referenced by handles' memory; leaking it is
        // the only safe choice then. A loop with no handles can be closed here.
        if !isClosed && uv_loop_close(raw) == 0 { isClosed = true }
        if isClosed { raw.deallocate() }
        readBuffer.deallocate()
    }

    /// Runs until `stop()` is called or no active, referenced handle or request remains.
    /// After `close()`, this and the other run methods do nothing.
    public func run() { if !isClosed { uv_run(raw, UV_RUN_DEFAULT) } }

    /// Runs one turn without blocking.
    public func runNoWait() { if !isClosed { uv_run(raw, UV_RUN_NOWAIT) } }

    /// Makes the current (or next) `run()` return at the end of its turn.
    public func stop() { if !isClosed { uv_stop(raw) } }

    /// Handles still known to the loop, including ones whose close callback has not run yet.
    public var openHandleCount: Int {
        guard !isClosed else { return 0 }
        var count = 0
        // The walk callback runs synchronously on this thread; `arg` points at `count`.
        uv_walk(raw, { _, arg in arg!.assumingMemoryBound(to: Int.self).pointee += 1 }, &count)
        return count
    }

    /// Names of the handle types still open, e.g. `["tcp", "timer"]`.
    public var openHandleTypes: [String] {
        var names: [String] = []
        guard !isClosed else { return names }
        withUnsafeMutablePointer(to: &names) { names in
            uv_walk(raw, { handle, arg in
                // Synchronous, this thread; `arg` points at `names`.
                let name = String(cString: uv_handle_type_name(uv_handle_get_type(handle)))
                arg!.assumingMemoryBound(to: [String].self).pointee.append(name)
            }, names)
        }
        return names
    }

    /// Releases the loop's resources. Throws `EBUSY`, naming the open handle types, while any
    /// handle is open; close them and run the loop until their close callbacks have run first.
    public func close() throws(UVError) {
        guard !isClosed else { return }
        let status = uv_loop_close(raw)
        if status == UV_EBUSY.rawValue {
            throw UVError(code: status, operation: "uv_loop_close",
                          detail: "open handles: " + openHandleTypes.joined(separator: ", "))
        }
        try check(status, "uv_loop_close")
        isClosed = true
    }

    /// The loop's cached clock, in milliseconds, updated at the start of each turn.
    public var nowMilliseconds: UInt64 { isClosed ? 0 : uv_now(raw) }
}

