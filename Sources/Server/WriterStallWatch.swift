/// Tells a disk that has stopped answering from one that is only busy: commits handed to the
/// writer that wait while none finishes for `threshold` milliseconds. Under load commits finish
/// all the time, so the time since the last one finished (not the age of the oldest waiting)
/// is what says the writer is stuck: a sync that never returns (a frozen or dead disk, a
/// network mount gone), or another process's lock. Players then see their changes pending with
/// no word why; the organizer's log says it. Loop thread only; times in steady milliseconds.
struct WriterStallWatch {
    let threshold: UInt64
    /// Commits handed to the writer and not yet back.
    private(set) var waiting = 0
    /// When a commit last came back, or the writer last went from idle to busy.
    private var lastProgress: UInt64 = 0
    /// When the stall being reported began; nil while none is.
    private var reportedSince: UInt64?

    init(threshold: UInt64) { self.threshold = threshold }

    mutating func handed(_ count: Int, now: UInt64) {
        if waiting == 0 { lastProgress = now }
        waiting += count
    }

    /// A commit came back, done or failed. Returns how long the writer had been stuck when a
    /// stall was reported, so that its end is reported too.
    mutating func cameBack(now: UInt64) -> UInt64? {
        waiting = max(0, waiting - 1)
        lastProgress = now
        defer { reportedSince = nil }
        return reportedSince.map { now - $0 }
    }

    /// How long the writer has been stuck, the first time it passes the threshold in one stall.
    mutating func newStall(now: UInt64) -> UInt64? {
        guard waiting > 0, reportedSince == nil, now >= lastProgress + threshold else { return nil }
        reportedSince = lastProgress
        return now - lastProgress
    }
}
