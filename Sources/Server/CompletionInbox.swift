import EventLog
import Foundation
import UV

/// The writer thread's answers, handed to the loop thread. The writer appends
/// under the lock and wakes the loop; the loop takes everything at once, since
/// wake-ups coalesce.
final class CompletionInbox: @unchecked Sendable {
    struct Item: Sendable {
        let game: String
        let seq: UInt64
        let result: AppendResult
    }

    private let lock = NSLock()
    private var items: [Item] = []
    private let wakeup: AsyncWakeup

    init(wakeup: AsyncWakeup) { self.wakeup = wakeup }

    /// Writer thread.
    func post(_ item: Item) {
        lock.lock()
        items.append(item)
        lock.unlock()
        wakeup.send()
    }

    /// Loop thread.
    func takeAll() -> [Item] {
        lock.lock()
        defer { lock.unlock() }
        let taken = items
        items = []
        return taken
    }
}
