import Domain
import Testing

@Suite struct CompleteChallengeTests {
    @Test func completingAwardsThePointsOnceAndAddsATimelineEntry() throws {
        let outcome = given().when(mia, .completeChallenge(challenge: "c02", proof: .text("I asked three strangers"), option: nil))
        let after = outcome.then([.challengeCompleted(challenge: "c02", option: .a, proof: .text("I asked three strangers"), forced: false, points: 35)])
        let state = after.state
        #expect(state.earned == 35 && state.spent == 0 && state.points == 35)
        #expect(state.challengesCompleted == 1 && state.challengesTotal == 15)
        let completion = try #require(state.challenges["c02"]?.completion)
        #expect(completion.at == outcome.context.at && completion.option == .a && !completion.forced && completion.points == 35)
        #expect(completion.proof == .text("I asked three strangers"))
        #expect(state.timeline.map(\.fields) == [Entry(seq: 1, at: outcome.context.at, kind: .challengeCompleted, ref: "c02",
                                                 title: "Challenge c02", subtitle: "+35 ✦", from: nil)])
    }

    @Test func optionBIsRecordedAndTheTimelineShowsItsTitleForTheSamePoints() {
        let after = given()
            .when(mia, .completeChallenge(challenge: "c01", proof: .photo(url: "https://example.com/swim.jpg"), option: .b))
            .then([.challengeCompleted(challenge: "c01", option: .b, proof: .photo(url: "https://example.com/swim.jpg"), forced: false, points: 75)])
        #expect(after.state.challenges["c01"]?.completion?.option == .b)
        #expect(after.state.timeline.last?.title == "Option B of c01")
        #expect(after.state.points == 75)
    }

    @Test func optionAMayBeNamedExplicitlyOnAPlainChallenge() {
        given()
            .when(mia, .completeChallenge(challenge: "c02", proof: .done, option: .a))
            .then([.challengeCompleted(challenge: "c02", option: .a, proof: .done, forced: false, points: 35)])
    }

    @Test(arguments: [Proof.done, .text(chars(1)), .text(chars(2_000)), .photo(url: "http://example.com/p.png"), .photo(url: "https://x.y/z")])
    func everyProofKindWithinItsLimitsIsAccepted(proof: Proof) {
        given()
            .when(mia, .completeChallenge(challenge: "c03", proof: proof, option: nil))
            .then([.challengeCompleted(challenge: "c03", option: .a, proof: proof, forced: false, points: 60)])
    }

    @Test func completingAgainIsRefusedAndAwardsNothing() {
        given(.challengeCompleted(challenge: "c02", option: .a, proof: .done, forced: false, points: 35))
            .when(mia, .completeChallenge(challenge: "c02", proof: .done, option: nil))
            .thenRejected(.alreadyCompleted, "\"Challenge c02\" is already completed")
    }

    @Test func aChallengeDoneAsItsOptionBIsNamedSoWhenCompletedAgain() {
        let done = given().when(mia, .completeChallenge(challenge: "c01", proof: .done, option: .b))
            .then([.challengeCompleted(challenge: "c01", option: .b, proof: .done, forced: false, points: 75)])
        let optionB = done.state.challenges["c01"]?.optionB?.title ?? ""
        #expect(!optionB.isEmpty)
        done.when(mia, .completeChallenge(challenge: "c01", proof: .done, option: .a))
            .thenRejected(.alreadyCompleted, "is already completed, as its option b \"\(optionB)\"")
        done.when(sam, .forceComplete(challenge: "c01"))
            .thenRejected(.alreadyCompleted, "as its option b")
    }

    @Test func aForcedCompletionAlsoCountsAsCompleted() {
        given(.challengeCompleted(challenge: "c02", option: .a, proof: nil, forced: true, points: 35))
            .when(mia, .completeChallenge(challenge: "c02", proof: .done, option: nil))
            .thenRejected(.alreadyCompleted, "already completed")
    }

    @Test func anUnknownChallengeIsNotFound() {
        given().when(mia, .completeChallenge(challenge: "c99", proof: .done, option: nil))
            .thenRejected(.notFound, "No challenge \"c99\"")
    }

    @Test func optionBWhereThereIsNoneIsABadRequest() {
        given().when(mia, .completeChallenge(challenge: "c02", proof: .done, option: .b))
            .thenRejected(.badRequest, "\"Challenge c02\" has no option b", field: "option")
    }

    @Test func aBlankTextProofIsNoProof() {
        given().when(mia, .completeChallenge(challenge: "c02", proof: .text(" \t\n "), option: nil))
            .thenRejected(.badRequest, "proof.text must not be blank", field: "proof.text")
    }

    @Test(arguments: [0, 2_001])
    func aTextProofOutsideOneTo2000CharactersIsABadRequest(length: Int) {
        given().when(mia, .completeChallenge(challenge: "c02", proof: .text(chars(length)), option: nil))
            .thenRejected(.badRequest, "proof.text must be 1 to 2000 characters, got \(length)")
    }

    @Test func aPhotoProofMustBeAWebLink() {
        given().when(mia, .completeChallenge(challenge: "c02", proof: .photo(url: "file:///etc/passwd"), option: nil))
            .thenRejected(.badRequest, "proof.url must be an http or https link", field: "proof.url")
        given().when(mia, .completeChallenge(challenge: "c02", proof: .photo(url: ""), option: nil))
            .thenRejected(.badRequest, "proof.url must be 1 to 2000 characters, got 0")
        for notALink in ["http://", "https:///path", "https://?q", "https://host/a b", "https://host/\u{1B}[2J", "https://host\u{00A0}x",
                         "https://:80/", "https://@/", "https://user@:80", "https://exa\u{200B}mple.com", "https://example.com/\u{202E}gpj.exe"] {
            given().when(mia, .completeChallenge(challenge: "c02", proof: .photo(url: notALink), option: nil))
                .thenRejected(.badRequest, "proof.url must be an http or https link with a host")
        }
        for link in ["https://user@example.com:8443/a%20b.jpg", "http://[::1]:8080/x", "https://bücher.example/ä.png"] {
            #expect(link.isWebLink, "\(link)")
        }
        given().when(mia, .completeChallenge(challenge: "c02", proof: .photo(url: "https://photos.example.com/a.jpg?x=1#top"), option: nil))
            .then([.challengeCompleted(challenge: "c02", option: .a, proof: .photo(url: "https://photos.example.com/a.jpg?x=1#top"),
                                       forced: false, points: 35)])
    }

    @Test(arguments: [sam, priya, theo, dani, admin])
    func onlyTheBirthdayPersonCompletes(actor: Actor) {
        given().when(actor, .completeChallenge(challenge: "c02", proof: .done, option: nil))
            .thenRejected(.forbidden, "Only the birthday person can complete a challenge")
    }
}

