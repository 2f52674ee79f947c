import ArgumentParser
import Server
import Views

struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "verify", abstract: "Replay every game from version 1 and check every invariant and snapshot.")

    @OptionGroup var options: DataOptions

    func run() throws {
        let config = try options.loadExistingLog(command: "verify", exitCode: 2)
        let report: LogVerifier.Report
        do {
            report = try LogVerifier.verify(path: config.databasePath, idempotencyWindow: config.idempotencyWindow,
                                            options: config.readerOptions)
        } catch {
            print("verify: cannot read \(config.databasePath): \(error)"
                + GameServer.fullDiskHint(config.dataDirectory, advice: "free some space"))
            throw ExitCode(2)
        }
        for (game, version) in report.games.sorted(by: { $0.key < $1.key }) {
            print("game \(game): \(version) events replayed")
        }
        print("\(report.snapshotsChecked) snapshots checked")
        if report.failedCommits > 0, let last = report.lastFailedCommitAt {
            let count = report.failedCommits
            print("note: \(count) commit\(count == 1 ? "" : "s") failed at the disk (a failed sync, say) and "
                + "\(count == 1 ? "was" : "were") refused, the last at \(formatTimestamp(last)): check the disk")
        }
        if report.isClean {
            print("verify: ok")
        } else {
            for problem in report.problems { print("PROBLEM: \(problem)") }
            print("verify: \(report.problems.count) problem\(report.problems.count == 1 ? "" : "s")")
            throw ExitCode(2)
        }
    }
}
