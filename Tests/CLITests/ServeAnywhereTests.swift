import Foundation
import Testing

/// `bq serve` started away from the repository (no seed/ in its working directory, no
/// --seed) still seeds the shipped game, and says where the seed came from.
@Suite struct ServeAnywhereTests {
    @Test func aServerStartedElsewhereSeedsTheBuiltInGame() throws {
        let elsewhere = try makeTemporaryDirectory()
        let data = elsewhere.appendingPathComponent("data")
        let server = try BQProcess(["serve", "--data", data.path, "--port", "0"], directory: elsewhere)
        defer { server.kill() }
        #expect(server.output.waitFor("listening on 127.0.0.1:") && server.output.waitFor("\n"), "\(server.errors.text)")
        #expect(server.errors.waitFor("seeded game main from the built-in seed (no seed/birthdayquest.json in "),
                "\(server.errors.text)")
        let line = server.output.text.split(separator: "\n").first { $0.hasPrefix("listening on ") } ?? ""
        let port = try #require(line.split(separator: ":").last.flatMap { Int($0) })
        let status = try BQProcess.run(["admin", "status", "--port", String(port), "--data", data.path])
        #expect(status.status == 0, "\(status.err)")
        #expect(status.out.contains("Mia"), "the shipped seed's characters: \(status.out)")
        Foundation.kill(server.process.processIdentifier, SIGTERM)
        #expect(server.waitForExit() == 0)
    }

    /// A durability weaker than the protocol's promise is said at every start.
    @Test func aWeakerSynchronousSettingIsWarnedAbout() throws {
        let data = try makeTemporaryDirectory().appendingPathComponent("data")
        let server = try BQProcess(["serve", "--data", data.path, "--port", "0"], environment: ["BQ_SYNCHRONOUS": "normal"])
        defer { server.kill() }
        #expect(server.errors.waitFor("synchronous is normal: an acknowledged change survives a crash of bq serve, not a power loss"),
                "\(server.errors.text)")
        #expect(server.output.waitFor("listening on "))
    }
}
