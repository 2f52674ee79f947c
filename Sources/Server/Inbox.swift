import EventLog
import Foundation
import UV

/// Values handed from one worker thread (the writer, or the view rebuilder: an inbox each) to
/// the loop thread. The worker appends under the lock and wakes the loop; the loop takes
/// everything at once, since wake-ups coalesce. One producer per inbox: `held` groups the
/// posts of that producer, and two would interleave their groups.
final class Inbox<Item: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    // Both guarded by `lock`.
    private var items: [Item] = []
    /// Posted with more to come: not taken, and no wake-up, until the last of them is posted.
    private var held: [Item] = []
    private let wakeup: AsyncWakeup.Sender

    init(wakeup: AsyncWakeup.Sender) { self.wakeup = wakeup }

    /// Worker thread. With `hasMore`, `item` waits for the next post without it, so that the
    /// loop takes a group whole.
    func post(_ item: Item, hasMore: Bool = false) {
        lock.lock()
        if hasMore {
            held.append(item)
            lock.unlock()
            return
        }
        if !held.isEmpty {
            items += held
            held.removeAll(keepingCapacity: true)
        }
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
