import SQLite
import Foundation

/// A thread with a read-only `EventStore` of its own that runs jobs one at a time, in the order
/// given: for reads too long for a thread that others wait on (the server's loop thread
/// replaying the log to rebuild a past view). A job reports its outcome itself, typically by
/// handing a value back to the thread that asked.
///
/// Threads: `perform` and `stop` from any thread but the reader's own; the store is used only on
/// the reader's thread (and closed there).
public final class BackgroundReader: Sendable {
    private let queue: ReaderQueue

    /// Opens the store on the calling thread, so open errors are thrown here. `options.readOnly`
    /// is forced on.
    public init(path: String, options: StoreOptions, name: String) throws(StorageError) {
        var readOptions = options
        readOptions.readOnly = true
        let store = try EventStore(path: path, options: readOptions)
        queue = ReaderQueue()
        let handover = Handover(store)
        let queue = self.queue
        let thread = Thread { Self.run(handover.take(), queue) }
        thread.name = name
        thread.start()
    }

    deinit { stop() }

    /// Queues `job` to run on the reader's thread with its store. False once stopped: the job
    /// will never run.
    @discardableResult
    public func perform(_ job: @escaping @Sendable (EventStore) -> Void) -> Bool { queue.enqueue(job) }

    /// Lets the job in progress finish, drops the queued ones, closes the store and waits for
    /// the thread to end. Idempotent.
    public func stop() { queue.stopAndWait() }

    private static func run(_ store: EventStore, _ queue: ReaderQueue) {
        while let job = queue.next() { job(store) }
        store.close()
        queue.markFinished()
    }
}

/// The reader's jobs, guarded by one condition variable.
private final class ReaderQueue: WorkerThreadState, @unchecked Sendable {
    // Guarded by `condition`.
    private var jobs: [@Sendable (EventStore) -> Void] = []

    func enqueue(_ job: @escaping @Sendable (EventStore) -> Void) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping else { return false }
        jobs.append(job)
        condition.broadcast()
        return true
    }

    /// Blocks until there is a job; nil once stopping.
    func next() -> (@Sendable (EventStore) -> Void)? {
        condition.lock()
        defer { condition.unlock() }
        while jobs.isEmpty && !stopping { condition.wait() }
        return stopping ? nil : jobs.removeFirst()
    }
}
