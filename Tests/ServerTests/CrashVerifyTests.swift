import Foundation
import SeededRandom
import JSON
import Testing

/// SIGKILL at seeded random moments, then `bq verify` on what the dead server left:
/// whatever the moment, the log replays from version 1 with every rule holding,
/// and nothing acknowledged is missing.
@Suite(.serialized) struct CrashVerifyTests {
    @Test(arguments: [UInt64(7), 1_122, 90_210])
    func killedAtARandomMomentTheLogStillVerifies(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let warmAfter = Int(random.next() % 60) + 1
        let dir = try TempDirectory()
        defer { dir.remove() }

        let bq = try BQProcess(dataDirectory: dir.path)
        let warm = DispatchSemaphore(value: 0)
        let load = (0..<3).map { LoadClient(name: "s\(seed)-\($0)") }
        for client in load { client.start(port: bq.port, warmAfter: warmAfter, warm: warm) }
        for _ in load {
            guard warm.wait(timeout: .now() + 60) == .success else { throw HarnessError("seed \(seed): load did not warm up") }
        }
        bq.signal(SIGKILL)
        for client in load where !client.waitUntilDone() { throw HarnessError("seed \(seed): \(client.name) still running") }
        #expect(try #require(bq.waitForExit()) == .signalled(SIGKILL), "seed \(seed)")

        let verify = try BQRun.run(["verify", "--data", dir.path], workingDirectory: dir.path)
        #expect(verify.ending == .exited(0), "seed \(seed) (warm after \(warmAfter)): \(verify.stdout)\(verify.stderr)")
        #expect(verify.stdoutLines.contains("verify: ok"), "seed \(seed): \(verify.stdout)")

        let log = try BQRun.run(["log", "--data", dir.path, "--json"], workingDirectory: dir.path)
        let reasons = Set(log.stdoutLines.compactMap { line -> String? in
            guard let event = try? JSONParser.parse(line), event["type"] == "points_adjusted" else { return nil }
            return event["data"]?["reason"]?.stringValue
        })
        let acknowledged = Set(load.flatMap { $0.acknowledged.value })
        #expect(acknowledged.isSubset(of: reasons), "seed \(seed): acknowledged but lost: \(acknowledged.subtracting(reasons).sorted().prefix(5))")
    }
}
