import Logging

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

    /// The count not yet reported, once the interval since the last report has passed.
    mutating func takeUnlogged(now: UInt64) -> Int? {
        guard unlogged > 0, let last = lastLogged, now >= last + intervalMilliseconds else { return nil }
        return report(now: now)
    }

    /// The count not yet reported, however recent the last report: the last one, at a stop.
    mutating func takeAll() -> Int? {
        guard unlogged > 0 else { return nil }
        defer { unlogged = 0 }
        return unlogged
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

/// The server's throttled warnings, each kind with the words for the rest of its burst.
enum ThrottledWarning: CaseIterable {
    case commitFailed, commitUncertain, acceptFailed, crowdedNetwork, serverFull
    case wrongAdminKey, closedAdminSignIn, wrongPIN, closedClaim, changeOverBudget, requestOverBudget, unusableSnapshot
    case memoryShed

    var level: Logger.Level {
        switch self {
        case .commitFailed: .error
        case .commitUncertain: .critical
        default: .warning
        }
    }

    /// What the count of the rest of a burst is said with.
    var rest: Logger.Message {
        switch self {
        case .commitFailed: "more commits failed"
        case .commitUncertain: "more commits failed at the disk and may reappear after a crash"
        case .acceptFailed: "could not accept more connections"
        case .crowdedNetwork: "more connections refused: too many from one address"
        case .serverFull: "more connections refused: server full"
        case .wrongAdminKey: "more wrong admin keys"
        case .closedAdminSignIn: "more admin sign-ins refused after wrong keys"
        case .wrongPIN: "more wrong PINs"
        case .closedClaim: "more claims refused after wrong PINs"
        case .changeOverBudget: "more changes refused over changes_per_second"
        case .requestOverBudget: "more requests refused over requests_per_second"
        case .unusableSnapshot: "more resumes replayed from the first event past a snapshot that cannot be used"
        case .memoryShed: "more connections closed over max_total_queued_bytes"
        }
    }
}

/// One `LogThrottle` per kind of throttled warning.
struct ThrottledWarnings {
    private var throttles: [ThrottledWarning: LogThrottle] = [:]

    mutating func record(_ kind: ThrottledWarning, now: UInt64) -> Int? {
        throttles[kind, default: LogThrottle()].record(now: now)
    }

    mutating func forgetUnlogged(_ kind: ThrottledWarning) {
        throttles[kind]?.forgetUnlogged()
    }

    /// Every kind's count not yet said whose interval has passed (nil `now`: every count, for
    /// the last report at a stop), in a fixed order.
    mutating func takeUnlogged(now: UInt64?) -> [(kind: ThrottledWarning, count: Int)] {
        ThrottledWarning.allCases.compactMap { kind in
            let count = now.map { throttles[kind]?.takeUnlogged(now: $0) } ?? throttles[kind]?.takeAll()
            return count.map { (kind, $0) }
        }
    }
}
