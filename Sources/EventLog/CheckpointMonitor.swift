import SQLite
import CSQLite3
import Foundation

/// A change in how checkpoints go, for the operator's log.
public enum CheckpointReport: Sendable, Equatable {
    /// Checkpoints started failing with this error. Nothing is lost (the WAL keeps every
    /// commit), but the WAL grows until one succeeds, and commits fail once the disk is full.
    case failing(StorageError)
    /// A checkpoint succeeded again after this many failures.
    case recovered(failures: Int)
}

/// Turns the outcomes of checkpoints, from the writer's thread and the checkpointer's, into
/// reports of changes: the first failure of a run and the success that ends it. A disk that
/// stays full fails every pass, and one line per pass would bury the log.
///
/// Threads: `record` is called from both threads; `report` runs on the caller's thread, under
/// the lock, so that the two threads' reports cannot overtake each other.
final class CheckpointMonitor: @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by `lock`.
    private var failures = 0
    private let report: @Sendable (CheckpointReport) -> Void

    init(report: @escaping @Sendable (CheckpointReport) -> Void) {
        self.report = report
    }

    /// Runs one checkpoint attempt and records how it went. `SQLITE_BUSY` (the other thread's
    /// pass holds the checkpoint lock) is neither a failure nor a success.
    func attempt(_ checkpoint: () throws(StorageError) -> Void) {
        do throws(StorageError) {
            try checkpoint()
            record(nil)
        } catch where error.code == SQLITE_BUSY || error.code == SQLITE_LOCKED {
            return
        } catch {
            record(error)
        }
    }

    func record(_ error: StorageError?) {
        lock.lock()
        defer { lock.unlock() }
        if let error {
            failures += 1
            if failures == 1 { report(.failing(error)) }
        } else {
            if failures > 0 { report(.recovered(failures: failures)) }
            failures = 0
        }
    }
}
