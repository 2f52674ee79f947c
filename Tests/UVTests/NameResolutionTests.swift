import Testing
@testable import UV

@Suite("Host names")
struct NameResolutionTests {
    @Test("a name goes through the system resolver and keeps its port")
    func localhostThroughTheResolver() throws {
        // `localhost` is in every /etc/hosts, so the resolver answers without the network.
        let address = try resolve(host: "localhost", port: 4747, operation: "test")
        #expect(port(of: address) == 4747)
        let text = describe(address)
        #expect(text == "127.0.0.1:4747" || text == "[::1]:4747")
    }

    @Test("literals never reach the resolver; text that cannot be a name is refused before it")
    func literalsAndNonNames() throws {
        #expect(describe(try socketAddress(host: "10.1.2.3", port: 80, operation: "test")) == "10.1.2.3:80")
        #expect(describe(try socketAddress(host: "::1", port: 80, operation: "test")) == "[::1]:80")
        for bad in ["", "has space", "-dash", ".dot", "semi;colon", String(repeating: "a", count: 254)] {
            #expect(!isHostName(bad), "\(bad)")
            let error = #expect(throws: UVError.self) { _ = try socketAddress(host: bad, port: 80, operation: "test") }
            #expect(error?.description.contains("not an IP address or a host name") == true)
        }
        #expect(isHostName("party-laptop.local") && isHostName("my_box") && isHostName("a"))
    }

    @Test("the blocking client socket refuses text that cannot be a host name")
    func blockingSocketRefusesNonNames() throws {
        let error = #expect(throws: SocketError.self) { _ = try BlockingLineSocket(host: "not a name", port: 1) }
        #expect(error?.kind == .badAddress)
    }
}
