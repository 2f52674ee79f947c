import Testing
@testable import Domain

/// `GameState.timeline(after:)`, the `timeline` op's page: the entries with `seq` above `after`.
@Suite struct TimelinePageTests {
    static func state(seqs: [Int]) -> GameState {
        var state = GameState()
        state.timeline = seqs.map { TimelineEntry(seq: $0, at: Millis(0), kind: .challengeCompleted, ref: nil, title: "t", subtitle: "s", from: nil) }
        return state
    }

    @Test(arguments: [0, 1, 4, 9, 10, 11, 1_000, Int.max, -3])
    func aPageStartsRightAfterItsPlace(after: Int) {
        let state = Self.state(seqs: Array(1...10))
        #expect(state.timeline(after: after).map(\.seq) == state.timeline.map(\.seq).filter { $0 > after })
    }

    @Test func entriesNotNumberedInOrderAreStillFoundByTheirNumbers() {
        let state = Self.state(seqs: [1, 2, 5, 6, 9])
        #expect(state.timeline(after: 2).map(\.seq) == [5, 6, 9])
        #expect(state.timeline(after: 5).map(\.seq) == [6, 9])
        #expect(state.timeline(after: 0).map(\.seq) == [1, 2, 5, 6, 9])
    }
}
