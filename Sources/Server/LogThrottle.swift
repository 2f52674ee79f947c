/// Something worth a warning that a peer can make happen as often as it likes (wrong admin
/// keys, refused connections): logged at most once per interval, with how many there were,
/// so that it cannot flood the log. The first of a burst is logged at once; the rest are
/// counted and reported by `takeUnlogged` once the interval has passed (the server asks on a
/// timer), so the end of a burst is not left unsaid.
struct LogThrottle {
    let intervalMilliseconds: UInt64
    private var unlogged = 0
    private var lastLogged: UInt64?

    init(intervalMilliseconds: UInt64 = 10_000) {
        self.intervalMilliseconds = intervalMilliseconds
    }

    /// Counts one; returns how many to report (this one included) when it is time to log.
    mutating func record(now: UInt64) -> Int? {
        unlogged += 1
        if let last = lastLogged, now < last + intervalMilliseconds { return nil }
        return report(now: now)
    }

    /// The count not yet reported, once the interval since the last report has passed (`now`
    /// of `.max`: at once, for the last report at a stop).
    mutating func takeUnlogged(now: UInt64) -> Int? {
        guard unlogged > 0, let last = lastLogged, now >= last + intervalMilliseconds else { return nil }
        return report(now: now)
    }

    /// Drops the count not yet reported (a later message accounts for it).
    mutating func forgetUnlogged() {
        unlogged = 0
    }

    private mutating func report(now: UInt64) -> Int {
        lastLogged = now
        defer { unlogged = 0 }
        return unlogged
    }
}
