@testable import Server
import Foundation
import JSON
import Testing

@Suite struct GuessGuardTests {
    @Test func fiveWrongPinsAreFreeThenTheWaitDoublesUpToItsCap() {
        var guardian = GuessGuard()
        let now: UInt64 = 1_000_000
        for _ in 0..<GuessGuard.freeAttempts { guardian.wrongGuess("sam", now: now) }
        #expect(guardian.closedUntil("sam", now: now) == nil, "typos cost nothing")

        var waits: [UInt64] = []
        for _ in 0..<14 {
            guardian.wrongGuess("sam", now: now)
            waits.append((guardian.closedUntil("sam", now: now) ?? now) - now)
        }
        #expect(Array(waits.prefix(5)) == [1_000, 2_000, 4_000, 8_000, 16_000])
        #expect(waits.last == GuessGuard.longestPinLockout)
        #expect(waits == waits.sorted(), "the wait never shrinks while the guesses go on")
        for _ in 0..<100 { guardian.wrongGuess("sam", now: now) }
        #expect(guardian.closedUntil("sam", now: now) == now + GuessGuard.longestPinLockout, "no overflow however long")

        #expect(guardian.closedUntil("mia", now: now) == nil, "counted per character")
        #expect(guardian.closedUntil("sam", now: now + GuessGuard.longestPinLockout) == nil, "it opens again")
        guardian.rightGuess("sam")
        guardian.wrongGuess("sam", now: now)
        #expect(guardian.closedUntil("sam", now: now) == nil, "a right PIN starts the count over")
    }

    @Test func theTableOfNamesStaysBoundedKeepingTheOnesClosedNow() {
        var guardian = GuessGuard()
        let now: UInt64 = 1_000_000
        for _ in 0...GuessGuard.freeAttempts { guardian.wrongGuess("persistent", now: now) }
        for address in 0..<GuessGuard.namesKept { guardian.wrongGuess("addr-\(address)", now: now) }
        #expect(guardian.countedNames <= GuessGuard.namesKept)
        #expect(guardian.closedUntil("persistent", now: now) != nil, "a name closed now is kept")
    }

    /// Over the wire: the guesses of several connections add up, the right PIN is refused
    /// too while the character is closed, and the holding device is never kept out.
    @Test func guessingPinsOverManyConnectionsIsStopped() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        // A clock that stands still: the lockout cannot run out while the test is slow.
        let server = try ServerHarness(dataDirectory: dir.path, steadyClock: { 1_000_000 })
        defer { try? server.stop() }
        let holder = try server.connect()
        try holder.ok("claim", ["character": "sam", "device": "sams-phone"])

        for attempt in 0..<GuessGuard.freeAttempts + 1 {
            let guesser = try server.connect()
            let pin = String(format: "%04d", attempt)
            #expect(try guesser.refusal("claim", ["character": "sam", "device": .string("guesser-\(attempt)"), "pin": .string(pin)]) == "forbidden")
        }
        let lucky = try server.connect()
        let refused = try lucky.call("claim", ["character": "sam", "device": "guesser-lucky", "pin": "7305"])
        #expect(refused.errorCode == "rate_limited", "\(refused.serialized())")
        #expect(refused["error"]?["message"]?.stringValue?.contains("try again in") == true)

