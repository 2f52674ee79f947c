import Domain
import Testing

/// The dare lifecycle: draft -> (edit)* -> delivered -> discovered -> completed.
@Suite struct SecretDareTests {
    static let priyasDare = Change.secretSaved(challenge: "dare-priya", author: "priya", title: "Sing", description: "Sing to the ducks", points: 50)
    static let theosDare = Change.secretSaved(challenge: "dare-theo", author: "theo", title: "Run", description: "Run to the jetty", points: 25)

    @Test(arguments: ["priya", "sam"])
    func aFriendOrTheOrganizerWritesADraft(author: String) {
        let actor = Actor.character(author)
        let id = "dare-\(author)"
        let after = given()
            .when(actor, .saveSecret(title: "Sing", description: "Sing to the ducks", points: 50))
            .then([.secretSaved(challenge: id, author: author, title: "Sing", description: "Sing to the ducks", points: 50)])
        let dare = after.state.challenges[id]
        #expect(dare?.dare == .draft && dare?.author == author && dare?.isSecret == true)
        #expect(dare?.difficulty == nil && dare?.category == nil && dare?.optionB == nil)
        // A draft is not on the board: nothing the game counts changes.
        #expect(after.state.challengesTotal == 15 && after.state.secretsHidden == 0)
    }

    @Test func aBlankTitleOrDescriptionIsRefused() {
        given().when(priya, .saveSecret(title: "   ", description: "Sing", points: 25)).thenRejected(.badRequest, "title must not be blank", field: "title")
        given().when(priya, .saveSecret(title: "Sing", description: "\u{3000}", points: 25))
            .thenRejected(.badRequest, "description must not be blank")
    }

    @Test func theAuthorEditsTheDraftAnyNumberOfTimes() {
        let after = given(Self.priyasDare, .secretSaved(challenge: "dare-priya", author: "priya", title: "Dance", description: "x", points: 75))
            .when(priya, .saveSecret(title: "Swim", description: "Swim to the raft", points: 100))
            .then([.secretSaved(challenge: "dare-priya", author: "priya", title: "Swim", description: "Swim to the raft", points: 100)])
        let dare = after.state.challenges["dare-priya"]
        #expect(dare?.title == "Swim" && dare?.description == "Swim to the raft" && dare?.points == 100 && dare?.dare == .draft)
        #expect(after.state.challenges.count == 16)
    }

    /// A client that saves the same draft again and again (a retry without a key, a loop) fills
    /// no log: only a save that changes the draft is an event.
    @Test func savingTheDraftAsItStandsChangesNothing() {
        given(Self.priyasDare).when(priya, .saveSecret(title: "Sing", description: "Sing to the ducks", points: 50))
            .thenNothingHappens()
        given(Self.priyasDare).when(priya, .saveSecret(title: "Sing", description: "Sing to the ducks", points: 75))
            .then([.secretSaved(challenge: "dare-priya", author: "priya", title: "Sing", description: "Sing to the ducks", points: 75)])
    }

    @Test func deliveringLocksTheDareAndCountsItHidden() {
        let after = given(Self.priyasDare)
            .when(priya, .deliverSecret)
            .then([.secretDelivered(challenge: "dare-priya")])
        #expect(after.state.challenges["dare-priya"]?.dare == .delivered)
        #expect(after.state.secretsHidden == 1 && after.state.secretsFound == 0 && after.state.challengesTotal == 15)
    }

    @Test func aDeliveredDareCanNeitherBeEditedNorDeliveredAgain() {
        let delivered = given(Self.priyasDare, .secretDelivered(challenge: "dare-priya"))
        delivered.when(priya, .saveSecret(title: "New", description: "New", points: 25))
            .thenRejected(.secretLocked, "Your dare was delivered: it can no longer be edited")
        delivered.when(priya, .deliverSecret)
            .thenRejected(.secretLocked, "already delivered")
    }

