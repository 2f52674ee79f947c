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

    /// A seed that was named, even by the default's path, is the file meant: missing, the start
    /// stops, rather than seeding the built-in game for good in its place. `bq seed` agrees.
    @Test func aNamedSeedThatIsMissingStopsTheStart() throws {
        let elsewhere = try makeTemporaryDirectory()
        let data = elsewhere.appendingPathComponent("data")
        let server = try BQProcess(["serve", "--data", data.path, "--port", "0", "--seed", "seed/birthdayquest.json"],
                                   directory: elsewhere)
        defer { server.kill() }
        #expect(server.waitForExit() == 1)
        #expect(server.errors.text.contains("seed/birthdayquest.json: cannot read the seed file"), "\(server.errors.text)")
        #expect(!FileManager.default.fileExists(atPath: data.appendingPathComponent("birthdayquest.sqlite").path))

        let named = try BQProcess(["seed", "seed/birthdayquest.json"], directory: elsewhere)
        #expect(named.waitForExit() == 1)
        let unnamed = try BQProcess(["seed"], directory: elsewhere)
        #expect(unnamed.waitForExit() == 0)
        #expect(unnamed.output.waitFor("the built-in seed"), "\(unnamed.output.text)")
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
