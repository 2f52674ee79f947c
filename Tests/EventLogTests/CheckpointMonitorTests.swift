import CSQLite3
import Testing
@testable import EventLog

/// A disk that stays full fails every checkpoint pass; the operator hears once that they fail
/// and once that they work again, not once per pass.
@Suite struct CheckpointMonitorTests {
    private func monitor() -> (CheckpointMonitor, Locked<[CheckpointReport]>) {
        let reports = Locked<[CheckpointReport]>([])
        return (CheckpointMonitor { report in reports.withLock { $0.append(report) } }, reports)
    }

    @Test func aRunOfFailuresIsReportedWhenItStartsAndWhenItEnds() {
        let (monitor, reports) = monitor()
        let full = StorageError(code: SQLITE_FULL, message: "database or disk is full")
        monitor.attempt {}
        #expect(reports.withLock { $0 }.isEmpty, "a success after successes is not news")
        for _ in 0..<5 { monitor.attempt { () throws(StorageError) in throw full } }
        #expect(reports.withLock { $0 } == [.failing(full)])
        monitor.attempt {}
        monitor.attempt {}
        #expect(reports.withLock { $0 } == [.failing(full), .recovered(failures: 5)])
    }

    @Test func aCheckpointThatFindsTheOtherThreadsPassRunningIsNeitherAFailureNorASuccess() {
        let (monitor, reports) = monitor()
        let io = StorageError(code: SQLITE_IOERR, message: "disk I/O error")
        monitor.attempt { () throws(StorageError) in throw StorageError(code: SQLITE_BUSY, message: "database is locked") }
        #expect(reports.withLock { $0 }.isEmpty)
        monitor.attempt { () throws(StorageError) in throw io }
        monitor.attempt { () throws(StorageError) in throw StorageError(code: SQLITE_BUSY, message: "database is locked") }
        #expect(reports.withLock { $0 } == [.failing(io)], "busy does not end a run of failures")
        monitor.attempt {}
        #expect(reports.withLock { $0 } == [.failing(io), .recovered(failures: 1)])
    }
}
