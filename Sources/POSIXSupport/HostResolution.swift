import Glibc

/// Why a host and a port do not make a socket address.
public struct AddressError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// Not an IP literal nor a host name, or a port out of range: never sent to a resolver.
        case invalid
        /// The system resolver failed, with `getaddrinfo`'s status (and `errno` for `EAI_SYSTEM`).
        case resolver(status: Int32, errno: Int32)
        /// The name resolved, to no IPv4 or IPv6 address.
        case noAddress
    }

    public let kind: Kind
    public let detail: String

    public var description: String {
        guard case .resolver(let status, let number) = kind else { return detail }
        let reason = status == EAI_SYSTEM ? systemErrorText(number) : String(cString: gai_strerror(status))
        return "\(detail): \(reason)"
    }
}

/// An IPv4 or IPv6 literal, or a host name the system resolver knows, as a socket address.
/// "localhost" means 127.0.0.1 without asking the resolver, which may well answer ::1 first
/// while the server listens on IPv4 only. An IPv6 literal may come in brackets, as the server's
/// "listening on [::1]:4747" writes it.
public func socketAddress(host: String, port: Int) throws(AddressError) -> sockaddr_storage {
    guard (0...65535).contains(port) else { throw AddressError(kind: .invalid, detail: "port \(port) out of range") }
    let host = withoutBrackets(host)
    if let literal = literalAddress(host == "localhost" ? "127.0.0.1" : host, port: port) { return literal }
    guard isHostName(host) else { throw AddressError(kind: .invalid, detail: "not an IP address or a host name: \(host)") }
    return try resolve(host: host, port: port)
}

/// `text` as an IPv4 literal (dotted quad only: `inet_pton` takes no shorthand) or an IPv6 one,
/// with an interface after `%` for a link-local address (`fe80::1%eth0`); nil when it is neither.
private func literalAddress(_ text: String, port: Int) -> sockaddr_storage? {
    var storage = sockaddr_storage()
    var v4 = sockaddr_in()
    if inet_pton(AF_INET, text, &v4.sin_addr) == 1 {
        v4.sin_family = sa_family_t(AF_INET)
        v4.sin_port = UInt16(port).bigEndian
        withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: v4, as: sockaddr_in.self) }
        return storage
    }
    let parts = text.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)
    var v6 = sockaddr_in6()
    guard inet_pton(AF_INET6, String(parts[0]), &v6.sin6_addr) == 1 else { return nil }
    if parts.count == 2 {
        let scope = String(parts[1])
        let index = if_nametoindex(scope)
        guard index != 0 || UInt32(scope) != nil else { return nil }
        v6.sin6_scope_id = index != 0 ? index : UInt32(scope)!
    }
    v6.sin6_family = sa_family_t(AF_INET6)
    v6.sin6_port = UInt16(port).bigEndian
    withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: v6, as: sockaddr_in6.self) }
    return storage
}

/// Letters, digits, hyphens, underscores and dots, as names in `/etc/hosts`, DNS and mDNS are:
/// anything else is refused here rather than sent to a resolver that may ask the network. A
/// last label of digits only is refused too: no real name ends so, and the resolver would read
/// `192.168.1` or `2130706433` as an IPv4 address in shorthand, so a mistyped address would
/// bind or connect somewhere else instead of failing.
public func isHostName(_ host: String) -> Bool {
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
/// so a caller opening many connections resolves once first.
///
/// Memory: `getaddrinfo` allocates the result list; it is read here, copied into the returned
/// value and freed with `freeaddrinfo` before returning.
public func resolve(host: String, port: Int) throws(AddressError) -> sockaddr_storage {
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    var list: UnsafeMutablePointer<addrinfo>?
    let status = getaddrinfo(host, nil, &hints, &list)
    let number = errno
    defer { if let list { freeaddrinfo(list) } }
    guard status == 0 else {
        throw AddressError(kind: .resolver(status: status, errno: number), detail: "cannot resolve \"\(host)\"")
    }
    var chosen: UnsafeMutablePointer<addrinfo>?
    var cursor = list
    while let entry = cursor {
        if entry.pointee.ai_family == AF_INET { chosen = entry; break }
        if chosen == nil, entry.pointee.ai_family == AF_INET6 { chosen = entry }
        cursor = entry.pointee.ai_next
    }
    guard let chosen, let address = chosen.pointee.ai_addr else {
        throw AddressError(kind: .noAddress, detail: "no IPv4 or IPv6 address for \"\(host)\"")
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

/// A host as written in a URL (`[::1]`, the brackets keeping an IPv6 address apart from its
/// port), without the brackets; any other host as it is.
public func withoutBrackets(_ host: String) -> String {
    host.hasPrefix("[") && host.hasSuffix("]") && host.count > 2 ? String(host.dropFirst().dropLast()) : host
}
