import CLibUV
import Glibc

/// One TCP connection, accepted by a `TCPServer` or made with `connect`. Loop thread only.
///
/// While open, libuv holds a +1 reference to the connection, so it lives until its close
/// callback even if nobody else keeps it; after that it drops its callbacks (breaking cycles
/// through closures that capture it) and every method is a no-op.
///
/// libuv writes without `MSG_NOSIGNAL`: a process using connections must ignore SIGPIPE
/// (`POSIXSupport.ignoreSIGPIPE`, as `bq serve` and `bq bench` do), or a peer that hangs up
/// mid-write kills it.
public final class TCPConnection: HandleOwner {
    private enum State {
        /// Reading and writing allowed.
        case open
        /// `closeAfterFlush` (or the peer's EOF) started: no new writes; once flushed, the FIN,
        /// then (lingering) what the peer still sends is dropped until it closes its side.
        case flushing
        /// `uv_close` called; waiting for the close callback.
        case closing
        /// The close callback ran; `handle` memory is freed.
        case closed
    }

    public let loop: EventLoop
    /// Heap memory freed in the close callback; never touched once `state == .closed`.
    private let handle: UnsafeMutablePointer<uv_tcp_t>
    private var state = State.open
    private var isReading = false
    private var closeError: UVError?
    /// While flushing: closes the connection when the peer has taken nothing for
    /// `flushDeadline` ms; once the FIN is sent, when it has not closed its side in `linger` ms.
    private var closeTimer: LoopTimer?
    private var flushDeadline = TCPConnection.flushDeadlineMilliseconds
    private var linger = TCPConnection.lingerMilliseconds
    /// `closeAfterFlush` started: what the peer sends is read and dropped (see `closeAfterFlush`).
    private var isDiscardingInput = false
    /// The FIN is sent (the shutdown completed).
    private var sentFIN = false
    private var peerSentEOF = false

    /// Bytes received, copied out of the loop's shared read buffer. Loop thread.
    public var onRead: (([UInt8]) -> Void)?
    /// Runs exactly once, from the close callback, after EOF, an error or `close()`.
    /// The error is nil for a clean EOF or a requested close. On EOF the connection first
    /// finishes its queued writes (as `closeAfterFlush`), then closes.
    public var onClose: ((UVError?) -> Void)?
    /// Runs when `queuedWriteBytes` returns to 0 after a write completes successfully. A write
    /// the kernel takes whole at once is never queued, and so never calls this.
    public var onDrain: (() -> Void)?
    /// When set, the peer's EOF (it will send nothing more) is reported here and the
    /// connection stays open for writing: an owner that still owes replies closes it
    /// itself, with `closeAfterFlush`, once they are written. Loop thread.
    public var onEOF: (() -> Void)?
    /// Bytes handed to `write` whose write callback has not run yet.
    public private(set) var queuedWriteBytes = 0
    /// The peer's address, e.g. "127.0.0.1:53122" or "[::1]:53122".
    public private(set) var peerDescription = "?"
    /// The network the peer speaks from (its IPv4 address, a global IPv6 address's /64, a local
    /// IPv6 address), for limits that must hold however many addresses one party uses; "?" when
    /// unknown.
    public private(set) var peerNetwork = "?"
    /// The peer is on this machine (a loopback address).
    public private(set) var peerIsLoopback = false

    /// True until `close()`, `closeAfterFlush()`, EOF or an error.
    public var isOpen: Bool { state == .open }
    /// Closed or closing at once: what is queued is being given up, not sent.
    public var isGivingUpWrites: Bool { state == .closing || state == .closed }

    private init(loop: EventLoop) throws(UVError) {
        self.loop = loop
        handle = allocateZeroed(uv_tcp_t.self)
        let status = uv_tcp_init(loop.raw, handle)
        if status < 0 {
            handle.deallocate()
            throw UVError(code: status, operation: "uv_tcp_init")
        }
        retainOwner(self, in: handle)
    }

    /// Accepts the pending connection of a listening handle (inside its connection callback).
    convenience init(acceptingFrom server: UnsafeMutablePointer<uv_tcp_t>, loop: EventLoop) throws(UVError) {
        try self.init(loop: loop)
        let status = uv_accept(asStream(server), asStream(handle))
        if status < 0 {
            closeNow(error: nil)
            throw UVError(code: status, operation: "uv_accept")
        }
        rememberPeer()
    }

