import Domain

/// Wrong PINs per character, so that a 4-digit PIN cannot be guessed by trying them all: a
/// takeover gives the guesser the character's view (gift contents, for the organizer's
/// character every dare) and a voice in the game under that character's name.
///
/// The first `freeAttempts` wrong PINs in a row cost nothing (a typo, a fumbled phone). After
/// that each wrong PIN closes the character to PIN claims for a while, doubling from one second
/// up to `maxLockout`, however many connections the guesses come from. A right PIN starts the
/// count over. Claims without a PIN (a free character, the holding device again) never wait.
/// Memory only: a restart forgets the counts, which no guesser can cause.
struct PinGuard {
    static let freeAttempts = 5
    static let maxLockout: Millis = 15 * 60 * 1000

    private var wrong: [String: (count: Int, closedUntil: Millis)] = [:]

    /// When PIN claims of `character` may come again, if not yet.
    func closedUntil(_ character: String, now: Millis) -> Millis? {
        guard let entry = wrong[character], entry.closedUntil > now else { return nil }
        return entry.closedUntil
    }

    mutating func wrongPin(_ character: String, now: Millis) {
        let count = (wrong[character]?.count ?? 0) + 1
        var closedUntil = now
        if count > Self.freeAttempts {
            // 1 s, 2 s, 4 s, ... (the exponent is capped before it can overflow).
            let lockout = min(Self.maxLockout, Millis(1_000) << min(count - Self.freeAttempts - 1, 20))
            closedUntil = now + lockout
        }
        wrong[character] = (count, closedUntil)
    }

    mutating func rightPin(_ character: String) { wrong[character] = nil }
}
