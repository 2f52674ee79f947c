import CSQLite3
import Foundation
import SeededRandom
import Testing
@testable import EventLog

/// A payload big enough to need fresh pages, so a page cap makes its insert fail.
func bulkyRequest(_ game: String, expected: Int64, key: String) -> AppendRequest {
    let payload = #"{"note":"\#(String(repeating: "x", count: 20_000))"}"#
    return AppendRequest(
        game: game, expected: expected,
        events: [NewEvent(type: "note", actor: "p", at: 1, idempotencyKey: key, payload: payload)],
        idempotency: [IdempotencyRecord(identity: "p", key: key, fingerprint: "f", reply: "{}", version: expected + 1)])
}

func expectFull(_ result: AppendResult, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
    guard case .failed(let error) = result else {
        Issue.record("expected a failure, got \(result). \(comment?.rawValue ?? "")", sourceLocation: sourceLocation)
        return
    }
    #expect(error.code == SQLITE_FULL, "\(error)", sourceLocation: sourceLocation)
    #expect(error.description.contains("full"), "\(error)", sourceLocation: sourceLocation)
}

@Suite struct StorageFailureTests {
    @Test func aFailedWriteFailsTheWholeBatchAndLaterCommitsSucceed() throws {
        try withTemporaryDirectory { dir in
            let store = try EventStore(path: dir + "/log.sqlite")
            defer { store.close() }
            #expect(store.append(bulkyRequest("g", expected: 0, key: "k0")) == .committed(version: 1))
            #expect(store.append(request("h", expected: 0)) == .committed(version: 1))
            let before = try store.allEvents("g")
            let recordsBefore = try store.idempotencyRecords(game: "g")

            let previousCap = try store.limitPages()
            let results = store.append(batch: [
                request("h", expected: 1, first: 1),   // small: would fit, but shares the batch
                bulkyRequest("g", expected: 1, key: "k1"),
                bulkyRequest("g", expected: 2, key: "k2"),
            ])
            #expect(results.count == 3)
            for result in results { expectFull(result) }
            #expect(try store.version(game: "g") == 1)
            #expect(try store.version(game: "h") == 1)
            #expect(try store.allEvents("g") == before)
            #expect(try store.idempotencyRecords(game: "g") == recordsBefore)

            try store.restorePageLimit(previousCap)
            #expect(store.append(batch: [
                bulkyRequest("g", expected: 1, key: "k1"),
                request("h", expected: 1, first: 1),
            ]) == [.committed(version: 2), .committed(version: 2)])
            #expect(try store.allEvents("g").map(\.version) == [1, 2])
            #expect(try store.idempotencyRecords(game: "g").map(\.key) == ["k0", "k1"])
        }
    }

    @Test func theWriterFailsTheWholeBatchThenRecovers() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/log.sqlite"
            let writer = try EventWriter(path: path)
            defer { writer.shutdown() }
            let results = Locked<[AppendResult]>([])
            let done = DispatchGroup()
            func submit(_ append: AppendRequest) {
                done.enter()
                writer.submit(append) { result in
                    results.withLock { $0.append(result) }
                    done.leave()
                }
            }
            submit(bulkyRequest("g", expected: 0, key: "k0"))
            // The failing requests must be ONE transaction. The writer takes everything queued at
            // once, so jobs queued behind a `perform` while it is still waking up would join that
            // perform's batch and be flushed apart from the rest. Hence: wait until the writer is
            // parked inside the perform, and only then queue the batch.
            let held = try holdWriter(writer) { store throws(StorageError) in try store.limitPages() }
            submit(bulkyRequest("g", expected: 1, key: "k1"))
            submit(request("h", expected: 0))
            submit(bulkyRequest("g", expected: 2, key: "k2"))
            held.release()
            let previousCap = try held.result.get()
            let restored = Locked<Result<Void, StorageError>?>(nil)
            writer.perform { store in
                restored.withLock { $0 = Result { () throws(StorageError) in try store.restorePageLimit(previousCap) } }
            }
            submit(bulkyRequest("g", expected: 1, key: "k1"))
            submit(request("h", expected: 0))
            try #require(done.wait(timeout: .now() + 30) == .success, "the writer did not complete every request")
            writer.shutdown()
            try #require(restored.withLock { $0 } != nil)
            try restored.withLock { $0 }?.get()

            let outcome = results.withLock { $0 }
            try #require(outcome.count == 6)
            #expect(outcome.first == .committed(version: 1))
            for result in outcome[1...3] { expectFull(result) }
            #expect(Array(outcome[4...]) == [.committed(version: 2), .committed(version: 1)])

            let store = try EventStore(path: path)
            defer { store.close() }
            #expect(try store.allEvents("g").map(\.version) == [1, 2])
            #expect(try store.idempotencyRecords(game: "g").map(\.key) == ["k0", "k1"])
            #expect(try store.allEvents("h").map(\.version) == [1])
        }
    }
}

