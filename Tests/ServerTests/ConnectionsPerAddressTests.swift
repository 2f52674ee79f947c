import Foundation
import JSON
import Testing
import UV
import POSIXSupport

/// This machine's first IPv4 address that is not loopback, if it has one: a peer connecting to
/// it from here is not a loopback peer, so it counts like one from elsewhere.
private func nonLoopbackIPv4() -> String? {
    var list: UnsafeMutablePointer<ifaddrs>?
    guard getifaddrs(&list) == 0 else { return nil }
    defer { freeifaddrs(list) }
    var cursor = list
    while let entry = cursor {
        defer { cursor = entry.pointee.ifa_next }
        guard let address = entry.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET) else { continue }
        let v4 = UnsafeRawPointer(address).load(as: sockaddr_in.self)
        var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        var raw = v4.sin_addr
        guard inet_ntop(AF_INET, &raw, &text, socklen_t(text.count)) != nil else { continue }
        let name = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if !name.hasPrefix("127.") { return name }
    }
    return nil
}

@Suite struct ConnectionsPerAddressTests {
    private func lines(from socket: BlockingLineSocket) throws -> [JSONValue] {
        var lines: [JSONValue] = []
        while let line = try socket.readLine(timeoutMilliseconds: 10_000) { lines.append(try JSONParser.parse(line)) }
        return lines
    }

    @Test(.enabled(if: nonLoopbackIPv4() != nil, "needs a non-loopback IPv4 address"))
    func oneAddressGetsAtMostItsShareAndAClosedConnectionGivesItsPlaceBack() throws {
        let host = try #require(nonLoopbackIPv4())
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path) {
            $0.host = "0.0.0.0"
            $0.limits.maxConnectionsPerAddress = 2
        }
        var held = try (0..<2).map { _ in try BlockingLineSocket(host: host, port: server.port) }
        for socket in held { #expect(try socket.readLine(timeoutMilliseconds: 10_000).map { try JSONParser.parse($0)["push"] } == "hello") }

        let extra = try BlockingLineSocket(host: host, port: server.port)
        let refused = try lines(from: extra)
        #expect(refused.count == 2, "hello, one error line, then the server hangs up")
        #expect(refused.first?["push"] == "hello")
        #expect(refused.last?["error"]?["code"] == "unavailable")
        #expect(refused.last?["error"]?["message"]?.stringValue?.contains("Too many connections from \(host) (2 at once)") == true,
                "\(refused.last?.serialized() ?? "")")

        // The machine's own players, on loopback, are not counted against that address.
        let local = try server.connect()
        try local.ok("ping")

        held[0].close()
        held.removeFirst()
        // The place comes back once the server has seen the close, which it does by itself
        // shortly: each try pings at once and reads whether the ping or a refusal comes back.
        var admitted = false
        for _ in 0..<200 where !admitted {
            let again = try BlockingLineSocket(host: host, port: server.port)
            try again.sendLine(#"{"id":1,"op":"ping"}"#)
            let answers = try (0..<2).compactMap { _ in try again.readLine(timeoutMilliseconds: 10_000).map { try JSONParser.parse($0) } }
            admitted = answers.count == 2 && answers[1]["id"] == 1 && answers[1]["ok"] == .bool(true)
            again.close()
        }
        #expect(admitted, "a closed connection gives its place back")
        try server.stop()
    }
}
