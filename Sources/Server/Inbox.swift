import EventLog
import Foundation
import UV

/// Values handed from a worker thread (the writer, the view rebuilder) to the loop thread. The
/// worker appends under the lock and wakes the loop; the loop takes everything at once, since
/// wake-ups coalesce.
final class Inbox<Item: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by `lock`.
    private var items: [Item] = []
    private let wakeup: AsyncWakeup

    init(wakeup: AsyncWakeup) { self.wakeup = wakeup }

    /// Worker thread.
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

/// The writer's answer to one command.
struct CommitOutcome: Sendable {
    let game: String
    let seq: UInt64
    let result: AppendResult
}
