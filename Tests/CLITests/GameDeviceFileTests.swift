import Foundation
import Testing

/// A device file belongs to one server and game. On a server with several games, a session
/// saved for one is not played in another, and the hint about files kept for other ports names
/// only files of the same game (`lake` is not `big-lake`).
@Suite struct GameDeviceFileTests {
    @Test func aSessionSavedForOneGameIsNotPlayedInAnother() throws {
        let server = try ServerProcess(environment: ["BQ_GAMES": "lake,big-lake"])
        defer { server.stop() }
        let file = try makeTemporaryDirectory().appendingPathComponent("dani.json").path
        let claim = try BQProcess.run(["play"] + server.address + ["--game", "lake", "--device-file", file, "--character", "dani", "whoami"])
        #expect(claim.status == 0, "\(claim.err)")
        let elsewhere = try BQProcess.run(["play"] + server.address + ["--game", "big-lake", "--device-file", file, "whoami"])
        #expect(elsewhere.status == 1, "\(elsewhere.out)")
        #expect(elsewhere.err.contains("holds a session in game lake, not big-lake"), "\(elsewhere.err)")
        // Without --game: the server's default, main.
        let unnamed = try BQProcess.run(["play"] + server.address + ["--device-file", file, "whoami"])
        #expect(unnamed.status == 1)
        #expect(unnamed.err.contains("holds a session in game lake, not main"), "\(unnamed.err)")
        let same = try BQProcess.run(["play"] + server.address + ["--game", "lake", "--device-file", file, "whoami"])
        #expect(same.status == 0, "\(same.err)")
    }

    @Test func theHintAboutOtherPortsNamesOnlyFilesOfTheSameGame() throws {
        let server = try ServerProcess(environment: ["BQ_GAMES": "lake,big-lake"])
        defer { server.stop() }
        let home = try makeTemporaryDirectory()
        let kept = home.appendingPathComponent(".config/bq")
        // Theo played in big-lake from this device, and in lake from another.
        let bigLake = try BQProcess.run(["play"] + server.address + ["--game", "big-lake", "--character", "theo", "whoami"], home: home)
        #expect(bigLake.status == 0, "\(bigLake.err)")
        let other = try makeTemporaryDirectory().appendingPathComponent("other.json").path
        let lake = try BQProcess.run(["play"] + server.address + ["--game", "lake", "--device-file", other, "--character", "theo", "whoami"])
        #expect(lake.status == 0, "\(lake.err)")
        // The other device's file, as if this device had kept it from a start on another port.
        let otherPort = kept.appendingPathComponent("play-127.0.0.1-1-lake.json").path
        try FileManager.default.copyItem(atPath: other, toPath: otherPort)

        let refused = try BQProcess.run(["play"] + server.address + ["--game", "lake", "--character", "theo", "whoami"], home: home)
        #expect(refused.status == 1)
        #expect(refused.err.contains("--device-file \(otherPort)"), "\(refused.err)")
        #expect(!refused.err.contains("big-lake.json"), "a file of another game is named: \(refused.err)")
    }
}
