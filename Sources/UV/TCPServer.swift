import CLibUV

/// A listening TCP socket. Loop thread only. Keeps the loop running until closed.
public final class TCPServer: HandleOwner {
    public let loop: EventLoop
    /// Heap memory freed in the close callback.
    private let handle: UnsafeMutablePointer<uv_tcp_t>
    private var onConnection: ((TCPConnection) -> Void)?
    private var onClosed: (() -> Void)?
    private var isClosing = false
    /// The bound port (the real one when 0 was asked for).
    public let localPort: Int

    /// Binds and listens on an IPv4 or IPv6 literal or a host name (resolved at once, see
    /// `resolve`); port 0 picks a free port (see `localPort`).
    /// `onConnection` runs on the loop thread with each accepted connection, not yet reading.
    public init(loop: EventLoop, host: String, port: Int, backlog: Int32 = 511,
                onConnection: @escaping (TCPConnection) -> Void) throws(UVError) {
        let target = "\(host):\(port)"
        var address = try socketAddress(host: host, port: port, operation: "uv_tcp_bind \(target)")
        self.loop = loop
        self.onConnection = onConnection
        let handle = allocateZeroed(uv_tcp_t.self)
        self.handle = handle
        let initialized = uv_tcp_init(loop.raw, handle)
        if initialized < 0 {
            handle.deallocate()
            throw UVError(code: initialized, operation: "uv_tcp_init")
        }
        // From here the handle is registered with the loop: failures close it (freeing the
        // memory in the close callback) instead of deallocating it directly.
        let bound = withSockaddr(&address) { uv_tcp_bind(handle, $0, 0) }
        if bound < 0 {
            closeHandle(asHandle(handle))
            throw UVError(code: bound, operation: "uv_tcp_bind \(target)")
        }
        let listening = uv_listen(asStream(handle), backlog) { stream, status in
            // Loop thread; the owner is alive until the close callback.
            owner(of: asHandle(stream!), as: TCPServer.self).accept(status: status)
        }
        if listening < 0 {
            closeHandle(asHandle(handle))
            // libuv defers bind's EADDRINUSE to listen; name the call the reader thinks of.
            let call = listening == UV_EADDRINUSE.rawValue ? "uv_tcp_bind" : "uv_listen"
            throw UVError(code: listening, operation: "\(call) \(target)")
        }
        localPort = tcpAddress(handle, peer: false).map(UV.port(of:)) ?? port
        retainOwner(self, in: handle)
    }

    /// Runs on the loop thread for each connection that could not be accepted (say EMFILE: out
    /// of file descriptors). The listener goes on; the owner decides what to tell whom.
    public var onAcceptError: ((UVError) -> Void)?

    private func accept(status: Int32) {
        guard !isClosing, let onConnection else { return }
        // A failed accept affects one connection, not the listener.
        guard status == 0 else {
            onAcceptError?(UVError(code: status, operation: "accept"))
            return
        }
        let connection: TCPConnection
        do {
            connection = try TCPConnection(acceptingFrom: handle, loop: loop)
        } catch {
            onAcceptError?(error)
            return
        }
        onConnection(connection)
    }

    /// Stops accepting. `completion` runs on the loop thread once the listener is released.
    /// Accepted connections are unaffected. Idempotent (a later completion is dropped).
    public func close(_ completion: (() -> Void)? = nil) {
        guard !isClosing else { return }
        isClosing = true
        onClosed = completion
        closeHandle(asHandle(handle))
    }

    func handleDidClose() {
        onConnection = nil
        onAcceptError = nil
        let completion = onClosed
        onClosed = nil
        completion?()
    }
}
