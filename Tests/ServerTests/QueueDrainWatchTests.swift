@testable import Server
import Testing

@Suite struct QueueDrainWatchTests {
    @Test func aBurstThatCameAndWentBetweenTwoLooksIsSeen() {
        var watch = QueueDrainWatch(threshold: 100)
        for queued in [0, 40, 300, 120, 10] { watch.note(queued: queued) }
        #expect(watch.hasDrainedMuch(queuedNow: 10) == true)
        #expect(watch.hasDrainedMuch(queuedNow: 10) == false, "said once per drop")
    }

    @Test func aQueueThatStaysUpOrFallsALittleIsNotADrain() {
        var watch = QueueDrainWatch(threshold: 100)
        watch.note(queued: 500)
        #expect(watch.hasDrainedMuch(queuedNow: 500) == false)
        #expect(watch.hasDrainedMuch(queuedNow: 401) == false, "99 bytes freed")
        #expect(watch.hasDrainedMuch(queuedNow: 400) == true)
    }

    @Test func aDropCountsFromTheHighestSinceTheLastOneSaid() {
        var watch = QueueDrainWatch(threshold: 100)
        watch.note(queued: 150)
        #expect(watch.hasDrainedMuch(queuedNow: 0) == true)
        watch.note(queued: 90)
        #expect(watch.hasDrainedMuch(queuedNow: 0) == false, "only 90 queued since")
        #expect(watch.hasDrainedMuch(queuedNow: 120) == false, "a rise seen at a look counts too")
        #expect(watch.hasDrainedMuch(queuedNow: 20) == true)
    }
}
