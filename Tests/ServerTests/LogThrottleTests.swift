@testable import Server
import Testing

@Suite struct LogThrottleTests {
    @Test func theFirstOfABurstIsLoggedAtOnceAndTheRestOnceTheIntervalHasPassed() {
        var throttle = LogThrottle(intervalMilliseconds: 10_000)
        #expect(throttle.record(now: 1_000) == 1, "the first is logged at once")
        for moment in stride(from: UInt64(1_001), to: 6_000, by: 1) {
            #expect(throttle.record(now: moment) == nil)
        }
        #expect(throttle.takeUnlogged(now: 9_999) == nil, "not before the interval has passed")
        #expect(throttle.takeUnlogged(now: 11_000) == 4_999, "the tail of the burst, counted")
        #expect(throttle.takeUnlogged(now: 30_000) == nil, "nothing left to say")
        #expect(throttle.record(now: 30_001) == 1, "a new burst after a quiet interval is logged at once")
        #expect(throttle.record(now: 30_002) == nil)
        #expect(throttle.record(now: 40_001) == 2, "or with the count, when the next one comes after the interval")
    }

    @Test func eachKindIsThrottledOnItsOwnAndAStopTakesWhatIsLeft() {
        var warnings = ThrottledWarnings()
        #expect(warnings.record(.wrongPIN, now: 1_000) == 1)
        #expect(warnings.record(.wrongAdminKey, now: 1_001) == 1, "another kind's burst is its own")
        for moment in UInt64(1_002)..<1_005 { #expect(warnings.record(.wrongPIN, now: moment) == nil) }
        #expect(warnings.record(.wrongAdminKey, now: 1_005) == nil)
        #expect(warnings.takeUnlogged(now: 5_000).isEmpty, "not before the interval has passed")
        let atStop = warnings.takeUnlogged(now: nil)
        #expect(atStop.map(\.kind) == [.wrongAdminKey, .wrongPIN], "in the kinds' order")
        #expect(atStop.map(\.count) == [1, 3])
        #expect(warnings.takeUnlogged(now: nil).isEmpty, "nothing left to say")
        #expect(warnings.record(.wrongPIN, now: 20_000) == 1, "a report at the stop leaves the next burst its own")
    }
}