    @Test func aDiscoveredDareStaysLocked() {
        given(Self.priyasDare, .secretDelivered(challenge: "dare-priya"), .secretsDiscovered(challenges: ["dare-priya"]))
            .when(priya, .saveSecret(title: "New", description: "New", points: 25))
            .thenRejected(.secretLocked, "can no longer be edited")
    }

    @Test func deliveringWithoutADareIsNotFound() {
        given().when(dani, .deliverSecret).thenRejected(.notFound, "You have no dare to deliver")
    }

    @Test func anotherFriendsDareDoesNotCountAsYours() {
        given(Self.priyasDare).when(theo, .deliverSecret).thenRejected(.notFound, "You have no dare to deliver")
    }

    @Test(arguments: [mia, admin])
    func onlyFriendsWriteAndDeliverDares(actor: Actor) {
        given().when(actor, .saveSecret(title: "t", description: "d", points: 25))
            .thenRejected(.forbidden, "Only a friend can write a secret dare")
        given(Self.priyasDare).when(actor, .deliverSecret)
            .thenRejected(.forbidden, "Only a friend can deliver a secret dare")
    }

    @Test(arguments: [(0, 1), (121, 1)])
    func aTitleOutsideOneTo120CharactersIsABadRequest(title: Int, description: Int) {
        given().when(priya, .saveSecret(title: chars(title), description: chars(description), points: 25))
            .thenRejected(.badRequest, "title must be 1 to 120 characters, got \(title)")
    }

    @Test(arguments: [0, 2_001])
    func aDescriptionOutsideOneTo2000CharactersIsABadRequest(length: Int) {
        given().when(priya, .saveSecret(title: "t", description: chars(length), points: 25))
            .thenRejected(.badRequest, "description must be 1 to 2000 characters, got \(length)")
    }

    @Test(arguments: [0, 24, 30, 101, -25])
    func pointsOtherThan25_50_75_100AreABadRequest(points: Int) {
        given().when(priya, .saveSecret(title: "t", description: "d", points: points))
            .thenRejected(.badRequest, "points must be one of 25, 50, 75 or 100, got \(points)")
    }

    @Test(arguments: [25, 50, 75, 100])
    func everyAllowedPointValueIsAccepted(points: Int) {
        given().when(dani, .saveSecret(title: chars(120), description: chars(2_000), points: points))
            .then([.secretSaved(challenge: "dare-dani", author: "dani", title: chars(120), description: chars(2_000), points: points)])
    }
}

