@testable import Server
import Testing

@Suite struct WriterStallWatchTests {
    @Test func aWriterThatKeepsFinishingIsNeverStuckHoweverLongTheQueue() {
        var watch = WriterStallWatch(threshold: 5_000)
        watch.handed(100, now: 0)
        for now in stride(from: UInt64(1_000), through: 60_000, by: 1_000) {
            #expect(watch.cameBack(now: now) == nil)
            watch.handed(1, now: now)
            #expect(watch.newStall(now: now + 4_999) == nil, "commits came back a moment ago")
        }
    }

    @Test func aStallIsSaidOnceAndItsEndWithHowLongItLasted() {
        var watch = WriterStallWatch(threshold: 5_000)
        #expect(watch.newStall(now: 60_000) == nil, "nothing waits")
        watch.handed(3, now: 10_000)
        #expect(watch.newStall(now: 14_999) == nil)
        #expect(watch.newStall(now: 16_000) == 6_000)
        #expect(watch.newStall(now: 26_000) == nil, "said once per stall")
        #expect(watch.waiting == 3)
        #expect(watch.cameBack(now: 30_000) == 20_000)
        #expect(watch.cameBack(now: 30_000) == nil)
        #expect(watch.newStall(now: 36_000) == 6_000, "one still waits: a second stall")
        #expect(watch.cameBack(now: 40_000) == 10_000)
        #expect(watch.waiting == 0)
        #expect(watch.newStall(now: 100_000) == nil)
    }
}
