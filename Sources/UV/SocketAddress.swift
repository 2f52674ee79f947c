import CLibUV
import Glibc

/// An IPv4 or IPv6 literal, or a host name the system resolver knows, as a socket address.
/// "localhost" means 127.0.0.1 without asking the resolver, which may well answer ::1 first
/// while the server listens on IPv4 only.
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
    if status == 0 { return storage }
    guard isHostName(host) else {
        throw UVError(code: UV_EINVAL.rawValue, operation: operation, detail: "not an IP address or a host name: \(host)")
    }
    return try resolve(host: host, port: port, operation: operation)
}

/// Letters, digits, hyphens, underscores and dots, as names in `/etc/hosts`, DNS and mDNS are:
/// anything else is refused here rather than sent to a resolver that may ask the network. A
/// last label of digits only is refused too: no real name ends so, and the resolver would read
/// `192.168.1` or `2130706433` as an IPv4 address in shorthand, so a mistyped address would
/// bind or connect somewhere else instead of failing.
func isHostName(_ host: String) -> Bool {
    let bytes = Array(host.utf8)
    guard (1...253).contains(bytes.count), bytes[0] != UInt8(ascii: "-"), bytes[0] != UInt8(ascii: ".") else { return false }
    let lastLabel = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: true).last ?? []
    if lastLabel.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) { return false }
    return bytes.allSatisfy { byte in
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"): true
        default: false
        }
    }
}

/// Asks the system resolver (`/etc/hosts`, DNS, mDNS, as the machine is set up) for `host`,
/// preferring its first IPv4 address. Blocks the calling thread until the resolver answers:
/// a server resolves once as it starts; a client connecting on a loop thread blocks that loop,
/// so a caller opening many connections resolves once first (`numericHost`).
///
/// Memory: `getaddrinfo` allocates the result list; it is read here, copied into the returned
/// value and freed with `freeaddrinfo` before returning.
func resolve(host: String, port: Int, operation: String) throws(UVError) -> sockaddr_storage {
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    var list: UnsafeMutablePointer<addrinfo>?
    let status = getaddrinfo(host, nil, &hints, &list)
    defer { if let list { freeaddrinfo(list) } }
    guard status == 0 else {
        throw UVError(code: resolverErrorCode(status), operation: operation, detail: "cannot resolve \"\(host)\"")
    }
    var chosen: UnsafeMutablePointer<addrinfo>?
    var cursor = list
    while let entry = cursor {
        if entry.pointee.ai_family == AF_INET { chosen = entry; break }
        if chosen == nil, entry.pointee.ai_family == AF_INET6 { chosen = entry }
        cursor = entry.pointee.ai_next
    }
    guard let chosen, let address = chosen.pointee.ai_addr else {
        throw UVError(code: UV_EAI_NONAME.rawValue, operation: operation, detail: "no IPv4 or IPv6 address for \"\(host)\"")
    }
    var storage = sockaddr_storage()
    withUnsafeMutableBytes(of: &storage) { bytes in
        let length = min(Int(chosen.pointee.ai_addrlen), bytes.count)
        bytes.copyMemory(from: UnsafeRawBufferPointer(start: address, count: length))
        let networkPort = UInt16(port).bigEndian
        if chosen.pointee.ai_family == AF_INET {
            bytes.baseAddress!.assumingMemoryBound(to: sockaddr_in.self).pointee.sin_port = networkPort
        } else {
            bytes.baseAddress!.assumingMemoryBound(to: sockaddr_in6.self).pointee.sin6_port = networkPort
        }
    }
    return storage
}

/// libuv's code for a `getaddrinfo` failure, so the error names its real cause (a resolver that
/// cannot be reached is not an unknown name).
private func resolverErrorCode(_ status: Int32) -> Int32 {
    switch status {
    case EAI_AGAIN: UV_EAI_AGAIN.rawValue
    case EAI_FAIL: UV_EAI_FAIL.rawValue
    case EAI_MEMORY: UV_EAI_MEMORY.rawValue
    case EAI_FAMILY: UV_EAI_FAMILY.rawValue
    case EAI_SOCKTYPE: UV_EAI_SOCKTYPE.rawValue
    case EAI_SERVICE: UV_EAI_SERVICE.rawValue
    case EAI_NONAME: UV_EAI_NONAME.rawValue
    case EAI_SYSTEM: -errno
    default: UV_EAI_FAIL.rawValue
    }
}

