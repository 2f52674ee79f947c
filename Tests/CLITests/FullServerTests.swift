import Foundation
import JSON
import Testing
import UV
import POSIXSupport

/// A server that holds all the connections it allows is running: `bq play` and `bq admin` say
/// it is full, exit 2 ("no server to talk to", worth retrying), and keep the saved session.
@Suite struct FullServerTests {
    @Test func aFullServerIsNoServerForNowAndTheSessionIsKept() throws {
        let server = try ServerProcess(environment: ["BQ_MAX_CONNECTIONS": "1"])
        defer { server.stop() }
        let file = try makeTemporaryDirectory().appendingPathComponent("mia.json")
        let claimed = try BQProcess.run(["play"] + server.address + ["--device-file", file.path, "--character", "mia", "whoami"])
        #expect(claimed.status == 0, "\(claimed.err)")
        let saved = try Data(contentsOf: file)

        let holder = try holdTheOnlyConnection(port: server.port)
        defer { holder.close() }
        let player = try BQProcess.run(["play"] + server.address + ["--device-file", file.path, "whoami"])
        #expect(player.status == 2, "\(player.out) \(player.err)")
        #expect(player.err.contains("The server is full"), "\(player.err)")
        #expect(!player.err.contains("Is bq serve running"), "it is running")
        #expect(try Data(contentsOf: file) == saved, "the token is kept for when there is room")
        let admin = try BQProcess.run(["admin", "status"] + server.adminFlags)
        #expect(admin.status == 2, "\(admin.err)")
        #expect(admin.err.contains("The server is full"), "\(admin.err)")
    }

    /// Connects until the server has room (the last client's close may still be on its way)
    /// and keeps the connection: a ping answered `ok` means it was taken.
    private func holdTheOnlyConnection(port: Int) throws -> BlockingLineSocket {
        for _ in 0..<100 {
            let socket = try BlockingLineSocket(host: "127.0.0.1", port: port)
            _ = try socket.readLine(timeoutMilliseconds: 10_000)  // hello
            try socket.sendLine(#"{"id":1,"op":"ping"}"#)
            if let line = try socket.readLine(timeoutMilliseconds: 10_000), try JSONParser.parse(line)["ok"] == true {
                return socket
            }
            socket.close()
        }
        throw TestFailure("the server never had room for one connection")
    }

}

/// Log levels as launch scripts write them.
@Suite struct LogLevelTests {
    @Test(arguments: ["WARN", "Warning", "notice"])
    func aLevelInAnyCaseOrWarnStartsTheServer(level: String) throws {
        let server = try ServerProcess(extraArguments: ["--log-level", level])
        defer { server.stop() }
        let ping = try BQProcess.run(["admin", "status"] + server.adminFlags)
        #expect(ping.status == 0, "\(ping.err)")
    }
}

