import Domain
import Testing

@Suite struct AdjustPointsTests {
    @Test(arguments: [sam, admin])
    func aPositiveAdjustmentIsEarned(actor: Actor) {
        let after = given().when(actor, .adjustPoints(delta: 100, reason: "Sang in the car"))
            .then([.pointsAdjusted(delta: 100, reason: "Sang in the car")])
        #expect(after.state.earned == 100 && after.state.spent == 0 && after.state.points == 100)
        #expect(after.state.timeline.isEmpty)
    }

    @Test func aNegativeAdjustmentIsSpent() {
        let after = given(.pointsAdjusted(delta: 100, reason: "r")).when(sam, .adjustPoints(delta: -30, reason: "Cheated at cards"))
            .then([.pointsAdjusted(delta: -30, reason: "Cheated at cards")])
        #expect(after.state.earned == 100 && after.state.spent == 30 && after.state.points == 70)
    }

    @Test func theBalanceMayReachZeroExactly() {
        let after = given(.pointsAdjusted(delta: 20, reason: "r")).when(sam, .adjustPoints(delta: -20, reason: "r"))
            .then([.pointsAdjusted(delta: -20, reason: "r")])
        #expect(after.state.points == 0)
    }

    @Test func belowZeroIsRefused() {
        given(.pointsAdjusted(delta: 20, reason: "r")).when(sam, .adjustPoints(delta: -30, reason: "r"))
            .thenRejected(.insufficientPoints, "Not enough points: have 20, cannot take 30")
    }

    @Test(arguments: [0, 1_000_000_001, -1_000_000_001, Int.max])
    func aDeltaOfZeroOrBeyondABillionIsABadRequest(delta: Int) {
        given().when(sam, .adjustPoints(delta: delta, reason: "r"))
            .thenRejected(.badRequest, "delta must be a non-zero integer of at most 1000000000 either way, got \(delta)")
    }

    /// Replay applies events unchecked, so a total that would overflow must never be decided:
    /// it would stop every start-up after it. Earned points stop at 2^53 - 1, which leaves
    /// challenges room to add theirs. (Reaching it takes millions of adjustments.)
    @Test func aTotalBeyondWhatTheGameCanHoldIsABadRequest() {
        let nearly = Limits.maxEarned - 5
        given(.pointsAdjusted(delta: nearly, reason: "r")).when(sam, .adjustPoints(delta: 10, reason: "r"))
            .thenRejected(.badRequest, "delta would take the points earned past 9007199254740991", field: "delta")
        given(.pointsAdjusted(delta: Int.max - 5, reason: "r")).when(sam, .adjustPoints(delta: 10, reason: "r"))
            .thenRejected(.badRequest, "the most a game can hold", field: "delta")
        given(.pointsAdjusted(delta: nearly, reason: "r")).when(sam, .adjustPoints(delta: 5, reason: "r"))
            .then([.pointsAdjusted(delta: 5, reason: "r")])
        given(.pointsAdjusted(delta: nearly, reason: "r")).when(mia, .completeChallenge(challenge: "c01", proof: .done, option: nil))
            .then([.challengeCompleted(challenge: "c01", option: .a, proof: .done, forced: false, points: 75)])
    }

    @Test func aBillionEitherWayIsAllowed() {
        given().when(sam, .adjustPoints(delta: 1_000_000_000, reason: "r")).then([.pointsAdjusted(delta: 1_000_000_000, reason: "r")])
        given(.pointsAdjusted(delta: 1_000_000_000, reason: "r")).when(sam, .adjustPoints(delta: -1_000_000_000, reason: "r"))
            .then([.pointsAdjusted(delta: -1_000_000_000, reason: "r")])
    }

    /// `abs(Int.min)` overflows, so the domain traps instead of refusing.
    @Test
    func theSmallestIntegerIsABadRequestNotACrash() {
        given().when(sam, .adjustPoints(delta: Int.min, reason: "r")).thenRejected(.badRequest, "delta must be")
    }

    @Test(arguments: [0, 201])
    func aReasonOutsideOneTo200CharactersIsABadRequest(length: Int) {
        given().when(sam, .adjustPoints(delta: 5, reason: chars(length)))
            .thenRejected(.badRequest, "reason must be 1 to 200 characters, got \(length)")
    }

    @Test(arguments: [mia, priya, theo, dani])
    func nobodyElseMayAdjust(actor: Actor) {
        given().when(actor, .adjustPoints(delta: 5, reason: "r")).thenRejected(.forbidden, "Only the organizer can adjust points")
    }
}