/// `host` as an IP literal: itself when it is one, else the address the resolver gives (as
/// `socketAddress` would connect to). For a caller about to open many connections to one host.
public func numericHost(_ host: String) throws(UVError) -> String {
    let address = try socketAddress(host: host, port: 0, operation: "resolve \(host)")
    let text = describe(address)
    // `describe` gives "a.b.c.d:0" or "[v6]:0".
    let withoutPort = text.dropLast(2)
    return withoutPort.hasPrefix("[") ? String(withoutPort.dropFirst().dropLast()) : String(withoutPort)
}

/// Runs `body` with `storage` viewed as the generic `sockaddr` libuv's calls take.
func withSockaddr<R>(_ storage: inout sockaddr_storage,
                     _ body: (UnsafePointer<sockaddr>) -> R) -> R {
    withUnsafePointer(to: &storage) { body(UnsafeRawPointer($0).assumingMemoryBound(to: sockaddr.self)) }
}

/// "127.0.0.1:4747" or "[::1]:4747"; "?" when the family is unknown.
func describe(_ storage: sockaddr_storage) -> String {
    guard let address = addressText(storage) else { return "?" }
    let isV6 = Int32(storage.ss_family) == AF_INET6
    return isV6 ? "[\(address)]:\(port(of: storage))" : "\(address):\(port(of: storage))"
}

/// The network a peer at `storage` speaks from, for counting what one party does however many
/// addresses it uses: an IPv4 address itself ("192.0.2.7"); a global IPv6 address's /64 prefix
/// ("2001:db8:1:2::/64": a host on the Internet may pick any address of its /64 at will); a
/// link-local (fe80::/10) or unique local (fc00::/7) IPv6 address itself, because every device
/// of one home network shares those /64s; an IPv4-mapped IPv6 address as the IPv4 address it
/// maps. "?" when the family is unknown.
func networkName(_ storage: sockaddr_storage) -> String {
    guard Int32(storage.ss_family) == AF_INET6 else { return addressText(storage) ?? "?" }
    var v6 = withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in6.self) }
    var bytes = withUnsafeBytes(of: v6.sin6_addr) { Array($0) }
    if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
        return bytes[12...].map(String.init).joined(separator: ".")
    }
    let isLinkLocal = bytes[0] == 0xfe && bytes[1] & 0xc0 == 0x80
    let isUniqueLocal = bytes[0] & 0xfe == 0xfc
    if isLinkLocal || isUniqueLocal { return addressText(storage) ?? "?" }
    for index in 8..<16 { bytes[index] = 0 }
    withUnsafeMutableBytes(of: &v6.sin6_addr) { $0.copyBytes(from: bytes) }
    var prefix = sockaddr_storage()
    withUnsafeMutableBytes(of: &prefix) { $0.storeBytes(of: v6, as: sockaddr_in6.self) }
    return (addressText(prefix) ?? "?") + "/64"
}

/// The address of `storage` as text, without its port ("127.0.0.1", "::1"); nil when the
/// family is unknown.
private func addressText(_ storage: sockaddr_storage) -> String? {
    var name = [CChar](repeating: 0, count: 64)
    switch Int32(storage.ss_family) {
    case AF_INET:
        var v4 = withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in.self) }
        uv_ip4_name(&v4, &name, name.count)
    case AF_INET6:
        var v6 = withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in6.self) }
        uv_ip6_name(&v6, &name, name.count)
    default:
        return nil
    }
    return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Whether `storage` is a loopback address (127.0.0.0/8, ::1, or 127.x mapped into IPv6): a
/// peer on this very machine.
func isLoopback(_ storage: sockaddr_storage) -> Bool {
    switch Int32(storage.ss_family) {
    case AF_INET:
        let v4 = withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in.self) }
        return withUnsafeBytes(of: v4.sin_addr) { $0[0] } == 127
    case AF_INET6:
        let v6 = withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in6.self) }
        let bytes = withUnsafeBytes(of: v6.sin6_addr) { Array($0) }
        if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return true }
        return bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xff && bytes[11] == 0xff && bytes[12] == 127
    default:
        return false
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
