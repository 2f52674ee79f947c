import Testing
@testable import Server

/// A subscriber's patches are held back only while its socket has a backlog: that backlog's
/// drain is what ends the hold. Output gathered this turn alone must not start one, since the
/// kernel may take it whole and then no drain would ever come.
@Suite struct PatchHoldRuleTests {
    @Test func withoutASocketBacklogNothingIsHeldHoweverMuchThisTurnGathered() {
        #expect(!ClientConnection.holdsPatch(backlog: 0, gathered: 10_000_000, incoming: 500, limit: 4_096, allOwedTooMuch: false))
        #expect(!ClientConnection.holdsPatch(backlog: 0, gathered: 0, incoming: 10_000_000, limit: 4_096, allOwedTooMuch: false))
    }

    @Test func withABacklogThePatchIsHeldOnlyPastTheBound() {
        #expect(!ClientConnection.holdsPatch(backlog: 1_000, gathered: 2_000, incoming: 1_096, limit: 4_096, allOwedTooMuch: false))
        #expect(ClientConnection.holdsPatch(backlog: 1_000, gathered: 2_000, incoming: 1_097, limit: 4_096, allOwedTooMuch: false))
        #expect(ClientConnection.holdsPatch(backlog: 5_000, gathered: 0, incoming: 1, limit: 4_096, allOwedTooMuch: false))
    }

    @Test func whileAllConnectionsAreOwedTooMuchAnyBacklogHolds() {
        #expect(ClientConnection.holdsPatch(backlog: 1, gathered: 0, incoming: 1, limit: 4_096, allOwedTooMuch: true))
        #expect(!ClientConnection.holdsPatch(backlog: 0, gathered: 10_000, incoming: 1, limit: 4_096, allOwedTooMuch: true),
                "no backlog, no drain to end the hold")
    }
}