        // Nothing changed hands, and the holder's own claims and session still work.
        #expect(try holder.ok("whoami")["result"]?["character"] == "sam")
        let sameDevice = try server.connect()
        #expect(try sameDevice.ok("claim", ["character": "sam", "device": "sams-phone"])["result"]?["character"] == "sam")
        try server.connect().ok("claim", ["character": "mia", "device": "mias-phone"])
        #expect(try server.connect().refusal("claim", ["character": "mia", "device": "guesser-0", "pin": "0000"]) == "forbidden",
                "other characters are not closed")
    }

    /// The right PIN starts the count of wrong ones afresh: the person who knows it, having
    /// mistyped it a few times, is not locked out by their own earlier typos next time.
    @Test func aSuccessfulTakeoverStartsTheCountOfWrongPinsAfresh() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path, steadyClock: { 1_000_000 })
        defer { try? server.stop() }
        try server.connect().ok("claim", ["character": "sam", "device": "sams-phone"])
        for attempt in 0..<GuessGuard.freeAttempts {
            #expect(try server.connect().refusal("claim", ["character": "sam", "device": "tablet", "pin": .string("000\(attempt)")]) == "forbidden")
        }
        try server.connect().ok("claim", ["character": "sam", "device": "tablet", "pin": "7305"])
        #expect(try server.connect().refusal("claim", ["character": "sam", "device": "laptop", "pin": "0009"]) == "forbidden",
                "one typo after the count started afresh is free")
        try server.connect().ok("claim", ["character": "sam", "device": "laptop", "pin": "7305"])
    }

    /// With `claims_need_pin`, wrong PINs for a character nobody holds close it to its owner
    /// too (their claim needs the PIN); the organizer's unclaim, which frees nothing there,
    /// still opens it.
    @Test func anUnclaimOpensAFreeCharacterThatWrongPinsClosed() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path, configure: { $0.claimsNeedPIN = true },
                                       steadyClock: { 1_000_000 })
        defer { try? server.stop() }
        for attempt in 0..<GuessGuard.freeAttempts + 1 {
            #expect(try server.connect().refusal("claim", ["character": "dani", "device": "prankster", "pin": .string("000\(attempt)")])
                == "forbidden")
        }
        #expect(try server.connect().refusal("claim", ["character": "dani", "device": "danis-phone", "pin": "5517"]) == "rate_limited")
        let admin = try server.connect()
        _ = try admin.signInAsAdmin()
        let version = try admin.currentVersion()
        try admin.ok("unclaim", ["character": "dani"])
        #expect(try admin.currentVersion() == version, "nobody held dani: nothing committed")
        try server.connect().ok("claim", ["character": "dani", "device": "danis-phone", "pin": "5517"])
    }

    /// A configured admin key may be short: guessing it is slowed the same way, for a minute
    /// at most, so the organizer's console is never kept out for long.
    @Test func guessingTheAdminKeyIsStoppedForAMinuteAtMost() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let now = LockedBox<UInt64>(1_000_000)
        let server = try ServerHarness(dataDirectory: dir.path, steadyClock: { now.value })
        defer { try? server.stop() }
        for attempt in 0..<GuessGuard.freeAttempts + 1 {
            let guesser = try server.connect()
            #expect(try guesser.refusal("admin", ["key": .string("guess-\(attempt)")]) == "unauthenticated")
        }
        let organizer = try server.connect()
        let refused = try organizer.call("admin", ["key": .string(ServerHarness.adminKey)])
        #expect(refused.errorCode == "rate_limited", "\(refused.serialized())")
        #expect(refused["error"]?["message"]?.stringValue?.contains("try again in 1 s") == true, "\(refused.serialized())")

        // However long the guessing goes on, the wait stays within a minute.
        for attempt in 0..<30 {
            now.update { $0 += 60_000 }
            #expect(try organizer.refusal("admin", ["key": .string("more-\(attempt)")]) == "unauthenticated")
        }
        let waiting = try organizer.call("admin", ["key": .string(ServerHarness.adminKey)])
        #expect(waiting["error"]?["message"]?.stringValue?.contains("try again in 60 s") == true, "\(waiting.serialized())")
        now.update { $0 += 60_000 }
        #expect(try organizer.ok("admin", ["key": .string(ServerHarness.adminKey)])["result"]?["role"] == "admin")
    }

    /// A key of 32 characters or more (the generated one has 64) is beyond guessing: wrong
    /// keys are refused and counted for the log, but nobody is ever made to wait.
    @Test func aLongAdminKeyIsNeverGuardedSoNobodyCanKeepTheOrganizerOut() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let key = String(repeating: "k", count: GameServer.guessableAdminKeyLength)
        let server = try ServerHarness(dataDirectory: dir.path) { $0.adminKey = key }
        defer { try? server.stop() }
        let guesser = try server.connect()
        for attempt in 0..<3 * GuessGuard.freeAttempts {
            #expect(try guesser.refusal("admin", ["key": .string("guess-\(attempt)")]) == "unauthenticated")
        }
        #expect(try server.connect().ok("admin", ["key": .string(key)])["result"]?["role"] == "admin")
    }
}
