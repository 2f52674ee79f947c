import Foundation
import Testing
@testable import EventLog

@Suite struct BackgroundReaderTests {
    @Test func jobsRunInTheOrderGivenOnAStoreThatSeesCommitsAndCannotWrite() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/log.sqlite"
            let store = try EventStore(path: path)
            defer { store.close() }
            #expect(store.append(request("main", expected: 0, count: 3)) == .committed(version: 3))
            let reader = try BackgroundReader(path: path, options: StoreOptions(), name: "test-reader")
            defer { reader.stop() }
            let seen = Locked<[String]>([])
            let done = DispatchSemaphore(value: 0)
            for game in ["main", "other", "main"] {
                reader.perform { store in
                    let version = (try? store.version(game: game)) ?? -1
                    seen.withLock { $0.append("\(game) \(version)") }
                }
            }
            reader.perform { store in
                let outcome = if case .committed = store.append(request("main", expected: 3)) { "wrote" } else { "refused" }
                seen.withLock { $0.append(outcome) }
                done.signal()
            }
            #expect(done.wait(timeout: .now() + 30) == .success)
            #expect(seen.withLock { $0 } == ["main 3", "other 0", "main 3", "refused"])
            #expect(try store.version(game: "main") == 3)
        }
    }

    @Test func afterStopNoJobIsTaken() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/log.sqlite"
            try EventStore(path: path).close()
            let reader = try BackgroundReader(path: path, options: StoreOptions(), name: "test-reader")
            reader.stop()
            #expect(!reader.perform { _ in Issue.record("a job ran after stop") })
            reader.stop()
        }
    }
}
