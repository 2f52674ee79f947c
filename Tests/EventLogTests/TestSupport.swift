import Foundation
@testable import EventLog

/// A fresh directory per test, removed afterwards.
func withTemporaryDirectory<T>(_ body: (String) throws -> T) throws -> T {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("eventlog-tests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: url) }
    return try body(url.path)
}

/// A value guarded by a lock, for results gathered from several threads.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<R>(_ body: (inout Value) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}

func event(_ n: Int, type: String = "tick", key: String? = nil) -> NewEvent {
    NewEvent(type: type, actor: "player-1", at: 1_700_000_000_000 + Int64(n), idempotencyKey: key,
             payload: #"{"n":\#(n)}"#)
}

func request(_ game: String, expected: Int64, count: Int = 1, first: Int = 0,
             idempotency: [IdempotencyRecord] = [], snapshot: Snapshot? = nil) -> AppendRequest {
    AppendRequest(game: game, expected: expected, events: (0..<count).map { event(first + $0) },
                  idempotency: idempotency, snapshot: snapshot)
}

extension EventStore {
    /// Every event of the game, ascending.
    func allEvents(_ game: String) throws(StorageError) -> [StoredEvent] {
        try events(game: game, after: 0, limit: .max)
    }
}

/// The writer thread parked inside a `perform`, between batches: everything submitted until
/// `release()` is queued behind it and taken together into the next batch.
final class HeldWriter<Value: Sendable>: Sendable {
    /// What the body run on the writer thread (before parking) returned.
    let result: Result<Value, StorageError>
    private let gate: DispatchSemaphore

    fileprivate init(result: Result<Value, StorageError>, gate: DispatchSemaphore) {
        self.result = result
        self.gate = gate
    }

    /// Lets the writer go on.
    func release() { gate.signal() }
}

/// Runs `body` on the writer thread, then parks the writer there, and returns once it is
/// parked. The wait blocks the calling thread, which is fine: the writer is a dedicated thread,
/// not the cooperative pool. The deadline only bounds a hang.
func holdWriter<Value: Sendable>(_ writer: EventWriter,
                                 _ body: @escaping @Sendable (EventStore) throws(StorageError) -> Value) throws -> HeldWriter<Value> {
    let parked = DispatchSemaphore(value: 0)
    let gate = DispatchSemaphore(value: 0)
    let result = Locked<Result<Value, StorageError>?>(nil)
    writer.perform { store in
        result.withLock { $0 = Result { () throws(StorageError) in try body(store) } }
        parked.signal()
        gate.wait()
    }
    guard parked.wait(timeout: .now() + 30) == .success, let outcome = result.withLock({ $0 }) else {
        gate.signal()
        throw WriterNotParked()
    }
    return HeldWriter(result: outcome, gate: gate)
}

struct WriterNotParked: Error, CustomStringConvertible {
    var description: String { "the writer thread did not reach the perform within 30 s" }
}
