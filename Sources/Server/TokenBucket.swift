/// So many a second, with a burst of as many: each `take` spends a token, and tokens come
/// back at `perSecond` up to that burst.
struct TokenBucket {
    let perSecond: Double
    private var tokens: Double
    private var lastRefill: UInt64

    init(perSecond: Int, now: UInt64) {
        self.perSecond = Double(perSecond)
        tokens = Double(perSecond)
        lastRefill = now
    }

    /// Spends a token if there is one; `now` in milliseconds of a monotonic clock.
    mutating func take(now: UInt64) -> Bool {
        tokens = min(perSecond, tokens + Double(now &- lastRefill) * perSecond / 1000)
        lastRefill = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
