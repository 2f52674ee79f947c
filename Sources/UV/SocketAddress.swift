import CLibUV
import Glibc
import POSIXSupport

/// `POSIXSupport.socketAddress`, its failure as a libuv error of `operation`.
func socketAddress(host: String, port: Int, operation: String) throws(UVError) -> sockaddr_storage {
    do {
        return try POSIXSupport.socketAddress(host: host, port: port)
    } catch {
        throw UVError(code: uvCode(error.kind), operation: operation, detail: error.kind == .invalid ? error.detail : error.description)
    }
}

/// libuv's code for a failure to make an address, so that the error names its real cause (a
/// resolver that cannot be reached is not an unknown name).
private func uvCode(_ kind: AddressError.Kind) -> Int32 {
    switch kind {
    case .invalid: UV_EINVAL.rawValue
    case .noAddress: UV_EAI_NONAME.rawValue
    case .resolver(let status, let number):
        switch status {
        case EAI_AGAIN: UV_EAI_AGAIN.rawValue
        case EAI_FAIL: UV_EAI_FAIL.rawValue
        case EAI_MEMORY: UV_EAI_MEMORY.rawValue
        case EAI_FAMILY: UV_EAI_FAMILY.rawValue
        case EAI_SOCKTYPE: UV_EAI_SOCKTYPE.rawValue
        case EAI_SERVICE: UV_EAI_SERVICE.rawValue
        case EAI_NONAME: UV_EAI_NONAME.rawValue
        // errno 0 would read as "Unknown system error 0".
        case EAI_SYSTEM: number == 0 ? UV_EAI_FAIL.rawValue : -number
        default: UV_EAI_FAIL.rawValue
        }
    }
}

/// `host` as an IP literal: itself when it is one, else the address the resolver gives (as
/// `socketAddress` would connect to). For a caller about to open many connections to one host.
public func numericHost(_ host: String) throws(UVError) -> String {
    // Kept as written: a link-local IPv6 literal's zone (`fe80::1%eth0`) is part of it, and the
    // text made from its address below would drop it.
    if isIPLiteral(host) { return host }
    let address = try socketAddress(host: host, port: 0, operation: "resolve \(host)")
    let text = describe(address)
    // `describe` gives "a.b.c.d:0" or "[v6]:0".
    let withoutPort = text.dropLast(2)
    return withoutPort.hasPrefix("[") ? String(withoutPort.dropFirst().dropLast()) : String(withoutPort)
}

/// An IPv4 or IPv6 address written out, an IPv6 one with or without a zone (`%eth0`).
private func isIPLiteral(_ host: String) -> Bool {
    var v4 = in_addr(), v6 = in6_addr()
    let address = host.split(separator: "%", maxSplits: 1).first.map(String.init) ?? host
    return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, address, &v6) == 1
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

/// This machine's addresses that other machines may reach it by: every interface's IPv4
/// address and, with `includingIPv6`, every IPv6 one but link-local, loopback and the like
/// left out. Empty when libuv cannot list them. Memory: libuv allocates the array and frees it
/// here, before return.
public func externalInterfaceAddresses(includingIPv6: Bool = true) -> [String] {
    var list: UnsafeMutablePointer<uv_interface_address_t>?
    var count: Int32 = 0
    guard uv_interface_addresses(&list, &count) == 0, let list else { return [] }
    defer { uv_free_interface_addresses(list, count) }
    var found: [String] = []
    for entry in UnsafeBufferPointer(start: list, count: Int(count)) where entry.is_internal == 0 {
        var storage = sockaddr_storage()
        switch Int32(entry.address.address4.sin_family) {
        case AF_INET:
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: entry.address.address4, as: sockaddr_in.self) }
        case AF_INET6:
            guard includingIPv6 else { continue }
            // fe80::/10 needs a scope to be typed, and another machine's player would not know it.
            let first = entry.address.address6.sin6_addr.__in6_u.__u6_addr8.0
            let second = entry.address.address6.sin6_addr.__in6_u.__u6_addr8.1
            if first == 0xFE && second & 0xC0 == 0x80 { continue }
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: entry.address.address6, as: sockaddr_in6.self) }
        default:
            continue
        }
        if let text = addressText(storage), !found.contains(text) { found.append(text) }
    }
    return found
}
