import Foundation
import Testing
import UV

@Suite("Async wake-up across threads")
struct AsyncWakeupTests {
    @Test("10,000 sends from 4 threads coalesce; draining the queue sees every item")
    func coalescingSendsFromFourThreads() throws {
        let loop = try EventLoop()
        let queue = Locked<[Int]>([])
        let threads = 4
        let perThread = 2_500
        var callbacks = 0
        var drained = 0
        var wakeup: AsyncWakeup?
        wakeup = try AsyncWakeup(loop: loop) {
            callbacks += 1
            let items = queue.withLock { items in
                defer { items.removeAll() }
                return items
            }
            drained += items.count
            if drained == threads * perThread { wakeup?.close() }
        }
        let sender = try #require(wakeup).sender
        for thread in 0..<threads {
            onNewThread {
                for item in 0..<perThread {
                    queue.withLock { $0.append(thread * perThread + item) }
                    sender.send()
                }
            }
        }
        loop.run()
        #expect(callbacks >= 1)
        #expect(drained == threads * perThread)

        // After close, send is a no-op: nothing is delivered and nothing crashes.
        let callbacksBefore = callbacks
        sender.send()
        wakeup?.close()
        loop.runNoWait()
        #expect(callbacks == callbacksBefore)
        expectLoopClosesCleanly(loop)
    }
}
