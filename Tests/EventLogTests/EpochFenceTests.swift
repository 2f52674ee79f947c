import CSQLite3
import Testing
@testable import EventLog

/// The server decides commands on top of others still on their way to disk. When one of those
/// fails, everything decided after it is answered "not committed" and must not commit later.
/// The version check catches a command decided on the failed one's events, but not one behind
/// a failed command that wrote no events (a keyed command that changed nothing): the epoch does.
@Suite struct EpochFenceTests {
    /// A keyed command that changed nothing: only its idempotency record, at the current version.
    func keyedNoOp(_ game: String, at version: Int64, epoch: UInt64?) -> AppendRequest {
        AppendRequest(game: game, expected: version, events: [],
                      idempotency: [IdempotencyRecord(identity: "admin", key: "same-day", fingerprint: "f",
                                                      reply: "{}", version: version)],
                      epoch: epoch)
    }

    func change(_ game: String, expected: Int64, epoch: UInt64?) -> AppendRequest {
        var change = request(game, expected: expected, first: Int(expected))
        change.epoch = epoch
        return change
    }

    func expectFenced(_ result: AppendResult, sourceLocation: SourceLocation = #_sourceLocation) {
        guard case .failed(let error) = result else {
            Issue.record("expected the request to be fenced off, got \(result)", sourceLocation: sourceLocation)
            return
        }
        #expect(error.code == SQLITE_ABORT, "\(error)", sourceLocation: sourceLocation)
    }

    @Test func aRequestDecidedBehindAFailedNoOpIsRefusedUntilTheNextEpoch() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/log.sqlite"
            let store = try EventStore(path: path, options: StoreOptions(busyTimeoutMilliseconds: 0))
            defer { store.close() }
            #expect(store.append(change("g", expected: 0, epoch: 0)) == .committed(version: 1))
            #expect(store.append(change("h", expected: 0, epoch: 0)) == .committed(version: 1))

            // Another connection holds the write lock: the no-op's transaction cannot start.
            let locker = try EventStore(path: path, options: StoreOptions(checkIntegrity: false))
            try locker.executeForTesting("BEGIN IMMEDIATE")
            guard case .failed(let busy) = store.append(keyedNoOp("g", at: 1, epoch: 0)) else {
                Issue.record("the no-op was expected to fail while the lock is held")
                return
            }
            #expect(busy.code == SQLITE_BUSY, "\(busy)")
            try locker.executeForTesting("ROLLBACK")
            locker.close()

            // Decided before the failure was known: still at version 1, so the version check
            // alone would let it through.
            expectFenced(store.append(change("g", expected: 1, epoch: 0)))
            #expect(try store.version(game: "g") == 1)
            #expect(try store.idempotencyRecords(game: "g").isEmpty, "the failed no-op left no record")
            // Other games, and callers without epochs, are not fenced.
            #expect(store.append(change("h", expected: 1, epoch: 0)) == .committed(version: 2))
            #expect(store.append(change("g", expected: 1, epoch: nil)) == .committed(version: 2))
            // Decided once the failure was known: commits.
            #expect(store.append(change("g", expected: 2, epoch: 1)) == .committed(version: 3))
            expectFenced(store.append(change("g", expected: 3, epoch: 0)))
            #expect(try store.allEvents("g").map(\.version) == [1, 2, 3])
        }
    }

    @Test func aConflictFencesTheRestOfItsEpochInTheSameBatch() throws {
        try withTemporaryDirectory { dir in
            let store = try EventStore(path: dir + "/log.sqlite")
            defer { store.close() }
            #expect(store.append(change("g", expected: 0, epoch: 4)) == .committed(version: 1))
            let results = store.append(batch: [
                keyedNoOp("g", at: 7, epoch: 4),            // decided on a version the log never had
                change("g", expected: 1, epoch: 4),         // behind it: fenced off
                change("g", expected: 1, epoch: 5),         // after the failure was learned: commits
            ])
            #expect(results.count == 3)
            #expect(results.first == .conflict(expected: 7, actual: 1))
            expectFenced(results[1])
            #expect(results.last == .committed(version: 2))
            #expect(try store.allEvents("g").map(\.version) == [1, 2])
        }
    }
}
