import SQLite
import CSQLite3
import Foundation

/// Copies the WAL into the database on a thread and connection of its own, so that a commit
/// does not wait behind a checkpoint's page copies and its sync of the database file (tens of
/// milliseconds every few hundred commits, which set the writer's p99).
///
/// A passive checkpoint never blocks the writer, but while the writer keeps committing it can
/// never catch up with the WAL's end, and SQLite only starts the WAL over once a checkpoint has
/// copied every frame. So the writer still finishes the job itself when the WAL grows past a
/// soft limit (`StoreOptions.walSoftLimitFactor`): by then this thread has copied nearly
/// everything, and the writer's checkpoint is short.
///
/// Threads: `request()` and `stop()` may be called from any thread; the connection is used only
/// on the checkpointer's own thread (and closed there).
final class BackgroundCheckpointer: Sendable {
    private let state: CheckpointerState

    /// Opens the second connection on the calling thread, so errors are thrown here.
    init(path: String, options: StoreOptions, monitor: CheckpointMonitor) throws(StorageError) {
        let connection = try SQLiteConnection(path: path, readOnly: options.readOnly)
        connection.setBusyTimeout(milliseconds: options.busyTimeoutMilliseconds)
        do {
            // A checkpoint syncs the files as its connection's setting says: as hard as the writer.
            try connection.execute("PRAGMA synchronous=\(options.synchronous.rawValue.uppercased())")
            // A connection checkpoints only a WAL it has opened, and opens it on its first read.
            _ = try connection.integer("SELECT count(*) FROM sqlite_schema")
        } catch {
            connection.close()
            throw error
        }
        state = CheckpointerState()
        let handover = Handover(connection)
        let state = self.state
        let thread = Thread { Self.run(handover.take(), state, monitor) }
        thread.name = "bq-checkpointer"
        thread.start()
    }

    /// Asks for a checkpoint; requests made while one runs fold into one more pass.
    func request() { state.request() }

    /// Finishes the pass in progress, closes the connection, and waits for the thread to end.
    /// Idempotent.
    func stop() { state.stopAndWait() }

    /// Waits until at least `count` passes have finished (a test hook); false on timeout.
    func waitForPasses(_ count: Int, timeout: TimeInterval) -> Bool { state.waitForPasses(count, timeout: timeout) }

    private static func run(_ connection: SQLiteConnection, _ state: CheckpointerState, _ monitor: CheckpointMonitor) {
        while state.waitForRequest() {
            // A failure loses nothing: the frames stay in the WAL for the next pass (or the writer's).
            monitor.attempt { () throws(StorageError) in try connection.checkpoint() }
            state.passFinished()
        }
        connection.close()
        state.markFinished()
    }
}

/// The checkpointer's flags, guarded by one condition variable.
private final class CheckpointerState: WorkerThreadState, @unchecked Sendable {
    // Guarded by `condition`.
    private var requested = false
    private var passes = 0

    func request() {
        condition.lock()
        requested = true
        // Broadcast: a test's `waitForPasses` waits on the same condition, and a signal that
        // woke only it would leave the request unseen until the next one.
        condition.broadcast()
        condition.unlock()
    }

    /// Blocks until asked; false once stopping.
    func waitForRequest() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !requested && !stopping { condition.wait() }
        requested = false
        return !stopping
    }

    func passFinished() {
        condition.lock()
        passes += 1
        condition.broadcast()
        condition.unlock()
    }

    func waitForPasses(_ count: Int, timeout: TimeInterval) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while passes < count {
            if !condition.wait(until: deadline) { return passes >= count }
        }
        return true
    }
}