    private func rememberPeer() {
        guard let address = tcpAddress(handle, peer: true) else { return }
        peerDescription = describe(address)
        peerNetwork = networkName(address)
        peerIsLoopback = isLoopback(address)
    }

    // MARK: Reading

    /// Delivers received bytes to `onRead` until `stopReading()` or close. After the peer's end
    /// of file there is nothing more to read, and this does nothing: libuv would start reading
    /// again and report the end again, on every loop turn.
    public func startReading() {
        guard state == .open, !isReading, !peerSentEOF else { return }
        readIntoLoopBuffer()
    }

    private func readIntoLoopBuffer() {
        let status = uv_read_start(asStream(handle), { handle, _, buffer in
            // Loop thread. The buffer belongs to the loop and is reused for every read; the
            // read callback copies out of it before libuv asks for it again.
            let connection = owner(of: handle!, as: TCPConnection.self)
            buffer!.pointee = uv_buf_init(connection.loop.readBuffer, UInt32(EventLoop.readBufferSize))
        }, { stream, count, buffer in
            // Loop thread; `buffer` is the loop's read buffer handed out just above.
            owner(of: asHandle(stream!), as: TCPConnection.self).didRead(count, buffer!.pointee)
        })
        if status < 0 {
            closeNow(error: UVError(code: status, operation: "uv_read_start"))
        } else {
            isReading = true
        }
    }

    /// Stops delivering bytes; the kernel buffers what arrives (and then the peer blocks). A
    /// connection being closed reads on (dropping what it reads) whatever its owner says.
    public func stopReading() {
        guard isReading, state == .open else { return }
        isReading = false
        uv_read_stop(asStream(handle))
    }

    private func didRead(_ count: Int, _ buffer: uv_buf_t) {
        if isDiscardingInput {
            if count == Int(UV_EOF.rawValue) {
                // What lingering waits for; before the FIN, the flush goes on (a half-close).
                peerSentEOF = true
                isReading = false
                if sentFIN { closeNow(error: nil) }
            } else if count < 0 {
                // A reset: the peer will read nothing more either.
                closeNow(error: nil)
            }
            return
        }
        if count > 0 {
            let bytes = [UInt8](UnsafeRawBufferPointer(start: buffer.base, count: count))
            onRead?(bytes)
        } else if count == Int(UV_EOF.rawValue) {
            // The peer will send nothing more; deliver what we still owe it, then hang up.
            peerSentEOF = true
            stopReading()
            if let onEOF {
                onEOF()
            } else if queuedWriteBytes == 0 {
                closeNow(error: nil)
            } else {
                closeAfterFlush()
            }
        } else if count < 0 {
            closeNow(error: UVError(code: Int32(count), operation: "read from \(peerDescription)"))
        }
        // count == 0 means "nothing this time" (EAGAIN): not an event.
    }

    // MARK: Writing

    /// Queues a copy of `bytes`. `completion` (loop thread) gets nil once the kernel has all of
    /// them, or the error (`isCancelled` when the connection closed first). After close or
    /// `closeAfterFlush` this is a no-op and `completion` never runs.
    public func write(_ bytes: [UInt8], completion: ((UVError?) -> Void)? = nil) {
        write(gathering: CollectionOfOne(bytes), completion: completion)
    }

    /// Queues several chunks as one `uv_write` (one copy, one syscall when the socket is
    /// writable): the way to send everything a loop turn produced for this connection.
    public func write(gathering chunks: some Collection<[UInt8]>, completion: ((UVError?) -> Void)? = nil) {
        guard state == .open else { return }
        var total = chunks.reduce(0) { $0 + $1.count }
        // The common case (one chunk, nothing queued ahead, nobody waiting for a callback) goes
        // straight to the kernel: no copy, no request, no callback. What it does not take is
        // queued below as usual.
        var taken = 0
        if queuedWriteBytes == 0, completion == nil, chunks.count == 1, let only = chunks.first {
            taken = writeNow(only)
            if taken == total { return }
        }
        total -= taken
        let pending = PendingWrite(connection: self, byteCount: total, completion: completion)
        var offset = 0
        for chunk in chunks {
            chunk.withUnsafeBytes { source in
                // `taken` is non-zero only for a single chunk: its tail is what is left to send.
                let rest = UnsafeRawBufferPointer(rebasing: source[taken...])
                guard let base = rest.baseAddress else { return }
                (pending.bytes + offset).copyMemory(from: base, byteCount: rest.count)
                offset += rest.count
            }
        }
        submit(pending)
    }

