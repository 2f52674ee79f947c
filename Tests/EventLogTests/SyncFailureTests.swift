import Foundation
import Testing
@testable import EventLog

/// A commit whose sync fails has its frames in the WAL file already. Refused as "nothing was
/// committed", it must not come back when the log is next opened after a crash.
@Suite struct SyncFailureTests {
    /// Runs the child with the second commit's next `failures` WAL syncs failing, reads what
    /// the append returned, kills the child with SIGKILL (its connection still open), and
    /// opens the log afresh, as a restarted server would.
    private func outcomeAndLogAfterCrash(failures: Int, thenAgain: Bool = false, in dir: String) throws -> ([String], EventStore) {
        let path = dir + "/log.sqlite"
        let process = Process()
        process.executableURL = try crashChildURL()
        process.arguments = ["failsync", path, String(failures)] + (thenAgain ? ["again"] : [])
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        var reader = LineReader(handle: output.fileHandleForReading)
        let outcomes = (0..<(thenAgain ? 2 : 1)).compactMap { _ in reader.nextLine() }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        return (outcomes, try EventStore(path: path))
    }

    @Test func aCommitRefusedAfterItsSyncFailedIsNotInTheLogAfterACrash() throws {
        try withTemporaryDirectory { dir in
            let (outcomes, store) = try outcomeAndLogAfterCrash(failures: 1, in: dir)
            defer { store.close() }
            #expect(outcomes == ["failed"])
            #expect(try store.version(game: "g") == 1, "the refused commit came back")
            let failures = try store.failedCommits()
            #expect(failures.count == 1 && failures.lastAt != nil, "the record written over it is there, for bq verify to tell")
        }
    }

    @Test func whenTheRecordCannotBeSyncedEitherTheOutcomeIsUncertainNotFailed() throws {
        try withTemporaryDirectory { dir in
            let (outcomes, store) = try outcomeAndLogAfterCrash(failures: 2, in: dir)
            defer { store.close() }
            #expect(outcomes == ["uncertain"], "`failed` promises nothing was committed, which nothing made sure of")
            let version = try store.version(game: "g")
            #expect(version == 1 || version == 2, "the log opens, holding the commit or not")
        }
    }

    /// The record of a failure that could not be made durable goes with the next commit that
    /// succeeds, which is also what settles the failed one.
    @Test func theRecordOfAnUncertainCommitRidesWithTheNextCommit() throws {
        try withTemporaryDirectory { dir in
            let (outcomes, store) = try outcomeAndLogAfterCrash(failures: 2, thenAgain: true, in: dir)
            defer { store.close() }
            #expect(outcomes == ["uncertain", "committed"])
            #expect(try store.version(game: "g") == 2, "the retry, once")
            #expect(try store.failedCommits().count == 1, "for bq verify to tell")
        }
    }

    /// "The last at" is the newest record's time: after the clock was set back, not the greatest.
    @Test func theLastFailedCommitIsTheNewestRecordNotTheLatestTime() throws {
        try withTemporaryDirectory { dir in
            let store = try EventStore(path: dir + "/log.sqlite", options: StoreOptions(synchronous: .off))
            defer { store.close() }
            try store.executeForTesting("INSERT INTO failed_commits(at, error) VALUES (2000, 'before'), (1000, 'after')")
            let failures = try store.failedCommits()
            #expect(failures.count == 2 && failures.lastAt == 1000)
        }
    }
}
