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

/// A tiny deterministic PRNG so that every random history can be replayed from its seed.
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
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