    /// `uv_try_write`: how many bytes the kernel took at once (0 when it would block, or on an
    /// error, which the queued write that follows then reports). libuv reads the buffer only
    /// during the call, so the array's storage is borrowed just for it.
    private func writeNow(_ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBufferPointer { source in
            guard let base = source.baseAddress else { return 0 }
            var buffer = uv_buf_init(UnsafeMutableRawPointer(mutating: base).assumingMemoryBound(to: CChar.self),
                                     UInt32(source.count))
            let written = uv_try_write(asStream(handle), &buffer, 1)
            return written > 0 ? Int(written) : 0
        }
    }

    private func submit(_ pending: PendingWrite) {
        // The request carries a +1 reference to `pending` (and so to its bytes and to this
        // connection) until the write callback, which libuv always calls, with ECANCELED if the
        // handle closes first.
        pending.request.pointee.data = Unmanaged.passRetained(pending).toOpaque()
        var buffer = uv_buf_init(pending.bytes.assumingMemoryBound(to: CChar.self), UInt32(pending.byteCount))
        let status = uv_write(pending.request, asStream(handle), &buffer, 1) { request, status in
            // Loop thread: libuv is done with the request and the bytes.
            let pending = Unmanaged<PendingWrite>.fromOpaque(request!.pointee.data).takeRetainedValue()
            pending.connection.writeFinished(pending, status: status)
        }
        if status < 0 {
            // libuv did not take the request: no callback will come, so undo the retain here.
            Unmanaged<PendingWrite>.fromOpaque(pending.request.pointee.data).release()
            let error = UVError(code: status, operation: "uv_write to \(peerDescription)")
            // As `write` promises: its completion hears of the failure.
            pending.completion?(error)
            closeNow(error: error)
            return
        }
        queuedWriteBytes += pending.byteCount
        loop.queuedWriteBytes += pending.byteCount
    }

    private func writeFinished(_ pending: PendingWrite, status: Int32) {
        queuedWriteBytes -= pending.byteCount
        loop.queuedWriteBytes -= pending.byteCount
        let error = status < 0 ? UVError(code: status, operation: "uv_write to \(peerDescription)") : nil
        pending.completion?(error)
        if let error, !error.isCancelled {
            closeNow(error: error)
        } else if error == nil, queuedWriteBytes == 0, state == .open {
            onDrain?()
        } else if error == nil, state == .flushing, !sentFIN {
            // The peer is taking what it is owed: the deadline is for a peer that stopped.
            startCloseTimer(after: flushDeadline, timedOut: true)
        }
    }

    // MARK: Closing

    /// Closes at once; pending writes complete with ECANCELED. Idempotent.
    public func close() { closeNow(error: nil) }

    /// How long, by default, `closeAfterFlush` waits for a peer that takes none of what is queued.
    public static let flushDeadlineMilliseconds: UInt64 = 10_000
    /// How long, by default, a connection whose FIN is sent waits for the peer to close its side.
    public static let lingerMilliseconds: UInt64 = 2_000

