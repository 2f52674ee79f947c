import Foundation
import Testing
@testable import EventLog

/// A commit whose sync fails has its frames in the WAL file already. Refused as "nothing was
/// committed", it must not come back when the log is next opened after a crash.
@Suite struct SyncFailureTests {
    /// Runs the child with the second commit's next `failures` WAL syncs failing, reads what
    /// the append returned, kills the child with SIGKILL (its connection still open), and
    /// opens the log afresh, as a restarted server would.
    private func outcomeAndLogAfterCrash(failures: Int, in dir: String) throws -> (String?, EventStore) {
        let path = dir + "/log.sqlite"
        let process = Process()
        process.executableURL = try crashChildURL()
        process.arguments = ["failsync", path, String(failures)]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        var reader = LineReader(handle: output.fileHandleForReading)
        let outcome = reader.nextLine()
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        return (outcome, try EventStore(path: path))
    }

    @Test func aCommitRefusedAfterItsSyncFailedIsNotInTheLogAfterACrash() throws {
        try withTemporaryDirectory { dir in
            let (outcome, store) = try outcomeAndLogAfterCrash(failures: 1, in: dir)
            defer { store.close() }
            #expect(outcome == "failed")
            #expect(try store.version(game: "g") == 1, "the refused commit came back")
            let failures = try store.failedCommits()
            #expect(failures.count == 1 && failures.lastAt != nil, "the record written over it is there, for bq verify to tell")
        }
    }

    @Test func whenTheRecordCannotBeSyncedEitherTheOutcomeIsUncertainNotFailed() throws {
        try withTemporaryDirectory { dir in
            let (outcome, store) = try outcomeAndLogAfterCrash(failures: 2, in: dir)
            defer { store.close() }
            #expect(outcome == "uncertain", "`failed` promises nothing was committed, which nothing made sure of")
            let version = try store.version(game: "g")
            #expect(version == 1 || version == 2, "the log opens, holding the commit or not")
        }
    }
}