@Suite struct SetDayTests {
    @Test(arguments: [sam, admin])
    func theOrganizerSetsTheDay(actor: Actor) {
        let after = given().when(actor, .setDay(2)).then([.daySet(day: 2)])
        #expect(after.state.day == 2)
    }

    @Test func theSameDayCommitsNothing() {
        given().when(sam, .setDay(1)).thenNothingHappens()
    }

    @Test(arguments: [1, 366])
    func theBoundsAreAllowed(day: Int) {
        given(.daySet(day: 2)).when(sam, .setDay(day)).then([.daySet(day: day)])
    }

    @Test(arguments: [0, 367, -1])
    func aDayOutside1To366IsABadRequest(day: Int) {
        given().when(sam, .setDay(day)).thenRejected(.badRequest, "day must be 1 to 366, got \(day)", field: "day")
    }

    @Test(arguments: [mia, priya, theo, dani])
    func nobodyElseMaySetTheDay(actor: Actor) {
        given().when(actor, .setDay(2)).thenRejected(.forbidden, "Only the organizer can set the day")
    }
}

@Suite struct SaveChallengeTests {
    static let fields = ChallengeFields(title: "Skinny dip", description: "At midnight", optionB: OptionText(title: "Paddle", description: "Ankles only"),
                                        points: 80, difficulty: .hard, category: .adventure)

    @Test(arguments: [sam, admin])
    func creatingGivesTheNextFreeIdAtTheEndOfTheBoard(actor: Actor) {
        let after = given().when(actor, .saveChallenge(id: nil, Self.fields))
            .then([.challengeSaved(challenge: "c16", fields: Self.fields, created: true)])
        let created = after.state.challenges["c16"]
        #expect(created?.title == "Skinny dip" && created?.points == 80 && created?.optionB?.title == "Paddle")
        #expect(created?.difficulty == .hard && created?.category == .adventure && created?.isSecret == false)
        #expect(after.state.sortedChallenges.last?.id == "c16")
        #expect(after.state.challengesTotal == 16)
        given().after(sam, .saveChallenge(id: nil, Self.fields)).when(sam, .saveChallenge(id: nil, Self.fields))
            .then([.challengeSaved(challenge: "c17", fields: Self.fields, created: true)])
    }

    @Test func dareIdsDoNotShiftTheNumberingOfNewChallenges() {
        given(SecretDareTests.priyasDare).when(sam, .saveChallenge(id: nil, Self.fields))
            .then([.challengeSaved(challenge: "c16", fields: Self.fields, created: true)])
    }

    @Test func editingAnOpenChallengeReplacesItsFieldsAndKeepsItsPlace() {
        let before = given()
        let after = before.when(sam, .saveChallenge(id: "c03", Self.fields))
            .then([.challengeSaved(challenge: "c03", fields: Self.fields, created: false)])
        #expect(after.state.challenges["c03"]?.title == "Skinny dip")
        #expect(after.state.challenges["c03"]?.order == before.state.challenges["c03"]?.order)
        #expect(after.state.challenges.count == 15)
    }

    @Test func savingAChallengeAsItStandsCommitsNothing() {
        let edited = given().when(sam, .saveChallenge(id: "c03", Self.fields))
            .then([.challengeSaved(challenge: "c03", fields: Self.fields, created: false)])
        edited.when(admin, .saveChallenge(id: "c03", Self.fields)).thenNothingHappens()
        // Any one field that differs is a change.
        var fields = Self.fields
        fields.points += 1
        edited.when(sam, .saveChallenge(id: "c03", fields)).then([.challengeSaved(challenge: "c03", fields: fields, created: false)])
        fields = Self.fields
        fields.optionB = nil
        edited.when(sam, .saveChallenge(id: "c03", fields)).then([.challengeSaved(challenge: "c03", fields: fields, created: false)])
        // Adding is never a no-op, even with the fields of an existing challenge.
        edited.when(sam, .saveChallenge(id: nil, Self.fields)).then([.challengeSaved(challenge: "c16", fields: Self.fields, created: true)])
    }

    @Test func aCompletedChallengeIsNotEdited() {
        given(.challengeCompleted(challenge: "c03", option: .a, proof: .done, forced: false, points: 60))
            .when(sam, .saveChallenge(id: "c03", Self.fields))
            .thenRejected(.alreadyCompleted, "is completed and can no longer be edited")
    }

    @Test func whatIsEditedIsCheckedBeforeTheFields() {
        var fields = Self.fields
        fields.points = 0
        given(.challengeCompleted(challenge: "c03", option: .a, proof: .done, forced: false, points: 60))
            .when(sam, .saveChallenge(id: "c03", fields))
            .thenRejected(.alreadyCompleted, "is completed and can no longer be edited")
        given(SecretDareTests.priyasDare).when(sam, .saveChallenge(id: "dare-priya", fields))
            .thenRejected(.forbidden, "is a secret dare: only its author edits it")
        given().when(sam, .saveChallenge(id: "c77", fields)).thenRejected(.notFound, "No challenge \"c77\"")
    }

