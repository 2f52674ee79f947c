import Foundation
import Glibc

/// Why a `BlockingLineSocket` call failed.
public struct SocketError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// No complete line (or no connection) before the deadline.
        case timedOut
        /// The socket was closed by `close()`.
        case closed
        /// The host is neither an IPv4 or IPv6 literal nor a name the resolver knows.
        case badAddress
        /// A system call failed with this errno.
        case system(errno: Int32)
        /// The peer sent more than the socket's `maxLineBytes` without ending the line.
        case lineTooLong
    }

    public let kind: Kind
    /// The call that failed, e.g. `connect 127.0.0.1:4747`.
    public let operation: String
    /// What went wrong when the kind alone does not say, e.g. why a host did not resolve.
    public let detail: String

    public init(_ kind: Kind, operation: String, detail: String = "") {
        self.kind = kind
        self.operation = operation
        self.detail = detail
    }

    public var description: String {
        switch kind {
        case .timedOut: "\(operation): timed out"
        case .closed: "\(operation): socket is closed"
        case .badAddress: "\(operation): \(detail.isEmpty ? "not an IP address or a host name that resolves" : detail)"
        case .system(let code): "\(operation): \(systemErrorText(code)) (errno \(code))"
        case .lineTooLong: "\(operation): \(detail)"
        }
    }

    /// Reads errno at once, before anything else can overwrite it.
    static func fromErrno(_ operation: String) -> SocketError {
        SocketError(.system(errno: errno), operation: operation)
    }
}

/// A small blocking TCP line client over POSIX sockets, with no event loop: for tests, tools and
/// the client library.
///
/// Threads: one thread may read (`readLine`) while another writes (`send`, `sendLine`,
/// `shutdownWrite`); the read buffer belongs to the reader alone. `close()` must not race with
/// a call in progress on another thread (the descriptor number could be reused): to wake a
/// blocked reader, call `shutdownWrite()` and let the peer hang up, or `shutdownBoth()`, or
/// close from the reader.
public final class BlockingLineSocket: @unchecked Sendable {
    private let descriptor: Int32
    /// Guards `closed`, the only state both threads touch.
    private let lock = NSLock()
    private var closed = false
    /// The longest line read: a peer that never ends its line must not take all the memory.
    /// (The server's longest lines, whole views, are a few hundred kilobytes.)
    public let maxLineBytes: Int
    /// Reader-thread state: received bytes not yet returned, from `start`.
    private var buffer: [UInt8] = []
    /// Reader-thread state: what one `recv` reads into, made once.
    private var chunk = [UInt8](repeating: 0, count: 65536)
    private var start = 0
    /// Where the newline search resumes, so a long line is scanned once, not once per read.
    private var scanned = 0
    private var sawEOF = false
    private let peer: String

