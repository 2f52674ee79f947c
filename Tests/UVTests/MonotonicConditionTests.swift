import Foundation
import POSIXSupport
import Testing

/// The client's waits: woken by a broadcast, or told that their deadline on the monotonic clock
/// has passed.
@Suite struct MonotonicConditionTests {
    @Test func aWaitWhoseDeadlineHasPassedSaysSo() {
        let condition = MonotonicCondition()
        condition.lock()
        defer { condition.unlock() }
        #expect(!condition.wait(untilMonotonic: monotonicNanoseconds()))
        #expect(!condition.wait(untilMonotonic: 0))
    }

    @Test func aDeadlineIsNeverBeforeNowNorPastThirtyYears() {
        let now = monotonicNanoseconds()
        for seconds in [-1, .nan, 0] as [Double] { #expect((now...now + 1_000_000_000).contains(monotonicDeadline(after: seconds))) }
        for seconds in [.infinity, 1e300] as [Double] { #expect(monotonicDeadline(after: seconds) >= now + 1_000_000_000 * 1_000_000_000) }
    }

    @Test func aBroadcastWakesAWaiterBeforeItsDeadline() {
        final class Flag: @unchecked Sendable { var raised = false }  // guarded by `condition`
        let condition = MonotonicCondition(), flag = Flag()
        let raiser = Thread {
            condition.lock()
            flag.raised = true
            condition.broadcast()
            condition.unlock()
        }
        condition.lock()
        raiser.start()
        var woken = true
        // An hour away: only the broadcast can end these waits (a wake-up without one loops).
        let deadline = monotonicNanoseconds() + 3_600_000_000_000
        while !flag.raised && woken { woken = condition.wait(untilMonotonic: deadline) }
        condition.unlock()
        #expect(flag.raised && woken)
    }
}