@Suite struct ForceCompleteTests {
    @Test(arguments: [sam, admin])
    func theOrganizerCompletesWithoutProofMarkedForced(actor: Actor) {
        let after = given()
            .when(actor, .forceComplete(challenge: "c15"))
            .then([.challengeCompleted(challenge: "c15", option: .a, proof: nil, forced: true, points: 100)])
        #expect(after.state.points == 100)
        #expect(after.state.challenges["c15"]?.completion?.forced == true)
        #expect(after.state.timeline.last?.subtitle == "+100 ✦")
    }

    @Test func aCompletedChallengeIsRefused() {
        given(.challengeCompleted(challenge: "c15", option: .b, proof: .done, forced: false, points: 100))
            .when(sam, .forceComplete(challenge: "c15"))
            .thenRejected(.alreadyCompleted, "already completed")
    }

    @Test func anUnknownChallengeIsNotFound() {
        given().when(admin, .forceComplete(challenge: "nope")).thenRejected(.notFound, "No challenge \"nope\"")
    }

    @Test(arguments: [mia, priya, theo, dani])
    func nobodyElseMayForce(actor: Actor) {
        given().when(actor, .forceComplete(challenge: "c01"))
            .thenRejected(.forbidden, "Only the organizer can force-complete a challenge")
    }
}
