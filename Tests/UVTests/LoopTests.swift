import Foundation
import Testing
import UV

@Suite("Event loop, timers, turn hooks and signals")
struct LoopTests {
    @Test("a fresh loop runs and closes with no handle")
    func emptyLoopCloses() throws {
        let loop = try EventLoop()
        expectLoopClosesCleanly(loop)
    }

    @Test("closing a loop with an open handle throws busy and names the handle type")
    func closeWhileBusyNamesHandles() throws {
        let loop = try EventLoop()
        let timer = try LoopTimer(loop: loop)
        #expect(loop.openHandleCount == 1)
        let error = #expect(throws: UVError.self) { try loop.close() }
        #expect(error?.name == "EBUSY")
        #expect(error?.description.contains("timer") == true)
        timer.close()
        expectLoopClosesCleanly(loop)
    }

    @Test("a repeating timer fires N times, then stop() lets the loop end")
    func repeatingTimerStops() throws {
        let loop = try EventLoop()
        let timer = try LoopTimer(loop: loop)
        var fired = 0
        timer.start(afterMilliseconds: 1, repeatMilliseconds: 1) {
            fired += 1
            if fired == 5 { timer.stop() }
        }
        loop.run()  // returns because a stopped timer keeps nothing active
        #expect(fired == 5)
        #expect(loop.openHandleCount == 1)
        timer.close()
        timer.start(afterMilliseconds: 0) { Issue.record("a closed timer must not start") }
        expectLoopClosesCleanly(loop)
        #expect(fired == 5)
    }

    @Test("the turn hook runs after the turn's callbacks, before the loop blocks")
    func turnHookRunsEachTurn() throws {
        let loop = try EventLoop()
        let timer = try LoopTimer(loop: loop)
        var produced = 0
        var flushed = 0
        var pending = false
        let hook = try LoopTurnHook(loop: loop) {
            if pending {
                flushed += 1
                pending = false
            }
        }
        timer.start(afterMilliseconds: 1, repeatMilliseconds: 1) {
            #expect(!pending, "the hook must have flushed the previous turn")
            produced += 1
            pending = true
            if produced == 3 {
                timer.close()
            }
        }
        loop.run()  // the hook alone does not keep the loop running
        #expect(produced == 3)
        #expect(flushed == 3)
        hook.close()
        expectLoopClosesCleanly(loop)
    }

    @Test("idle work runs once per turn while started, keeps the loop turning, and lets it end once stopped")
    func idleWorkRunsWhileStarted() throws {
        let loop = try EventLoop()
        var turns = 0
        var runs = 0
        let hook = try LoopTurnHook(loop: loop) { turns += 1 }
        var work: LoopIdleWork?
        work = try LoopIdleWork(loop: loop) {
            runs += 1
            if runs == 3 { work?.stop() }
        }
        work?.start()
        work?.start()  // idempotent
        loop.run()  // nothing else is active: only the started work keeps the loop going
        #expect(runs == 3)
        #expect(turns >= 3, "a turn for each run")
        work?.close()
        hook.close()
        expectLoopClosesCleanly(loop)
    }

    @Test("a signal watcher receives SIGUSR1 sent to the process on the loop thread")
    func signalWatcher() throws {
        let loop = try EventLoop()
        var received: [Int32] = []
        var watcher: SignalWatcher?
        watcher = try SignalWatcher(loop: loop, signal: SIGUSR1) { signal in
            received.append(signal)
            watcher?.close()
        }
        // Process-directed rather than raise(): the test runner's threads may block signals,
        // and a thread-directed signal would then stay pending forever.
        kill(getpid(), SIGUSR1)
        expectLoopClosesCleanly(loop)
        #expect(received == [SIGUSR1])
    }
}
