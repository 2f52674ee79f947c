import Glibc
import Testing
@testable import UV
import POSIXSupport

@Suite("Host names")
struct NameResolutionTests {
    @Test("the resolver's answer is copied with the port, for IPv4 and IPv6")
    func resolverAnswersKeepThePort() throws {
        // Numeric hosts: the resolver parses them itself, without /etc/hosts or the network.
        #expect(describe(try resolve(host: "127.0.0.1", port: 4747)) == "127.0.0.1:4747")
        #expect(describe(try resolve(host: "::1", port: 4748)) == "[::1]:4748")
    }

    @Test("literals never reach the resolver; text that cannot be a name is refused before it")
    func literalsAndNonNames() throws {
        #expect(describe(try socketAddress(host: "10.1.2.3", port: 80, operation: "test")) == "10.1.2.3:80")
        #expect(describe(try socketAddress(host: "::1", port: 80, operation: "test")) == "[::1]:80")
        // Shorthand IPv4 forms the resolver would accept: a mistyped address must fail, not go elsewhere.
        let shorthand = ["192.168.1", "10.1", "2130706433", "256.1.1.1", "1.2.3.4.5"]
        let malformed = ["", "has space", "-dash", ".dot", "semi;colon", String(repeating: "a", count: 254)]
        for bad in shorthand + malformed {
            #expect(!isHostName(bad), "\(bad)")
            let error = #expect(throws: UVError.self) { _ = try socketAddress(host: bad, port: 80, operation: "test") }
            #expect(error?.description.contains("not an IP address or a host name") == true)
        }
        #expect(isHostName("party-laptop.local") && isHostName("my_box") && isHostName("a") && isHostName("host1.example"))
    }

    @Test("a peer's network is its IPv4 address or its IPv6 /64, whichever address in it is used")
    func peerNetworks() throws {
        func network(_ host: String) throws -> String {
            networkName(try socketAddress(host: host, port: 5000, operation: "test"))
        }
        #expect(try network("192.0.2.7") == "192.0.2.7")
        #expect(try network("2001:db8:1:2:aaaa:bbbb:cccc:dddd") == "2001:db8:1:2::/64")
        #expect(try network("2001:db8:1:2::1") == network("2001:db8:1:2:ffff:ffff:ffff:ffff"),
                "one /64 is one party, so it cannot rotate its way past a per-address limit")
        #expect(try network("2001:db8:1:3::1") != network("2001:db8:1:2::1"))
        #expect(try network("::ffff:192.0.2.7") == "192.0.2.7", "an IPv4 client of a dual-stack socket is its IPv4 address")
        #expect(try network("::1") == "::/64")
        // Every device of one home network shares its link-local and unique local /64s: there
        // the address itself is the party, or one guest would count for all of them.
        #expect(try network("fe80::1:2:3:4") == "fe80::1:2:3:4")
        #expect(try network("fd00::2") == "fd00::2")
        #expect(try network("fd00::2") != network("fd00::3"))
    }

    @Test("numericHost gives the literal a name resolves to, and a literal as it is")
    func numericHosts() throws {
        #expect(try numericHost("127.0.0.1") == "127.0.0.1")
        #expect(try numericHost("::1") == "::1")
        #expect(try numericHost("localhost") == "127.0.0.1")
        // A link-local literal keeps its zone, without which it cannot be connected to.
        #expect(try numericHost("fe80::1%lo") == "fe80::1%lo")
    }

    @Test("an error's words, for codes libuv knows and for an errno it passes through")
    func errorWords() {
        let known = UVError(code: -EADDRINUSE, operation: "uv_tcp_bind 127.0.0.1:1")
        #expect(known.description == "uv_tcp_bind 127.0.0.1:1: address already in use (EADDRINUSE)")
        let unknown = UVError(code: -9_999, operation: "resolve x")
        #expect(unknown.name == "Unknown system error -9999")
        #expect(unknown.reason == "Unknown system error -9999 (Unknown system error -9999)")
    }

    @Test("the blocking client socket says why an address is bad")
    func blockingSocketRefusesNonNames() throws {
        let error = #expect(throws: SocketError.self) { _ = try BlockingLineSocket(host: "not a name", port: 1) }
        #expect(error?.kind == .badAddress)
        #expect(error?.description == "connect not a name:1: not an IP address or a host name: not a name")
    }
}