    /// Sends everything already queued, then the FIN (`uv_shutdown`), then waits for the peer
    /// to close its side, then closes. Writes after this are ignored, and nothing more reaches
    /// `onRead`: what the peer sends from now on is read and dropped. Idempotent.
    ///
    /// Why read: closing a socket with bytes from the peer still unread makes the kernel send a
    /// reset, and a reset throws away what is still on its way to the peer, the replies and the
    /// goodbye this flush is for. Reading also keeps a peer that writes everything before it
    /// reads from blocking, and so from never taking what it is owed.
    ///
    /// Bounded twice: a peer that takes none of the queued bytes for `deadlineMilliseconds` is
    /// closed (`onClose` gets ETIMEDOUT), or the connection, its queue and its owner's
    /// bookkeeping would stay forever (libuv shuts a stream down only once its writes are done);
    /// a peer that has not closed its side `lingerMilliseconds` after the FIN is closed too.
    public func closeAfterFlush(deadlineMilliseconds: UInt64 = TCPConnection.flushDeadlineMilliseconds,
                                lingerMilliseconds: UInt64 = TCPConnection.lingerMilliseconds) {
        guard state == .open else { return }
        state = .flushing
        flushDeadline = deadlineMilliseconds
        linger = lingerMilliseconds
        if !isReading, !peerSentEOF { readIntoLoopBuffer() }
        guard state == .flushing else { return }
        isDiscardingInput = true
        if queuedWriteBytes > 0 { startCloseTimer(after: flushDeadline, timedOut: true) }
        let request = allocateZeroed(uv_shutdown_t.self)
        let status = uv_shutdown(request, asStream(handle)) { request, status in
            // Loop thread. The stream's owner is alive: libuv runs a pending shutdown callback
            // (ECANCELED) before the handle's close callback. The request is ours to free.
            let connection = owner(of: asHandle(request!.pointee.handle), as: TCPConnection.self)
            request!.deallocate()
            if status < 0 {
                let error = status != UV_ECANCELED.rawValue ? UVError(code: status, operation: "uv_shutdown") : nil
                connection.closeNow(error: error)
            } else {
                connection.finFlushed()
            }
        }
        if status < 0 {
            request.deallocate()
            closeNow(error: UVError(code: status, operation: "uv_shutdown"))
        }
    }

    /// Everything owed and the FIN are with the kernel: now the peer's end of file is awaited.
    private func finFlushed() {
        guard state == .flushing else { return }
        sentFIN = true
        if peerSentEOF { return closeNow(error: nil) }
        startCloseTimer(after: linger, timedOut: false)
    }

    /// (Re)starts the one timer a closing connection has.
    private func startCloseTimer(after milliseconds: UInt64, timedOut: Bool) {
        if closeTimer == nil { closeTimer = try? LoopTimer(loop: loop) }
        guard let closeTimer else { return closeNow(error: nil) }
        closeTimer.start(afterMilliseconds: milliseconds) { [weak self] in
            guard let self else { return }
            closeNow(error: timedOut ? UVError(code: UV_ETIMEDOUT.rawValue, operation: "flushing to \(peerDescription)") : nil)
        }
    }

    private func closeNow(error: UVError?) {
        guard state == .open || state == .flushing else { return }
        closeTimer?.close()
        closeTimer = nil
        state = .closing
        isReading = false
        closeError = error
        closeHandle(asHandle(handle))
    }

    func handleDidClose() {
        state = .closed
        let callback = onClose
        onClose = nil
        onRead = nil
        onDrain = nil
        onEOF = nil
        callback?(closeError)
    }

    // MARK: Options and client side

