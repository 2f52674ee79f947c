import Domain
import Testing

@Suite struct SeedCommandTests {
    @Test func seedingAnEmptyGameCommitsTheContentWithItsHash() {
        let after = Scenario.empty.when(.system, .seed(Fixture.content, hash: "abc"))
            .then([.gameSeeded(content: Fixture.content, hash: "abc")])
        let state = after.state
        #expect(state.isSeeded && state.seedHash == "abc" && state.version == 1)
        #expect(state.title == "Mia's 30th (fixture)" && state.day == 1 && state.points == 0)
        #expect(state.characters.count == 5 && state.challenges.count == 15 && state.rewards.count == 9)
        #expect(state.birthdayCharacter?.id == "mia")
        #expect(state.sortedChallenges.map(\.id) == Fixture.challengeIDs)
        #expect(state.sortedRewards.map(\.id) == Fixture.rewardIDs)
        #expect(state.characters.values.allSatisfy { !$0.isClaimed })
    }

    @Test func seedingTheSameContentAgainIsANoOp() {
        given().when(.system, .seed(Fixture.content, hash: Fixture.hash)).thenNothingHappens()
        given(.pointsAdjusted(delta: 5, reason: "r")).when(admin, .seed(Fixture.content, hash: Fixture.hash)).thenNothingHappens()
    }

    @Test func otherContentOnAGameWithEventsIsRefused() {
        given().when(.system, .seed(Fixture.content, hash: "other")).thenRejected(.badRequest, "already has events")
    }

    @Test func invalidContentIsABadRequestNamingThePath() {
        var content = Fixture.content
        content.challenges[3].fields.points = -5
        Scenario.empty.when(.system, .seed(content, hash: "h"))
            .thenRejected(.badRequest, "Seed content is invalid: challenges[3].points: must be a positive integer up to 1000, got -5")
        content.rewards[0].fields.fromCharacter = "sammy"
        Scenario.empty.when(.system, .seed(content, hash: "h")).thenRejected(.badRequest, "(and 1 more)")
    }

    @Test func aCharacterCannotSeed() {
        Scenario.empty.when(sam, .seed(Fixture.content, hash: "h")).thenRejected(.forbidden, "Only the organizer can seed a game")
    }
}
