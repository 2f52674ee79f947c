import Foundation
import Testing
@testable import EventLog

@Suite struct ExpectedVersionTests {
    @Test func appendAtTheCurrentVersionCommitsAndVersionsContinueGaplesslyFromOne() throws {
        try withTemporaryDirectory { dir in
            let store = try EventStore(path: dir + "/log.sqlite")
            defer { store.close() }
            #expect(try store.version(game: "g") == 0)
            #expect(store.append(request("g", expected: 0, count: 2)) == .committed(version: 2))
            #expect(store.append(request("g", expected: 2, count: 3, first: 2)) == .committed(version: 5))
            #expect(store.append(request("g", expected: 5, first: 5)) == .committed(version: 6))
            let stored = try store.allEvents("g")
            #expect(stored.map(\.version) == [1, 2, 3, 4, 5, 6])
            #expect(stored.map(\.payload) == (0..<6).map { #"{"n":\#($0)}"# })
            #expect(stored[0] == StoredEvent(game: "g", version: 1, type: "tick", actor: "player-1",
                                             at: 1_700_000_000_000, idempotencyKey: nil, payload: #"{"n":0}"#))
            #expect(try store.version(game: "g") == 6)
            #expect(try store.games() == ["g"])
        }
    }

    @Test func appendBehindTheCurrentVersionIsAConflictNamingBothVersions() throws {
        try withTemporaryDirectory { dir in
            let store = try EventStore(path: dir + "/log.sqlite")
            defer { store.close() }
            #expect(store.append(request("g", expected: 0, count: 3)) == .committed(version: 3))
            #expect(store.append(request("g", expected: 1, first: 100)) == .conflict(expected: 1, actual: 3))
            #expect(try store.allEvents("g").map(\.version) == [1, 2, 3])
            #expect(try store.allEvents("g").allSatisfy { $0.payload != #"{"n":100}"# })
        }
    }

    @Test func appendAheadOfTheCurrentVersionIsAConflict() throws {
        try withTemporaryDirectory { dir in
            let store = try EventStore(path: dir + "/log.sqlite")
            defer { store.close() }
            #expect(store.append(request("g", expected: 4)) == .conflict(expected: 4, actual: 0))
            #expect(store.append(request("g", expected: 0)) == .committed(version: 1))
            #expect(store.append(request("g", expected: 2)) == .conflict(expected: 2, actual: 1))
            #expect(try store.version(game: "g") == 1)
        }
    }

    @Test func aBatchWithAConflictingMemberCommitsTheOthers() throws {
        try withTemporaryDirectory { dir in
            let store = try EventStore(path: dir + "/log.sqlite")
            defer { store.close() }
            let results = store.append(batch: [
                request("a", expected: 0, count: 2),
                request("b", expected: 0),
                request("a", expected: 0, first: 50),   // a is at 2 by now, inside the same batch
                request("a", expected: 2, first: 2),
                request("b", expected: 7),
            ])
            #expect(results == [
                .committed(version: 2), .committed(version: 1), .conflict(expected: 0, actual: 2),
                .committed(version: 3), .conflict(expected: 7, actual: 1),
            ])
            #expect(try store.allEvents("a").map(\.payload) == [#"{"n":0}"#, #"{"n":1}"#, #"{"n":2}"#])
            #expect(try store.games() == ["a", "b"])
        }
    }

    @Test func aMalformedRequestFailsAloneAndWritesNothing() throws {
        try withTemporaryDirectory { dir in
            let store = try EventStore(path: dir + "/log.sqlite")
            defer { store.close() }
            let results = store.append(batch: [
                request("g", expected: 0, snapshot: Snapshot(version: 5, state: "{}")),
                request("g", expected: 0),
            ])
            guard case .failed(let error) = results[0] else {
                Issue.record("expected a failure, got \(results[0])")
                return
            }
            #expect(error.message.contains("snapshot version 5"))
            #expect(results[1] == .committed(version: 1))
            #expect(try store.snapshots(game: "g").isEmpty)
        }
    }

    @Test func twoConnectionsAppendingAtTheSameExpectedVersionCommitExactlyOnce() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/log.sqlite"
            try EventStore(path: path).close()   // create the schema once
            let results = Locked<[AppendResult]>([])
            let ready = DispatchGroup()
            let go = DispatchSemaphore(value: 0)
            let finished = DispatchGroup()
            for thread in 0..<2 {
                ready.enter()
                finished.enter()
                Thread {
                    defer { finished.leave() }
                    let store: EventStore
                    // The loser waits on SQLite's lock while the winner commits with a full fsync,
                    // which a busy CI disk can stretch past the default 5 s; this bound only stops a hang.
                    do throws(StorageError) { store = try EventStore(path: path, options: StoreOptions(busyTimeoutMilliseconds: 30_000)) } catch {
                        results.withLock { $0.append(.failed(error)) }
                        ready.leave()
                        return
                    }
                    ready.leave()
                    go.wait()
                    let result = store.append(request("g", expected: 0, count: 2, first: thread * 10))
                    store.close()
                    results.withLock { $0.append(result) }
                }.start()
            }
            ready.wait()
            go.signal()
            go.signal()
            finished.wait()
            let outcome = results.withLock { $0 }
            #expect(outcome.filter { $0 == .committed(version: 2) }.count == 1, "\(outcome)")
            #expect(outcome.filter { $0 == .conflict(expected: 0, actual: 2) }.count == 1, "\(outcome)")
            let store = try EventStore(path: path)
            defer { store.close() }
            #expect(try store.allEvents("g").map(\.version) == [1, 2])
        }
    }

    @Test func aStaleVersionCacheIsNotTrustedAfterAnotherConnectionWrote() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/log.sqlite"
            let first = try EventStore(path: path)
            let second = try EventStore(path: path)
            defer { first.close(); second.close() }
            #expect(first.append(request("g", expected: 0)) == .committed(version: 1))
            #expect(second.append(request("g", expected: 1)) == .committed(version: 2))
            #expect(first.append(request("g", expected: 1)) == .conflict(expected: 1, actual: 2))
            #expect(first.append(request("g", expected: 2)) == .committed(version: 3))
        }
    }
}
