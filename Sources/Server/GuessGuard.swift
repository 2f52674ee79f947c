/// Wrong guesses of a short secret, so that it cannot be found by trying them all: a
/// character's PIN (a takeover gives the guesser the character's view, for the organizer's
/// character every dare, and a voice in the game under that name), and the admin key (a
/// configured one may be short).
///
/// The first `freeAttempts` wrong guesses in a row for one name cost nothing (a typo, a
/// fumbled phone). After that each wrong guess closes the name to guesses for a while,
/// doubling from one second up to `maxLockout`, however many connections the guesses come
/// from. A right guess starts the count over. Times are steady milliseconds: a wall clock
/// stepped back would lengthen a lockout, stepped forward lift it. Memory only: a restart
/// forgets the counts, which no guesser can cause.
struct GuessGuard {
    static let freeAttempts = 5
    /// For PINs; the organizer's `unclaim` opens a character that someone keeps closed (it
    /// starts the count over, and frees the character).
    static let longestPinLockout: UInt64 = 15 * 60 * 1000

    /// The longest wait one wrong guess may cause.
    let maxLockout: UInt64

    init(maxLockout: UInt64 = GuessGuard.longestPinLockout) {
        self.maxLockout = maxLockout
    }

    private var wrong: [String: (count: Int, closedUntil: UInt64)] = [:]
    /// Past this many names (addresses, for admin keys: a guesser may have many), the ones not
    /// closed right now are forgotten, so the table cannot grow without bound.
    static let namesKept = 10_000

    /// When guesses for `name` (a character's PIN, an address's admin keys) may come again, if not yet.
    func closedUntil(_ name: String, now: UInt64) -> UInt64? {
        guard let entry = wrong[name], entry.closedUntil > now else { return nil }
        return entry.closedUntil
    }

    /// The whole seconds (at least 1) until guesses for `name` may come again, if not yet.
    func secondsToWait(_ name: String, now: UInt64) -> Int? {
        closedUntil(name, now: now).map { Int(max(1, ($0 - now + 999) / 1000)) }
    }

    mutating func wrongGuess(_ name: String, now: UInt64) {
        let count = (wrong[name]?.count ?? 0) + 1
        var closedUntil = now
        if count > Self.freeAttempts {
            // 1 s, 2 s, 4 s, ... (the exponent is capped before it can overflow).
            let lockout = min(maxLockout, UInt64(1_000) << min(count - Self.freeAttempts - 1, 20))
            closedUntil = now + lockout
        }
        wrong[name] = (count, closedUntil)
        if wrong.count > Self.namesKept {
            wrong = wrong.filter { $0.value.closedUntil > now }
        }
    }

    mutating func rightGuess(_ name: String) { wrong[name] = nil }

    /// How many names have wrong guesses counted (for tests).
    var countedNames: Int { wrong.count }
}
