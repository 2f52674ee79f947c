import Foundation
import Testing
@testable import EventLog

@Suite struct EventWriterTests {
    @Test func concurrentSubmittersAllCompleteInSubmissionOrderWithGaplessVersions() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/log.sqlite"
            let writer = try EventWriter(path: path, maxBatchRequests: 64)
            let threads = 8
            let perThread = 150
            // Per game: the versions in the order their completions ran.
            let completed = Locked<[String: [Int64]]>([:])
            let done = DispatchGroup()
            for thread in 0..<threads {
                done.enter()
                Thread {
                    let game = "game-\(thread)"
                    for index in 0..<perThread {
                        done.enter()
                        // Each thread pipelines its own game: request n expects version n.
                        writer.submit(request(game, expected: Int64(index), first: index)) { result in
                            guard case .committed(let version) = result else {
                                Issue.record("\(game) request \(index): \(result)")
                                done.leave()
                                return
                            }
                            completed.withLock { $0[game, default: []].append(version) }
                            done.leave()
                        }
                    }
                    done.leave()
                }.start()
            }
            try #require(done.wait(timeout: .now() + 60) == .success, "the writer did not complete every request")
            writer.shutdown()
            writer.shutdown()   // idempotent

            let expected = (1...Int64(perThread)).map { $0 }
            let outcome = completed.withLock { $0 }
            #expect(outcome.count == threads)
            for (game, versions) in outcome { #expect(versions == expected, "\(game)") }

            let store = try EventStore(path: path)   // the writer closed its connection: no lock
            defer { store.close() }
            for thread in 0..<threads {
                let stored = try store.allEvents("game-\(thread)")
                #expect(stored.map(\.version) == expected)
                #expect(stored.map(\.payload) == (0..<perThread).map { #"{"n":\#($0)}"# })
            }
        }
    }

    @Test func queuedRequestsAreCheckedAgainstTheOnesBeforeThemInOrder() throws {
        try withTemporaryDirectory { dir in
            let writer = try EventWriter(path: dir + "/log.sqlite")
            defer { writer.shutdown() }
            // Parked before anything is queued, so the three requests are taken as one batch.
            let held = try holdWriter(writer) { _ in }
            let results = Locked<[AppendResult]>([])
            let done = DispatchGroup()
            // Two requests at expected 0, queued together: the second sees the first.
            for first in [0, 10, 20] {
                done.enter()
                writer.submit(request("g", expected: first == 20 ? 1 : 0, first: first)) { result in
                    results.withLock { $0.append(result) }
                    done.leave()
                }
            }
            held.release()
            try #require(done.wait(timeout: .now() + 30) == .success, "the writer did not complete every request")
            writer.shutdown()
            #expect(results.withLock { $0 } == [
                .committed(version: 1), .conflict(expected: 0, actual: 1), .committed(version: 2),
            ])
        }
    }

    @Test func submitAfterShutdownFailsAtOnce() throws {
        try withTemporaryDirectory { dir in
            let writer = try EventWriter(path: dir + "/log.sqlite")
            writer.shutdown()
            let result = Locked<AppendResult?>(nil)
            writer.submit(request("g", expected: 0)) { outcome in result.withLock { $0 = outcome } }
            guard case .failed(let error)? = result.withLock({ $0 }) else {
                Issue.record("expected an immediate failure")
                return
            }
            #expect(error.message.contains("shut down"))
        }
    }
}