    @Test func anUnknownChallengeIsNotFound() {
        given().when(sam, .saveChallenge(id: "c77", Self.fields)).thenRejected(.notFound, "No challenge \"c77\"")
    }

    @Test func badFieldsAreABadRequestNamingTheField() {
        var fields = Self.fields
        fields.points = 0
        given().when(sam, .saveChallenge(id: nil, fields)).thenRejected(.badRequest, "challenge.points: must be a positive integer up to 1000, got 0", field: "points")
        fields.points = 1_001
        given().when(sam, .saveChallenge(id: nil, fields)).thenRejected(.badRequest, "challenge.points")
        fields = Self.fields
        fields.title = ""
        given().when(sam, .saveChallenge(id: "c01", fields)).thenRejected(.badRequest, "challenge.title: must be 1 to 120 characters, got 0")
        fields = Self.fields
        fields.description = chars(2_001)
        given().when(sam, .saveChallenge(id: nil, fields)).thenRejected(.badRequest, "challenge.description")
        fields = Self.fields
        fields.optionB = OptionText(title: "", description: "d")
        given().when(sam, .saveChallenge(id: nil, fields)).thenRejected(.badRequest, "challenge.option_b.title", field: "option_b.title")
    }

    @Test func aGameHoldsAtMostAHundredChallengesAndTheyMayStillBeEdited() {
        let added = (16...Limits.maxChallenges).map { Change.challengeSaved(challenge: "c\($0)", fields: Self.fields, created: true) }
        let full = added.reduce(given()) { $0.and($1) }
        #expect(full.state.challenges.count == Limits.maxChallenges)
        full.when(sam, .saveChallenge(id: nil, Self.fields))
            .thenRejected(.badRequest, "A game holds at most 100 challenges (dares aside); edit one instead")
        var edit = Self.fields
        edit.title = "Skinny dip at dawn"
        full.when(sam, .saveChallenge(id: "c42", edit)).then([.challengeSaved(challenge: "c42", fields: edit, created: false)])
        full.when(priya, .saveSecret(title: "Dance", description: "On the table", points: 50))
            .then([.secretSaved(challenge: "dare-priya", author: "priya", title: "Dance", description: "On the table", points: 50)])
    }

    @Test(arguments: [mia, priya, theo, dani])
    func nobodyElseMaySaveChallenges(actor: Actor) {
        given().when(actor, .saveChallenge(id: nil, Self.fields)).thenRejected(.forbidden, "Only the organizer can add or edit challenges")
    }
}

@Suite struct SaveRewardTests {
    static let fields = RewardFields(from: "Aunt Jo", fromCharacter: nil, title: "A Jumper", teaser: "Knitted", type: .video,
                                     content: RewardContent(text: "It is green", urls: ["https://example.com/jumper.mp4"]))

    @Test func aGameHoldsAtMostAHundredRewardsAndTheyMayStillBeEdited() {
        let full = (10...Limits.maxRewards).reduce(given()) { $0.and(.rewardSaved(reward: "r\($1)", fields: Self.fields, created: true)) }
        #expect(full.state.rewards.count == Limits.maxRewards)
        full.when(sam, .saveReward(id: nil, Self.fields)).thenRejected(.badRequest, "A game holds at most 100 rewards; edit one instead")
        var edit = Self.fields
        edit.title = "A Red Jumper"
        full.when(sam, .saveReward(id: "r42", edit)).then([.rewardSaved(reward: "r42", fields: edit, created: false)])
    }

    @Test(arguments: [sam, admin])
    func creatingGivesTheNextFreeIdAndTheDefaultCostOfItsType(actor: Actor) {
        #expect(Self.fields.cost == 100)
        let after = given().when(actor, .saveReward(id: nil, Self.fields))
            .then([.rewardSaved(reward: "r10", fields: Self.fields, created: true)])
        let reward = after.state.rewards["r10"]
        #expect(reward?.cost == 100 && reward?.type == .video && reward?.content.text == "It is green" && reward?.isUnlocked == false)
        #expect(after.state.sortedRewards.last?.id == "r10" && after.state.rewardsTotal == 10)
    }

    @Test func defaultCostsAreTieredByType() {
        let costs = RewardType.allCases.map { RewardFields(from: "f", fromCharacter: nil, title: "t", teaser: "t", type: $0, content: nil).cost }
        #expect(costs == [50, 50, 75, 100])
        #expect(RewardFields(from: "f", fromCharacter: nil, title: "t", teaser: "t", type: .video, cost: 10, content: nil).cost == 10)
    }