@Suite struct OpeningTests {
    @Test func garbageOverTheWholeFileIsRefusedWithAClearError() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/log.sqlite"
            let store = try EventStore(path: path)
            #expect(store.append(request("g", expected: 0)) == .committed(version: 1))
            store.close()
            var random = SplitMix64(seed: 99)
            let garbage = Data((0..<8192).map { _ in UInt8(truncatingIfNeeded: random.next()) })
            try garbage.write(to: URL(fileURLWithPath: path))
            do throws(StorageError) {
                let reopened = try EventStore(path: path)
                reopened.close()
                Issue.record("a garbage file was accepted")
            } catch {
                #expect(error.code == SQLITE_NOTADB, "\(error)")
                #expect(error.description.contains("not a database"), "\(error)")
            }
        }
    }

    @Test func garbageOverTheTablePagesIsRefusedWithAClearError() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/log.sqlite"
            let store = try EventStore(path: path)
            for version in 0..<40 { _ = store.append(bulkyRequest("g", expected: Int64(version), key: "k\(version)")) }
            #expect(try store.version(game: "g") == 40)
            store.close()   // the last connection's close checkpoints the WAL into the file
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
            let size = try handle.seekToEnd()
            #expect(size > 100_000)
            // Keep the header and schema page intact; trash every other page.
            var random = SplitMix64(seed: 7)
            try handle.seek(toOffset: 4096)
            handle.write(Data((0..<Int(size) - 4096).map { _ in UInt8(truncatingIfNeeded: random.next()) }))
            try handle.close()
            do throws(StorageError) {
                let reopened = try EventStore(path: path)
                reopened.close()
                Issue.record("a corrupt file was accepted")
            } catch {
                #expect(error.code == SQLITE_CORRUPT, "\(error)")
                #expect(!error.message.isEmpty, "\(error)")
            }
        }
    }

    @Test func aNewerSchemaVersionIsRefused() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/log.sqlite"
            let store = try EventStore(path: path)
            try store.executeForTesting("PRAGMA user_version=\(Schema.currentVersion + 1)")
            store.close()
            do throws(StorageError) {
                let reopened = try EventStore(path: path)
                reopened.close()
                Issue.record("a newer schema was accepted")
            } catch {
                #expect(error.message.contains("newer"), "\(error)")
            }
        }
    }

    @Test func aReadOnlyStoreReadsButRefusesAppends() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/log.sqlite"
            let store = try EventStore(path: path)
            #expect(store.append(request("g", expected: 0)) == .committed(version: 1))
            let reader = try EventStore(path: path, options: StoreOptions(readOnly: true))
            defer { reader.close(); store.close() }
            #expect(try reader.version(game: "g") == 1)
            guard case .failed(let error) = reader.append(request("g", expected: 1)) else {
                Issue.record("a read-only store appended")
                return
            }
            #expect(error.code == SQLITE_READONLY)
        }
    }
}
