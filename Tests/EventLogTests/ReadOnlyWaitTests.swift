import Foundation
import Testing
@testable import EventLog

/// A reader (`bq verify`, `bq log`, `bq backup`) meets a writer's lock now and then: a server
/// stopping, or recovering its WAL after a crash. It waits for it, up to the busy timeout, as
/// every read does, rather than failing at once with "database is locked".
@Suite struct ReadOnlyWaitTests {
    /// Confined by hand: the holder's thread makes it, the main thread waits for its signal.
    final class Holder: @unchecked Sendable {
        var store: EventStore?
        var outcome: Result<Void, any Error>?
    }

    @Test func aReadOnlyOpenWaitsForAWritersLock() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/log.sqlite"
            let setUp = try EventStore(path: path, options: StoreOptions(synchronous: .off))
            setUp.close()
            let holder = Holder()
            let locked = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), released = DispatchSemaphore(value: 0)
            let thread = Thread {
                // An exclusive lock in WAL mode keeps every other connection out, readers too.
                let store = try? EventStore(path: path, options: StoreOptions(synchronous: .off))
                try? store?.executeForTesting("PRAGMA locking_mode=EXCLUSIVE")
                try? store?.executeForTesting("BEGIN EXCLUSIVE")
                holder.store = store
                locked.signal()
                release.wait()
                try? store?.executeForTesting("COMMIT")
                store?.close()
                released.signal()
            }
            thread.start()
            locked.wait()
            try #require(holder.store != nil)
            // The reader starts while the lock is held, and is let through by its release,
            // which a second thread makes once the reader is waiting (or has failed at once).
            let reader = DispatchQueue(label: "reader")
            let done = DispatchSemaphore(value: 0)
            reader.async {
                do {
                    let store = try EventStore(path: path, options: StoreOptions(busyTimeoutMilliseconds: 60_000, readOnly: true))
                    store.close()
                    holder.outcome = .success(())
                } catch {
                    holder.outcome = .failure(error)
                }
                done.signal()
            }
            // A failure at once ends the reader before the lock goes; a wait does not.
            let endedWhileLocked = done.wait(timeout: .now() + .milliseconds(300)) == .success
            release.signal()
            released.wait()
            if !endedWhileLocked { done.wait() }
            #expect(!endedWhileLocked, "the reader did not wait for the lock: \(String(describing: holder.outcome))")
            if case .failure(let error)? = holder.outcome { Issue.record("the reader failed: \(error)") }
        }
    }
}