    @Test func editingWithoutContentKeepsTheOldContent() {
        var fields = Self.fields
        fields.content = nil
        let before = given()
        let after = before.when(sam, .saveReward(id: "r02", fields)).then([.rewardSaved(reward: "r02", fields: fields, created: false)])
        let reward = after.state.rewards["r02"]
        #expect(reward?.title == "A Jumper" && reward?.type == .video && reward?.cost == 100)
        #expect(reward?.content == before.state.rewards["r02"]?.content)
        #expect(reward?.order == before.state.rewards["r02"]?.order)
    }

    @Test func savingARewardAsItStandsCommitsNothing() {
        let edited = given().when(sam, .saveReward(id: "r02", Self.fields))
            .then([.rewardSaved(reward: "r02", fields: Self.fields, created: false)])
        edited.when(sam, .saveReward(id: "r02", Self.fields)).thenNothingHappens()
        var fields = Self.fields
        fields.content = nil    // an edit without content keeps it: still nothing to change
        edited.when(admin, .saveReward(id: "r02", fields)).thenNothingHappens()
        fields = Self.fields
        fields.content = RewardContent(text: "It is blue", urls: [])
        edited.when(sam, .saveReward(id: "r02", fields)).then([.rewardSaved(reward: "r02", fields: fields, created: false)])
        fields = Self.fields
        fields.cost = 101
        edited.when(sam, .saveReward(id: "r02", fields)).then([.rewardSaved(reward: "r02", fields: fields, created: false)])
        fields = Self.fields
        fields.fromCharacter = "priya"
        edited.when(sam, .saveReward(id: "r02", fields)).then([.rewardSaved(reward: "r02", fields: fields, created: false)])
    }

    @Test func anUnlockedRewardIsNotEdited() {
        given(.rewardUnlocked(reward: "r02", cost: 0, forced: true)).when(sam, .saveReward(id: "r02", Self.fields))
            .thenRejected(.alreadyUnlocked, "is unlocked and can no longer be edited")
    }

    @Test func anUnknownRewardIsNotFound() {
        given().when(sam, .saveReward(id: "r42", Self.fields)).thenRejected(.notFound, "No reward \"r42\"")
    }

    @Test func blankTextIsABadRequest() {
        var fields = Self.fields
        fields.title = "  "
        given().when(sam, .saveReward(id: nil, fields)).thenRejected(.badRequest, "reward.title: must not be blank")
        fields = Self.fields
        fields.from = "\u{00A0}"
        given().when(sam, .saveReward(id: nil, fields)).thenRejected(.badRequest, "reward.from: must not be blank")
    }

    @Test func whatIsEditedIsCheckedBeforeTheFields() {
        var fields = Self.fields
        fields.cost = 1_001
        given(.rewardUnlocked(reward: "r02", cost: 0, forced: true)).when(sam, .saveReward(id: "r02", fields))
            .thenRejected(.alreadyUnlocked, "is unlocked and can no longer be edited")
        given().when(sam, .saveReward(id: "r42", fields)).thenRejected(.notFound, "No reward \"r42\"")
    }

    @Test func badFieldsAreABadRequestNamingTheField() {
        var fields = Self.fields
        fields.fromCharacter = "sammy"
        given().when(sam, .saveReward(id: nil, fields)).thenRejected(.badRequest, "reward.from_character: no character with id \"sammy\"", field: "from_character")
        fields.fromCharacter = "mia"
        given().when(sam, .saveReward(id: nil, fields)).thenRejected(.badRequest, "a gift cannot come from the birthday person", field: "from_character")
        fields = Self.fields
        fields.cost = 1_001
        given().when(sam, .saveReward(id: nil, fields)).thenRejected(.badRequest, "reward.cost: must be 0 to 1000, got 1001")
        fields = Self.fields
        fields.teaser = chars(201)
        given().when(sam, .saveReward(id: nil, fields)).thenRejected(.badRequest, "reward.teaser")
        fields = Self.fields
        fields.content = RewardContent(text: nil, urls: ["ftp://x"])
        given().when(sam, .saveReward(id: nil, fields)).thenRejected(.badRequest, "reward.content.urls[0]", field: "content.urls")
    }

    @Test(arguments: [mia, priya, theo, dani])
    func nobodyElseMaySaveRewards(actor: Actor) {
        given().when(actor, .saveReward(id: nil, Self.fields)).thenRejected(.forbidden, "Only the organizer can add or edit rewards")
    }
}
