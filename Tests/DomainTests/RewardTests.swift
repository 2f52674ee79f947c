import Domain
import Testing

/// Every reward of the fixture but `except`, unlocked for free: the step before "the last one".
func allRewardsUnlocked(except last: String) -> Scenario {
    Fixture.rewardIDs.filter { $0 != last }
        .reduce(Scenario.seeded) { $0.and(.rewardUnlocked(reward: $1, cost: 0, forced: true)) }
}

@Suite struct UnlockRewardTests {
    @Test func unlockingDeductsTheCostMarksItAndAddsATimelineEntry() {
        let outcome = given(.pointsAdjusted(delta: 120, reason: "head start")).when(mia, .unlockReward(reward: "r02"))
        let after = outcome.then([.rewardUnlocked(reward: "r02", cost: 50, forced: false)])
        let state = after.state
        #expect(state.points == 70 && state.earned == 120 && state.spent == 50)
        #expect(state.rewards["r02"]?.unlockedAt == outcome.context.at)
        #expect(state.rewardsUnlocked == 1 && !state.hasFinalBadge)
        #expect(state.timeline.map(\.fields) == [Entry(seq: 1, at: outcome.context.at, kind: .rewardUnlocked, ref: "r02",
                                                 title: "Gift r02", subtitle: "-50 ✦", from: "Family")])
    }

    @Test func exactlyEnoughPointsIsEnough() {
        let after = given(.pointsAdjusted(delta: 100, reason: "r")).when(mia, .unlockReward(reward: "r04"))
            .then([.rewardUnlocked(reward: "r04", cost: 100, forced: false)])
        #expect(after.state.points == 0)
    }

    @Test func tooFewPointsIsRefusedWithTheBalanceAndTheCost() {
        given(.pointsAdjusted(delta: 40, reason: "r")).when(mia, .unlockReward(reward: "r04"))
            .thenRejected(.insufficientPoints, "Not enough points: have 40, need 100")
    }

    @Test func anUnlockedRewardIsRefusedAndCostsNothing() {
        given(.pointsAdjusted(delta: 500, reason: "r"), .rewardUnlocked(reward: "r02", cost: 50, forced: false))
            .when(mia, .unlockReward(reward: "r02"))
            .thenRejected(.alreadyUnlocked, "\"Gift r02\" is already unlocked")
    }

    @Test func anUnknownRewardIsNotFound() {
        given().when(mia, .unlockReward(reward: "r99")).thenRejected(.notFound, "No reward \"r99\"")
    }

    @Test(arguments: [sam, priya, theo, dani, admin])
    func onlyTheBirthdayPersonUnlocks(actor: Actor) {
        given(.pointsAdjusted(delta: 500, reason: "r")).when(actor, .unlockReward(reward: "r02"))
            .thenRejected(.forbidden, "Only the birthday person can unlock a reward")
    }

    @Test func theLastLockedRewardBringsTheFinalBadgeInTheSameDecision() {
        let outcome = allRewardsUnlocked(except: "r09").and(.pointsAdjusted(delta: 50, reason: "r"))
            .when(mia, .unlockReward(reward: "r09"))
        let after = outcome.then([.rewardUnlocked(reward: "r09", cost: 50, forced: false), .finalBadgeUnlocked(forced: false)])
        let state = after.state
        #expect(state.hasFinalBadge && state.finalBadgeAt == outcome.context.at && !state.finalBadgeForced)
        #expect(state.rewardsUnlocked == 9 && state.points == 0)
        #expect(state.timeline.suffix(2).map(\.kind) == [.rewardUnlocked, .finalBadge])
        #expect(state.timeline.last?.fields == Entry(seq: 10, at: outcome.context.at, kind: .finalBadge, ref: nil,
                                                     title: "Final badge unlocked", subtitle: "9 of 9 gifts", from: nil))
    }

    @Test func aBadgeTriggeredEarlyIsNotUnlockedTwice() {
        allRewardsUnlocked(except: "r09").and(.finalBadgeUnlocked(forced: true)).and(.pointsAdjusted(delta: 50, reason: "r"))
            .when(mia, .unlockReward(reward: "r09"))
            .then([.rewardUnlocked(reward: "r09", cost: 50, forced: false)])
    }
}