    /// Has the kernel probe a peer after `idleSeconds` without traffic, then every
    /// `intervalSeconds`, and give up after `probes` unanswered ones, so that a peer that went
    /// away without a word (a machine switched off, a network gone) is found and its connection
    /// ends with an error, instead of holding its place for ever. libuv sets only the idle time;
    /// Linux's own interval and count (75 s, 9 probes) would take another 11 minutes.
    /// A live peer's kernel answers the probes whether or not its program reads.
    public func setKeepAlive(idleSeconds: UInt32, intervalSeconds: Int32 = 10, probes: Int32 = 6) {
        guard state == .open || state == .flushing else { return }
        uv_tcp_keepalive(handle, 1, idleSeconds)
        guard let fd = fileDescriptor else { return }
        var interval = intervalSeconds
        var count = probes
        let size = socklen_t(MemoryLayout<Int32>.size)
        // Best effort: a kernel that refuses keeps its own timing, which still finds the peer.
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_KEEPINTVL, &interval, size)
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_KEEPCNT, &count, size)
    }

    /// The kernel's keepalive settings for this socket (idle and interval in seconds, probes),
    /// as `setKeepAlive` left them; nil when keepalive is off or the socket is gone.
    public var keepAlive: (idleSeconds: Int32, intervalSeconds: Int32, probes: Int32)? {
        guard state == .open || state == .flushing, let fd = fileDescriptor else { return nil }
        func option(_ level: Int32, _ name: Int32) -> Int32? {
            var value: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            return getsockopt(fd, level, name, &value, &size) == 0 ? value : nil
        }
        guard option(SOL_SOCKET, SO_KEEPALIVE) == 1, let idle = option(Int32(IPPROTO_TCP), TCP_KEEPIDLE),
              let interval = option(Int32(IPPROTO_TCP), TCP_KEEPINTVL), let probes = option(Int32(IPPROTO_TCP), TCP_KEEPCNT)
        else { return nil }
        return (idle, interval, probes)
    }

    /// The socket under the handle; owned by libuv, which closes it with the handle.
    private var fileDescriptor: Int32? {
        var fd = uv_os_fd_t()
        return uv_fileno(asHandle(handle), &fd) == 0 ? fd : nil
    }

    /// Disables (true) or enables Nagle's algorithm.
    public func setNoDelay(_ on: Bool) {
        guard state == .open || state == .flushing else { return }
        uv_tcp_nodelay(handle, on ? 1 : 0)
    }

    /// Connects to an IPv4 or IPv6 literal or a host name; a name is resolved first, blocking this
    /// thread (see `resolve`). `completion` runs on the loop thread; for an address that cannot be
    /// parsed or resolved, before `connect` returns. The connection is not reading yet.
    public static func connect(loop: EventLoop, host: String, port: Int,
                               _ completion: @escaping (Result<TCPConnection, UVError>) -> Void) {
        let operation = "uv_tcp_connect \(host):\(port)"
        let connection: TCPConnection
        var address: sockaddr_storage
        do {
            address = try socketAddress(host: host, port: port, operation: operation)
            connection = try TCPConnection(loop: loop)
        } catch {
            completion(.failure(error))
            return
        }
        let attempt = ConnectAttempt(completion: completion, operation: operation)
        // Freed in the connect callback, which libuv always calls once the request is accepted
        // (with ECANCELED if the handle closes first); it holds a +1 on `attempt`.
        let request = allocateZeroed(uv_connect_t.self)
        request.pointee.data = Unmanaged.passRetained(attempt).toOpaque()
        let status = withSockaddr(&address) { sockaddr in
            uv_tcp_connect(request, connection.handle, sockaddr) { request, status in
                // Loop thread. The connection is alive: its handle still holds its owner.
                let attempt = Unmanaged<ConnectAttempt>.fromOpaque(request!.pointee.data).takeRetainedValue()
                let connection = owner(of: asHandle(request!.pointee.handle), as: TCPConnection.self)
                request!.deallocate()
                attempt.finish(connection, status: status)
            }
        }
        if status < 0 {
            Unmanaged<ConnectAttempt>.fromOpaque(request.pointee.data).release()
            request.deallocate()
            connection.close()
            completion(.failure(UVError(code: status, operation: operation)))
        }
    }

    /// The state of one `connect` call between the request and its callback.
    private final class ConnectAttempt {
        let completion: (Result<TCPConnection, UVError>) -> Void
        let operation: String

        init(completion: @escaping (Result<TCPConnection, UVError>) -> Void, operation: String) {
            self.completion = completion
            self.operation = operation
        }

        func finish(_ connection: TCPConnection, status: Int32) {
            if status < 0 {
                connection.close()
                completion(.failure(UVError(code: status, operation: operation)))
            } else {
                connection.rememberPeer()
                completion(.success(connection))
            }
        }
    }
}

/// One `uv_write` in flight: the request and the copy of the bytes it sends. Both are owned
/// here and freed at deinit, which happens after the write callback released the request's
/// +1 reference. Loop thread only.
final class PendingWrite {
    let request: UnsafeMutablePointer<uv_write_t> = allocateZeroed(uv_write_t.self)
    let bytes: UnsafeMutableRawPointer
    let byteCount: Int
    let connection: TCPConnection
    let completion: ((UVError?) -> Void)?

    init(connection: TCPConnection, byteCount: Int, completion: ((UVError?) -> Void)?) {
        self.connection = connection
        self.byteCount = byteCount
        self.completion = completion
        bytes = .allocate(byteCount: max(byteCount, 1), alignment: 1)
    }

    deinit {
        request.deallocate()
        bytes.deallocate()
    }
}
