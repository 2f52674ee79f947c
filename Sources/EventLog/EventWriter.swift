import SQLite
import CSQLite3
import Foundation

/// A dedicated writer thread that owns its own `EventStore` connection and group-commits: it
/// takes everything queued (up to `maxBatchRequests`) into one transaction, and whatever is
/// submitted while that transaction is written and synced waits for the next one.
///
/// `submit` may be called from any thread. Completions run on the writer thread, in submission
/// order, after the transaction holding their request has committed (durably, with
/// `synchronous=FULL`) or failed. Keep them short: the next batch waits for them.
///
/// Checkpoints run on a second thread (`BackgroundCheckpointer`) once the WAL holds more than
/// `walCheckpointPages`; only past `StoreOptions.walSoftLimitFactor` times that does the writer checkpoint
/// between two batches itself, to let SQLite start the WAL over. (A soft limit: while a
/// background pass holds SQLite's checkpoint lock, the writer's attempt fails and the WAL
/// grows until its next one.)
public final class EventWriter: Sendable {
    private let queue: WriterQueue
    let checkpointer: BackgroundCheckpointer
    /// The most requests one transaction takes.
    public let maxBatchRequests: Int

    /// Opens the store on the calling thread (so open errors are thrown here), then hands it to a
    /// new writer thread, which from then on is the only one to touch it. `onCheckpoint` hears
    /// when checkpoints start failing and when they succeed again, on the writer's or the
    /// checkpointer's thread.
    public init(path: String, options: StoreOptions = .init(), maxBatchRequests: Int = 1024,
                onCheckpoint: @escaping @Sendable (CheckpointReport) -> Void = { _ in }) throws(StorageError) {
        precondition(maxBatchRequests >= 1, "maxBatchRequests must be at least 1")
        let store = try EventStore(path: path, options: options)
        let monitor = CheckpointMonitor(report: onCheckpoint)
        do {
            checkpointer = try BackgroundCheckpointer(path: path, options: options, monitor: monitor)
        } catch {
            store.close()
            throw error
        }
        self.maxBatchRequests = maxBatchRequests
        queue = WriterQueue()
        let handover = Handover(store)
        let queue = self.queue
        let limit = maxBatchRequests
        let checkpointer = self.checkpointer
        let thread = Thread {
            Self.run(store: handover.take(), queue: queue, checkpointer: checkpointer, monitor: monitor,
                     maxBatchRequests: limit)
        }
        thread.name = "bq-event-writer"
        thread.start()
    }

    /// Shuts down if the owner forgot to. (Dropping the last reference from inside a completion
    /// would deadlock here: call `shutdown()` explicitly from another thread.)
    deinit { shutdown() }

    /// Queues a request. `completion` runs on the writer thread; requests complete in submission
    /// order. After `shutdown()` the request is not written and `completion` runs at once, on the
    /// calling thread, with `.failed`.
    public func submit(_ request: AppendRequest, completion: @escaping @Sendable (AppendResult) -> Void) {
        guard queue.enqueue(.append(request, completion)) else {
            completion(.failed(StorageError(code: SQLITE_MISUSE, message: "the event writer is shut down")))
            return
        }
    }

    /// Queues several requests at once, in order, with one wake-up of the writer: a caller that
    /// gathers a burst of work (the server, per loop turn) hands it over whole, so the writer's
    /// next transaction holds all of it rather than just whatever arrived first.
    public func submit(_ requests: [(AppendRequest, @Sendable (AppendResult) -> Void)]) {
        guard !requests.isEmpty else { return }
        guard queue.enqueue(requests.map { .append($0.0, $0.1) }) else {
            let error = StorageError(code: SQLITE_MISUSE, message: "the event writer is shut down")
            for (_, completion) in requests { completion(.failed(error)) }
            return
        }
    }

    /// Runs `body` on the writer thread between batches, with the writer's store (a test hook:
    /// for example to make the next commit fail). Runs in submission order with the appends.
    func perform(_ body: @escaping @Sendable (EventStore) -> Void) {
        _ = queue.enqueue(.perform(body))
    }

    /// Writes everything already queued, closes both connections (the writer's and the
    /// checkpointer's), and waits until both threads have finished. Idempotent; safe from any
    /// thread except the writer thread itself.
    public func shutdown() {
        queue.stopAndWait()
        checkpointer.stop()
    }

    private static func run(store: EventStore, queue: WriterQueue, checkpointer: BackgroundCheckpointer,
                            monitor: CheckpointMonitor, maxBatchRequests: Int) {
        var requests: [AppendRequest] = []
        var completions: [@Sendable (AppendResult) -> Void] = []
        while let jobs = queue.takeAll(max: maxBatchRequests) {
            for job in jobs {
                switch job {
                case .append(let request, let completion):
                    requests.append(request)
                    completions.append(completion)
                case .perform(let body):
                    flush(store, &requests, &completions)
                    body(store)
                }
            }
            flush(store, &requests, &completions)
            let threshold = store.options.walCheckpointPages
            if store.walPages > threshold * StoreOptions.walSoftLimitFactor {
                monitor.attempt { () throws(StorageError) in try store.checkpointIfNeeded() }
            } else if store.walPages > threshold {
                checkpointer.request()
            }
        }
        // Closed before signalling the end, so a reopen right after shutdown() finds no lock.
        store.close()
        queue.markFinished()
    }

    private static func flush(_ store: EventStore, _ requests: inout [AppendRequest],
                              _ completions: inout [@Sendable (AppendResult) -> Void]) {
        guard !requests.isEmpty else { return }
        let results = store.append(batch: requests)
        for (completion, result) in zip(completions, results) { completion(result) }
        requests.removeAll(keepingCapacity: true)
        completions.removeAll(keepingCapacity: true)
    }
}

/// The writer's inbox, guarded by one condition variable.
private final class WriterQueue: WorkerThreadState, @unchecked Sendable {
    enum Job {
        case append(AppendRequest, @Sendable (AppendResult) -> Void)
        case perform(@Sendable (EventStore) -> Void)
    }

    // Guarded by `condition`.
    private var jobs: [Job] = []

    /// False once stopping: the job was not queued.
    func enqueue(_ job: Job) -> Bool { enqueue([job]) }

    /// False once stopping: none of the jobs was queued.
    func enqueue(_ newJobs: [Job]) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping else { return false }
        jobs += newJobs
        condition.broadcast()
        return true
    }

    /// Blocks until there is work; nil once stopping and drained.
    func takeAll(max: Int) -> [Job]? {
        condition.lock()
        defer { condition.unlock() }
        while jobs.isEmpty && !stopping { condition.wait() }
        if jobs.isEmpty { return nil }
        if jobs.count <= max {
            defer { jobs = [] }
            return jobs
        }
        let taken = Array(jobs.prefix(max))
        jobs.removeFirst(max)
        return taken
    }
}