@Suite struct ForceUnlockTests {
    @Test(arguments: [sam, admin])
    func withDeductionTheCostIsPaid(actor: Actor) {
        let after = given(.pointsAdjusted(delta: 80, reason: "r")).when(actor, .forceUnlock(reward: "r01", deduct: true))
            .then([.rewardUnlocked(reward: "r01", cost: 75, forced: true)])
        #expect(after.state.points == 5 && after.state.spent == 75)
        #expect(after.state.timeline.last?.subtitle == "-75 ✦")
        #expect(after.state.timeline.last?.from == "Sam")
    }

    @Test func withoutDeductionItIsFreeEvenWithNoPoints() {
        let after = given().when(sam, .forceUnlock(reward: "r04", deduct: false))
            .then([.rewardUnlocked(reward: "r04", cost: 0, forced: true)])
        #expect(after.state.points == 0 && after.state.spent == 0 && after.state.rewards["r04"]?.isUnlocked == true)
        #expect(after.state.timeline.last?.subtitle == "free")
    }

    @Test func deductingMoreThanTheBalanceIsRefusedWithNoPartialDeduction() {
        given(.pointsAdjusted(delta: 40, reason: "r")).when(admin, .forceUnlock(reward: "r04", deduct: true))
            .thenRejected(.insufficientPoints, "Not enough points: have 40, need 100")
    }

    @Test func anUnlockedRewardIsRefused() {
        given(.rewardUnlocked(reward: "r04", cost: 0, forced: true)).when(admin, .forceUnlock(reward: "r04", deduct: false))
            .thenRejected(.alreadyUnlocked, "already unlocked")
    }

    @Test func anUnknownRewardIsNotFound() {
        given().when(admin, .forceUnlock(reward: "zz", deduct: false)).thenRejected(.notFound, "No reward \"zz\"")
    }

    @Test(arguments: [mia, priya, theo, dani])
    func nobodyElseMayForce(actor: Actor) {
        given().when(actor, .forceUnlock(reward: "r01", deduct: false))
            .thenRejected(.forbidden, "Only the organizer can force-unlock a reward")
    }

    @Test func forcingTheLastLockedRewardBringsTheBadge() {
        let after = allRewardsUnlocked(except: "r04").when(sam, .forceUnlock(reward: "r04", deduct: false))
            .then([.rewardUnlocked(reward: "r04", cost: 0, forced: true), .finalBadgeUnlocked(forced: false)])
        #expect(after.state.hasFinalBadge && !after.state.finalBadgeForced)
    }
}

@Suite struct FinalBadgeTests {
    @Test(arguments: [sam, admin])
    func theOrganizerTriggersItEarly(actor: Actor) {
        let outcome = given().when(actor, .triggerFinalBadge)
        let after = outcome.then([.finalBadgeUnlocked(forced: true)])
        #expect(after.state.hasFinalBadge && after.state.finalBadgeForced && after.state.finalBadgeAt == outcome.context.at)
        #expect(after.state.timeline.map(\.fields) == [Entry(seq: 1, at: outcome.context.at, kind: .finalBadge, ref: nil,
                                                       title: "Final badge unlocked", subtitle: "0 of 9 gifts", from: nil)])
    }

    @Test func triggeringTwiceIsRefused() {
        given().after(sam, .triggerFinalBadge).when(admin, .triggerFinalBadge)
            .thenRejected(.alreadyUnlocked, "The final badge is already unlocked")
    }

    @Test func afterTheAutomaticBadgeTriggeringIsRefused() {
        allRewardsUnlocked(except: "r01").after(sam, .forceUnlock(reward: "r01", deduct: false))
            .when(sam, .triggerFinalBadge)
            .thenRejected(.alreadyUnlocked, "already unlocked")
    }

    @Test(arguments: [mia, priya, theo, dani])
    func nobodyElseMayTrigger(actor: Actor) {
        given().when(actor, .triggerFinalBadge).thenRejected(.forbidden, "Only the organizer can trigger the final badge")
    }
}
