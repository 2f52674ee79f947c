/// Tells when much of the memory held for peers has been freed: the bytes queued for them
/// (`EventLoop.queuedWriteBytes`) have fallen by `threshold` from their highest since the last
/// time it said so. Clients that stop reading make the queue grow to its bounds; once they are
/// closed (or read it all) glibc keeps the freed memory for the process, which then stays at its
/// high-water mark (126 MiB with 31 MiB in use, seen in a soak): the server gives it back then.
/// Loop thread only.
struct QueueDrainWatch {
    let threshold: Int
    /// The most queued at the end of a turn since the last drop said.
    private(set) var highWater = 0

    init(threshold: Int) { self.threshold = threshold }

    /// At the end of every turn: a burst can come and go between two looks.
    mutating func note(queued: Int) {
        highWater = max(highWater, queued)
    }

    /// Whether the queue has fallen by `threshold` since its high water; counts from now if so.
    mutating func hasDrainedMuch(queuedNow: Int) -> Bool {
        guard highWater - queuedNow >= threshold else {
            highWater = max(highWater, queuedNow)
            return false
        }
        highWater = queuedNow
        return true
    }
}
