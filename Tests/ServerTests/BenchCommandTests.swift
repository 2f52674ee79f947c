import Foundation
import JSON
import Testing

/// `bq bench load` is run on purpose, not by the suite; this only proves that both of its
/// drivers still work end to end against a spawned server (a tiny shape, no figure judged).
@Suite struct BenchCommandTests {
    @Test(arguments: [[], ["--client-library"]])
    func benchLoadDrivesASpawnedServerAndReportsCommittedMutations(driver: [String]) throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let run = try BQRun.run(["bench", "load", "--spawn", "--seed", Repo.seedPath, "--games", "1", "--connections", "3",
                                 "--subscribers", "1", "--warmup", "0.2", "--duration", "0.5", "--durable-only", "--json"] + driver,
                                workingDirectory: dir.path)
        #expect(run.ending == .exited(0), "\(run.stderr)")
        let line = try #require(run.stdoutLines.last, "no JSON line: \(run.stdout)")
        let result = try JSONParser.parse(Array(line.utf8))
        #expect((result["acknowledged"]?.intValue ?? 0) > 0, "\(line)")
        #expect(result["errors"] == 0, "\(line)")
        #expect(result["replayed"] == 0, "\(line)")
        #expect(result["serverCPUSeconds"] != nil, "\(line)")
    }

    /// `bq bench decode` decodes the mix both ways (and stops if they differ): one row per line.
    @Test func benchDecodeReportsEveryLineOfTheMix() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let run = try BQRun.run(["bench", "decode", "--lines", "1000"], workingDirectory: dir.path)
        #expect(run.ending == .exited(0), "\(run.stderr)")
        let rows = run.stdoutLines.dropFirst().map { $0.split(separator: " ").first.map(String.init) ?? "" }
        #expect(rows == ["adjust_points", "save_secret", "complete_challenge"], "\(run.stdout)")
    }
}
