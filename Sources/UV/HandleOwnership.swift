import CLibUV

// Ownership rule for every libuv handle in this module:
// - The handle struct is heap-allocated by its Swift owner (libuv keeps pointers to it in the
//   loop's queues, so it must never move) and freed only by the close callback that
//   `closeHandle` below gives libuv.
// - `handle->data` holds a +1 retained reference to the owner, taken once the handle is fully
//   set up, so the owner outlives every callback libuv can still make. The close callback
//   releases it. A handle whose set-up failed has `data == nil` and is only freed.
// - Everything here runs on the loop's thread.

/// A Swift object that owns one libuv handle and hears when libuv has finished closing it.
protocol HandleOwner: AnyObject {
    /// Runs on the loop thread inside the close callback, before the handle memory is freed.
    func handleDidClose()
}

/// Views any libuv handle struct as the common `uv_handle_t` prefix it starts with.
@inline(__always)
func asHandle<H>(_ handle: UnsafeMutablePointer<H>) -> UnsafeMutablePointer<uv_handle_t> {
    UnsafeMutablePointer<uv_handle_t>(OpaquePointer(handle))
}

/// Views a TCP handle as the stream it also is.
@inline(__always)
func asStream(_ handle: UnsafeMutablePointer<uv_tcp_t>) -> UnsafeMutablePointer<uv_stream_t> {
    UnsafeMutablePointer<uv_stream_t>(OpaquePointer(handle))
}

/// Stores the +1 reference to `owner` in the handle; released by `closeHandle`'s close callback.
func retainOwner<H>(_ owner: some HandleOwner, in handle: UnsafeMutablePointer<H>) {
    asHandle(handle).pointee.data = Unmanaged.passRetained(owner as AnyObject).toOpaque()
}

/// The owner stored in `handle->data`, borrowed (no retain change) for the length of a callback.
@inline(__always)
func owner<T: AnyObject>(of handle: UnsafeMutablePointer<uv_handle_t>, as type: T.Type) -> T {
    // Loop thread. The +1 taken in `retainOwner` keeps the object alive until the close callback.
    // Every handle's callbacks name the class that stored itself, so no dynamic cast is needed.
    Unmanaged<T>.fromOpaque(handle.pointee.data!).takeUnretainedValue()
}

/// Starts closing a handle unless it is already closing. libuv calls the close callback on a
/// later loop turn; until then the handle memory and the owner both stay alive.
func closeHandle(_ handle: UnsafeMutablePointer<uv_handle_t>) {
    guard uv_is_closing(handle) == 0 else { return }
    uv_close(handle) { handle in
        // Loop thread, once per handle: the last moment libuv touches this memory.
        guard let handle else { return }
        if let data = handle.pointee.data {
            handle.pointee.data = nil
            let owner = Unmanaged<AnyObject>.fromOpaque(data).takeRetainedValue()
            (owner as? any HandleOwner)?.handleDidClose()
        }
        // Allocated as some concrete `uv_*_t` by its owner; raw deallocation needs no type.
        UnsafeMutableRawPointer(handle).deallocate()
    }
}

/// Allocates a zero-filled libuv struct (so `data` starts as nil) that never moves. The caller
/// owns it until libuv takes it over; handles are freed only by `closeHandle`'s callback.
func allocateZeroed<H>(_ type: H.Type) -> UnsafeMutablePointer<H> {
    let size = MemoryLayout<H>.size
    let raw = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: MemoryLayout<H>.alignment)
    raw.initializeMemory(as: UInt8.self, repeating: 0, count: size)
    return raw.bindMemory(to: H.self, capacity: 1)
}