    /// Connects to an IPv4 or IPv6 literal or a host name ("localhost" means 127.0.0.1) within the
    /// timeout; a name is resolved first, which the timeout does not bound.
    /// `receiveBufferBytes` sets SO_RCVBUF before connecting (small values make a slow reader
    /// fill up fast in tests).
    public init(host: String, port: Int, connectTimeoutMilliseconds: Int = 5000,
                receiveBufferBytes: Int? = nil, maxLineBytes: Int = 64 << 20) throws(SocketError) {
        peer = "\(host):\(port)"
        self.maxLineBytes = maxLineBytes
        // A host name is resolved here, on the caller's thread, like every other step of this socket.
        var storage: sockaddr_storage
        do {
            storage = try socketAddress(host: host, port: port)
        } catch {
            throw SocketError(.badAddress, operation: "connect \(peer)", detail: error.description)
        }
        let length = socklen_t(Int32(storage.ss_family) == AF_INET ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size)
        #if canImport(Glibc)
        let streamType = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        #else
        let streamType = SOCK_STREAM
        #endif
        let fd = socket(Int32(storage.ss_family), streamType, 0)
        if fd < 0 { throw SocketError.fromErrno("socket") }
        do throws(SocketError) {
            if var size = receiveBufferBytes.map(Int32.init(clamping:)) {
                if setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) < 0 {
                    throw SocketError.fromErrno("setsockopt SO_RCVBUF")
                }
            }
            try Self.connect(fd, &storage, length, timeoutMilliseconds: connectTimeoutMilliseconds,
                             operation: "connect \(peer)")
            var on: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        } catch {
            Glibc.close(fd)
            throw error
        }
        descriptor = fd
    }

    /// A non-blocking connect bounded by `poll`, then back to blocking mode.
    private static func connect(_ fd: Int32, _ storage: inout sockaddr_storage, _ length: socklen_t,
                                timeoutMilliseconds: Int, operation: String) throws(SocketError) {
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        let status = withUnsafePointer(to: &storage) {
            Glibc.connect(fd, UnsafeRawPointer($0).assumingMemoryBound(to: sockaddr.self), length)
        }
        if status < 0 {
            guard errno == EINPROGRESS else { throw SocketError.fromErrno(operation) }
            // A signal (another thread's test sends SIGUSR1, say) interrupts poll: wait on for
            // the time that is left.
            let deadline = monotonicMilliseconds() + timeoutMilliseconds
            var ready: Int32
            repeat {
                var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                ready = poll(&poller, 1, Int32(clamping: max(0, deadline - monotonicMilliseconds())))
            } while ready < 0 && errno == EINTR
            if ready < 0 { throw SocketError.fromErrno(operation) }
            if ready == 0 { throw SocketError(.timedOut, operation: operation) }
            var failure: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &failure, &size)
            if failure != 0 { throw SocketError(.system(errno: failure), operation: operation) }
        }
        _ = fcntl(fd, F_SETFL, flags)
    }

    deinit { close() }

    /// True once `close()` ran.
    public var isClosed: Bool {
        lock.lock()
        defer { lock.unlock() }
        return closed
    }

    private func checkOpen(_ operation: String) throws(SocketError) {
        if isClosed { throw SocketError(.closed, operation: operation) }
    }

    // MARK: Writing (writer thread)

    /// Sends the whole buffer, looping over partial sends. Never raises SIGPIPE.
    public func send(_ bytes: [UInt8]) throws(SocketError) {
        try checkOpen("send to \(peer)")
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { raw in
                Glibc.send(descriptor, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 {
                if errno == EINTR { continue }
                throw SocketError.fromErrno("send to \(peer)")
            }
            offset += sent
        }
    }

    /// Sends `line` and a "\n".
    public func sendLine(_ line: String) throws(SocketError) {
        try send(Array(line.utf8) + [0x0A])
    }

    /// Sends FIN: the peer reads EOF after what was sent; reading still works.
    public func shutdownWrite() {
        shutdown(Int32(SHUT_WR))
    }

    /// Ends both directions without closing the descriptor: a read blocked on another thread
    /// returns at once as if the peer had hung up, whatever the peer does. (For a peer that may
    /// never answer, where `shutdownWrite` would wait on it.)
    public func shutdownBoth() {
        shutdown(Int32(SHUT_RDWR))
    }

    /// Under the lock that `close` takes, so that another thread's `close` cannot hand the
    /// descriptor's number to a new file between the check and the call. `shutdown` does not
    /// block, and it wakes a `send` or `recv` blocked on the socket on another thread.
    private func shutdown(_ how: Int32) {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { return }
        Glibc.shutdown(descriptor, how)
    }

    /// Closes the socket. Idempotent. See the type's note on threads.
    public func close() {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { return }
        closed = true
        Glibc.close(descriptor)
    }

    // MARK: Reading (reader thread)

    /// The next line, without its "\n" and a "\r" before it, of at most `maxLineBytes`.
    /// At EOF returns the unterminated rest if there is any, then nil. Throws `.timedOut` when
    /// no complete line arrived within the timeout (bytes received so far are kept for later).
    public func readLine(timeoutMilliseconds: Int) throws(SocketError) -> [UInt8]? {
        let deadline = Self.monotonicMilliseconds() + timeoutMilliseconds
        while true {
            if let line = takeLine() { return line }
            if sawEOF {
                guard start < buffer.count else { return nil }
                let rest = Array(buffer[start...])
                buffer.removeAll()
                start = 0
                scanned = 0
                return rest
            }
            try receive(until: deadline)
        }
    }

    /// Whether a whole line has already arrived, so the next `readLine` returns without waiting
    /// (EOF's unterminated rest is not counted): the lines of a burst arrive together, and a
    /// reader may act once on the last of them rather than on each.
    public var hasCompleteLine: Bool {
        buffer.withUnsafeBytes { raw in
            scanned < raw.count && memchr(raw.baseAddress! + scanned, 0x0A, raw.count - scanned) != nil
        }
    }

    /// Cuts the first complete line out of the buffer, if there is one.
    private func takeLine() -> [UInt8]? {
        let newline: Int? = buffer.withUnsafeBytes { raw in
            guard scanned < raw.count,
                  let found = memchr(raw.baseAddress! + scanned, 0x0A, raw.count - scanned) else { return nil }
            return raw.baseAddress!.distance(to: UnsafeRawPointer(found))
        }
        guard let newline else {
            scanned = buffer.count
            return nil
        }
        var end = newline
        if end > start, buffer[end - 1] == 0x0D { end -= 1 }
        let line = Array(buffer[start..<end])
        start = newline + 1
        scanned = start
        // Compact once the consumed prefix dominates, so the buffer never grows without bound.
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
            scanned = 0
        } else if start > 65536, start * 2 > buffer.count {
            buffer.removeFirst(start)
            scanned -= start
            start = 0
        }
        return line
    }

    /// Waits for bytes until the deadline and appends them; sets `sawEOF` on the peer's FIN.
    private func receive(until deadline: Int) throws(SocketError) {
        try checkOpen("read from \(peer)")
        while true {
            let remaining = deadline - Self.monotonicMilliseconds()
            if remaining <= 0 { throw SocketError(.timedOut, operation: "read from \(peer)") }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(clamping: remaining))
            if ready < 0 {
                if errno == EINTR { continue }
                throw SocketError.fromErrno("poll \(peer)")
            }
            if ready == 0 { continue }
            if buffer.count - start > maxLineBytes {
                throw SocketError(.lineTooLong, operation: "read from \(peer)", detail: "a line of more than \(maxLineBytes) bytes")
            }
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress!, $0.count, 0) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw SocketError.fromErrno("read from \(peer)")
            }
            if count == 0 {
                sawEOF = true
            } else {
                buffer.append(contentsOf: chunk[..<count])
            }
            return
        }
    }

    private static func monotonicMilliseconds() -> Int {
        Int(monotonicNanoseconds() / 1_000_000)
    }
}
