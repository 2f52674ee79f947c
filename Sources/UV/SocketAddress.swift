import CLibUV

/// Parses an IPv4 or IPv6 literal ("localhost" means 127.0.0.1) into a socket address.
/// No name resolution: the server and tests only ever bind or connect to literals.
func socketAddress(host: String, port: Int, operation: String) throws(UVError) -> sockaddr_storage {
    var storage = sockaddr_storage()
    let literal = host == "localhost" ? "127.0.0.1" : host
    guard (0...65535).contains(port) else {
        throw UVError(code: UV_EINVAL.rawValue, operation: operation, detail: "port \(port) out of range")
    }
    let status = withUnsafeMutableBytes(of: &storage) { bytes -> Int32 in
        let v4 = bytes.baseAddress!.assumingMemoryBound(to: sockaddr_in.self)
        if uv_ip4_addr(literal, Int32(port), v4) == 0 { return 0 }
        let v6 = bytes.baseAddress!.assumingMemoryBound(to: sockaddr_in6.self)
        return uv_ip6_addr(literal, Int32(port), v6)
    }
    if status < 0 {
        throw UVError(code: status, operation: operation, detail: "not an IP address: \(host)")
    }
    return storage
}

/// Runs `body` with `storage` viewed as the generic `sockaddr` libuv's calls take.
func withSockaddr<R>(_ storage: inout sockaddr_storage,
                     _ body: (UnsafePointer<sockaddr>) -> R) -> R {
    withUnsafePointer(to: &storage) { body(UnsafeRawPointer($0).assumingMemoryBound(to: sockaddr.self)) }
}

/// "127.0.0.1:4747" or "[::1]:4747"; "?" when the family is unknown.
func describe(_ storage: sockaddr_storage) -> String {
    var name = [CChar](repeating: 0, count: 64)
    func text(_ name: [CChar]) -> String {
        String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
    switch Int32(storage.ss_family) {
    case AF_INET:
        var v4 = withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in.self) }
        uv_ip4_name(&v4, &name, name.count)
        return "\(text(name)):\(UInt16(bigEndian: v4.sin_port))"
    case AF_INET6:
        var v6 = withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in6.self) }
        uv_ip6_name(&v6, &name, name.count)
        return "[\(text(name))]:\(UInt16(bigEndian: v6.sin6_port))"
    default:
        return "?"
    }
}

/// The port in a socket address, 0 if the family is unknown.
func port(of storage: sockaddr_storage) -> Int {
    withUnsafeBytes(of: storage) { bytes -> Int in
        switch Int32(storage.ss_family) {
        case AF_INET: Int(UInt16(bigEndian: bytes.load(as: sockaddr_in.self).sin_port))
        case AF_INET6: Int(UInt16(bigEndian: bytes.load(as: sockaddr_in6.self).sin6_port))
        default: 0
        }
    }
}

/// Address of either end of a TCP handle (`uv_tcp_getsockname` or `uv_tcp_getpeername`).
func tcpAddress(_ handle: UnsafeMutablePointer<uv_tcp_t>, peer: Bool) -> sockaddr_storage? {
    var storage = sockaddr_storage()
    var length = Int32(MemoryLayout<sockaddr_storage>.size)
    let status = withUnsafeMutablePointer(to: &storage) { pointer -> Int32 in
        let address = UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: sockaddr.self)
        return peer ? uv_tcp_getpeername(handle, address, &length)
                    : uv_tcp_getsockname(handle, address, &length)
    }
    return status == 0 ? storage : nil
}
