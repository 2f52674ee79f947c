@testable import Server
import Foundation
import JSON
import Testing

@Suite struct PinGuardTests {
    @Test func fiveWrongPinsAreFreeThenTheWaitDoublesUpToItsCap() {
        var guardian = PinGuard()
        let now: Int64 = 1_000_000
        for _ in 0..<PinGuard.freeAttempts { guardian.wrongPin("sam", now: now) }
        #expect(guardian.closedUntil("sam", now: now) == nil, "typos cost nothing")

        var waits: [Int64] = []
        for _ in 0..<14 {
            guardian.wrongPin("sam", now: now)
            waits.append((guardian.closedUntil("sam", now: now) ?? now) - now)
        }
        #expect(Array(waits.prefix(5)) == [1_000, 2_000, 4_000, 8_000, 16_000])
        #expect(waits.last == PinGuard.maxLockout)
        #expect(waits == waits.sorted(), "the wait never shrinks while the guesses go on")
        for _ in 0..<100 { guardian.wrongPin("sam", now: now) }
        #expect(guardian.closedUntil("sam", now: now) == now + PinGuard.maxLockout, "no overflow however long")

        #expect(guardian.closedUntil("mia", now: now) == nil, "counted per character")
        #expect(guardian.closedUntil("sam", now: now + PinGuard.maxLockout) == nil, "it opens again")
        guardian.rightPin("sam")
        guardian.wrongPin("sam", now: now)
        #expect(guardian.closedUntil("sam", now: now) == nil, "a right PIN starts the count over")
    }

    /// Over the wire: the guesses of several connections add up, the right PIN is refused
    /// too while the character is closed, and the holding device is never kept out.
    @Test func guessingPinsOverManyConnectionsIsStopped() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        // A clock that stands still: the lockout cannot run out while the test is slow.
        let server = try ServerHarness(dataDirectory: dir.path, clock: { 1_800_000_000_000 })
        defer { try? server.stop() }
        let holder = try server.connect()
        try holder.ok("claim", ["character": "sam", "device": "sams-phone"])

        for attempt in 0..<PinGuard.freeAttempts + 1 {
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
}