@Suite struct DiscoverSecretsTests {
    @Test func theBirthdayPersonFindsEveryDeliveredDareButNotTheDrafts() {
        let outcome = given(SecretDareTests.theosDare, SecretDareTests.priyasDare,
                            .secretSaved(challenge: "dare-dani", author: "dani", title: "Draft", description: "d", points: 25),
                            .secretDelivered(challenge: "dare-theo"), .secretDelivered(challenge: "dare-priya"))
            .when(mia, .discoverSecrets)
        // Board order: dares are ordered by their author's place in the seed (priya before theo).
        let after = outcome.then([.secretsDiscovered(challenges: ["dare-priya", "dare-theo"])])
        let state = after.state
        #expect(state.secretsFound == 2 && state.secretsHidden == 0 && state.challengesTotal == 17)
        #expect(state.challenges["dare-dani"]?.dare == .draft)
        #expect(state.timeline.map(\.fields) == [
            Entry(seq: 1, at: outcome.context.at, kind: .secretDiscovered, ref: "dare-priya", title: "Sing", subtitle: "worth 50 ✦", from: "Priya"),
            Entry(seq: 2, at: outcome.context.at, kind: .secretDiscovered, ref: "dare-theo", title: "Run", subtitle: "worth 25 ✦", from: "Theo"),
        ])
    }

    @Test func withNothingHiddenItCommitsNothing() {
        given(SecretDareTests.priyasDare).when(mia, .discoverSecrets).thenNothingHappens()
    }

    @Test(arguments: [sam, priya, admin])
    func onlyTheBirthdayPersonDiscovers(actor: Actor) {
        given().when(actor, .discoverSecrets).thenRejected(.forbidden, "Only the birthday person can discover secret dares")
    }

    @Test func anUndiscoveredDareCannotBeCompletedByTheBirthdayPerson() {
        given(SecretDareTests.priyasDare)
            .when(mia, .completeChallenge(challenge: "dare-priya", proof: .done, option: nil))
            .thenRejected(.notFound, "No challenge \"dare-priya\"")
        given(SecretDareTests.priyasDare, .secretDelivered(challenge: "dare-priya"))
            .when(mia, .completeChallenge(challenge: "dare-priya", proof: .done, option: nil))
            .thenRejected(.notFound, "No challenge \"dare-priya\"")
    }

    @Test func aDiscoveredDareCountsAsACompletedChallengeAndACompletedSecret() {
        let after = given(SecretDareTests.priyasDare, .secretDelivered(challenge: "dare-priya"), .secretsDiscovered(challenges: ["dare-priya"]))
            .when(mia, .completeChallenge(challenge: "dare-priya", proof: .text("Sang"), option: nil))
            .then([.challengeCompleted(challenge: "dare-priya", option: .a, proof: .text("Sang"), forced: false, points: 50)])
        let state = after.state
        #expect(state.challengesCompleted == 1 && state.challengesTotal == 16)
        #expect(state.secretsCompleted == 1 && state.secretsFound == 1)
        #expect(state.points == 50)
        #expect(state.timeline.last?.kind == .challengeCompleted && state.timeline.last?.from == "Priya")
    }

    @Test func aDareHasNoOptionB() {
        given(SecretDareTests.priyasDare, .secretDelivered(challenge: "dare-priya"), .secretsDiscovered(challenges: ["dare-priya"]))
            .when(mia, .completeChallenge(challenge: "dare-priya", proof: .done, option: .b))
            .thenRejected(.badRequest, "has no option b")
    }

    @Test func forcingADeliveredUndiscoveredDareCountsItFound() {
        let after = given(SecretDareTests.priyasDare, .secretDelivered(challenge: "dare-priya"))
            .when(sam, .forceComplete(challenge: "dare-priya"))
            .then([.challengeCompleted(challenge: "dare-priya", option: .a, proof: nil, forced: true, points: 50)])
        let state = after.state
        #expect(state.challenges["dare-priya"]?.dare == .discovered)
        #expect(state.secretsFound == 1 && state.secretsHidden == 0 && state.secretsCompleted == 1)
        #expect(state.challengesCompleted == 1 && state.challengesTotal == 16)
        // Found, then completed, on the timeline too: a discovery entry before the completion.
        #expect(state.timeline.map(\.kind) == [.secretDiscovered, .challengeCompleted])
        #expect(state.timeline.first?.ref == "dare-priya" && state.timeline.first?.subtitle == "worth 50 ✦")
        #expect(state.timeline.first?.from == "Priya")
    }

    @Test func forcingADraftIsNotFound() {
        given(SecretDareTests.priyasDare).when(admin, .forceComplete(challenge: "dare-priya"))
            .thenRejected(.notFound, "draft")
    }

    @Test func theOrganizerCannotEditADareAsAChallenge() {
        let fields = ChallengeFields(title: "t", description: "d", optionB: nil, points: 10, difficulty: .easy, category: .social)
        given(SecretDareTests.priyasDare).when(sam, .saveChallenge(id: "dare-priya", fields))
            .thenRejected(.forbidden, "secret dare")
    }

    /// The rules count characters as the protocol does, in code points: one letter with 120
    /// combining marks is 121 characters, too many for a title.
    @Test func aTitleIsMeasuredInCodePointsNotInLetters() {
        let title = "a" + String(repeating: "\u{301}", count: 120)
        #expect(title.count == 1 && title.codePointCount == 121)
        given()
            .when(priya, .saveSecret(title: title, description: "x", points: 50))
            .thenRejected(.badRequest, "title")
    }
}
