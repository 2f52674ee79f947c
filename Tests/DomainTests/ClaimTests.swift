import Foundation
import Domain
import Testing

/// Claims are made before sign-in: the server passes whatever actor it has
/// (here `.system`), and the event is recorded as the claimed character's.
@Suite struct ClaimTests {
    @Test func aFreeCharacterGoesToTheFirstDevice() {
        let after = given()
            .when(.system, .claim(character: "mia", device: "phone-1", pin: nil, tokenHash: "h1"))
            .then([.characterClaimed(character: "mia", device: "phone-1", tokenHash: "h1", takeover: false)], actor: mia)
        #expect(after.state.characters["mia"]?.device == "phone-1")
        #expect(after.state.characters["mia"]?.tokenHashes == ["h1"])
        #expect(after.state.character(forTokenHash: "h1")?.id == "mia")
    }

    @Test func theSameDeviceClaimingAgainAddsATokenAndKeepsTheOlderOne() {
        let after = given(.characterClaimed(character: "mia", device: "phone-1", tokenHash: "h1", takeover: false))
            .when(.system, .claim(character: "mia", device: "phone-1", pin: nil, tokenHash: "h2"))
            .then([.characterClaimed(character: "mia", device: "phone-1", tokenHash: "h2", takeover: false)], actor: mia)
        #expect(after.state.characters["mia"]?.tokenHashes == ["h1", "h2"])
        #expect(after.state.character(forTokenHash: "h1")?.id == "mia")
    }

    /// Claims need no sign-in: a device claiming over and over must not make the state (and
    /// every snapshot) grow for good. Past the limit each claim ends the oldest token alone: a
    /// client that claims again on every reconnect keeps its other sessions. The claim's event
    /// names the token it ends.
    @Test func aDeviceClaimingPastTheLimitEndsOnlyItsOldestToken() {
        let full = Self.deviceWithAllItsTokens()
        #expect(full.state.characters["mia"]?.tokenHashes.count == Limits.tokensPerCharacter)
        let after = full.when(.system, .claim(character: "mia", device: "phone-1", pin: nil, tokenHash: "newest"))
            .then([.characterClaimed(character: "mia", device: "phone-1", tokenHash: "newest", takeover: false, endsToken: "h0")],
                  actor: mia)
        #expect(after.state.characters["mia"]?.tokenHashes.count == Limits.tokensPerCharacter)
        #expect(after.state.character(forTokenHash: "h0") == nil, "the oldest ends")
        for kept in ["h1", "h\(Limits.tokensPerCharacter - 1)", "newest"] {
            #expect(after.state.character(forTokenHash: kept)?.id == "mia", "\(kept) still works")
        }
        after.when(.system, .claim(character: "mia", device: "phone-1", pin: nil, tokenHash: "after-newest"))
            .then([.characterClaimed(character: "mia", device: "phone-1", tokenHash: "after-newest", takeover: false, endsToken: "h1")],
                  actor: mia)
    }

    /// A replay ends the token the event names, whatever order a snapshot listed the hashes in
    /// (those written before the order was kept list them in any order).
    @Test func aReplayFromASnapshotInAnyOrderEndsTheSameToken() throws {
        let full = Self.deviceWithAllItsTokens().state
        let claim = Event(at: 2, actor: .character("mia"), change: .characterClaimed(
            character: "mia", device: "phone-1", tokenHash: "newest", takeover: false, endsToken: "h0"))
        var reordered = full
        reordered.characters["mia"]?.tokenHashes = TokenHashes(full.characters["mia"]!.tokenHashes.inOrder.reversed())
        #expect(reordered == full)
        let fromLog = evolve(full, claim), fromSnapshot = evolve(reordered, claim)
        #expect(fromLog == fromSnapshot)
        #expect(fromSnapshot.character(forTokenHash: "h0") == nil)
        #expect(fromSnapshot.character(forTokenHash: "h999")?.id == "mia")
    }

    /// A claim logged before the ended token was recorded ended every earlier token at the
    /// bound, and still does on replay: an old log means what it meant.
    @Test func aClaimLoggedWithoutTheEndedTokenStillEndsThemAll() {
        let full = Self.deviceWithAllItsTokens().state
        let old = evolve(full, Event(at: 2, actor: .character("mia"), change: .characterClaimed(
            character: "mia", device: "phone-1", tokenHash: "newest", takeover: false)))
        #expect(old.characters["mia"]?.tokenHashes == ["newest"])
    }

    private static func deviceWithAllItsTokens() -> Scenario {
        (0..<Limits.tokensPerCharacter).map {
            Change.characterClaimed(character: "mia", device: "phone-1", tokenHash: "h\($0)", takeover: false)
        }.reduce(given()) { $0.and($1) }
    }

    @Test func anotherDeviceWithoutAPinIsRefused() {
        given(.characterClaimed(character: "mia", device: "phone-1", tokenHash: "h1", takeover: false))
            .when(.system, .claim(character: "mia", device: "phone-2", pin: nil, tokenHash: "h2"))
            .thenRejected(.alreadyClaimed, "Mia is already claimed by another device")
    }

    @Test func anotherDeviceWithTheRightPinTakesOverAndOldTokensStopWorking() {
        let after = given(
            .characterClaimed(character: "mia", device: "phone-1", tokenHash: "h1", takeover: false),
            .characterClaimed(character: "mia", device: "phone-1", tokenHash: "h2", takeover: false))
            .when(.system, .claim(character: "mia", device: "phone-2", pin: "4821", tokenHash: "h3"))
            .then([.characterClaimed(character: "mia", device: "phone-2", tokenHash: "h3", takeover: true)], actor: mia)
        #expect(after.state.characters["mia"]?.device == "phone-2")
        #expect(after.state.characters["mia"]?.tokenHashes == ["h3"])
        #expect(after.state.character(forTokenHash: "h1") == nil)
        #expect(after.state.character(forTokenHash: "h2") == nil)
    }

    @Test func aWrongPinIsForbiddenAndChangesNothing() {
        given(.characterClaimed(character: "mia", device: "phone-1", tokenHash: "h1", takeover: false))
            .when(.system, .claim(character: "mia", device: "phone-2", pin: "0000", tokenHash: "h2"))
            .thenRejected(.forbidden, "wrong PIN")
    }

    @Test func aCharacterWithoutAPinCannotBeTakenOverWithOne() {
        given(.characterClaimed(character: "theo", device: "phone-1", tokenHash: "h1", takeover: false))
            .when(.system, .claim(character: "theo", device: "phone-2", pin: "1234", tokenHash: "h2"))
            .thenRejected(.forbidden, "has no PIN")
    }

    @Test func aPinIsNotNeededForAFreeCharacter() {
        given()
            .when(.system, .claim(character: "mia", device: "phone-1", pin: "9999", tokenHash: "h1"))
            .then([.characterClaimed(character: "mia", device: "phone-1", tokenHash: "h1", takeover: false)], actor: mia)
    }

    @Test func anUnknownCharacterIsNotFound() {
        given()
            .when(.system, .claim(character: "zoe", device: "phone-1", pin: nil, tokenHash: "h1"))
            .thenRejected(.notFound, "No character \"zoe\"")
    }

    @Test(arguments: [0, 129])
    func aDeviceNameOutsideOneTo128CharactersIsABadRequest(length: Int) {
        given()
            .when(.system, .claim(character: "mia", device: chars(length), pin: nil, tokenHash: "h1"))
            .thenRejected(.badRequest, "device must be 1 to 128 characters, got \(length)")
    }

    @Test func aDeviceNameOf128CharactersIsFine() {
        given()
            .when(.system, .claim(character: "mia", device: chars(128), pin: nil, tokenHash: "h1"))
            .then([.characterClaimed(character: "mia", device: chars(128), tokenHash: "h1", takeover: false)], actor: mia)
    }

    @Test func afterAnUnclaimAnyDeviceMayClaimWithoutAPin() {
        given(.characterClaimed(character: "mia", device: "phone-1", tokenHash: "h1", takeover: false),
              .characterUnclaimed(character: "mia"))
            .when(.system, .claim(character: "mia", device: "phone-2", pin: nil, tokenHash: "h2"))
            .then([.characterClaimed(character: "mia", device: "phone-2", tokenHash: "h2", takeover: false)], actor: mia)
    }
}

/// The house rule `claims_need_pin`: a character with a PIN is claimed only with it, even free,
/// so that nobody claims a friend first to read what that friend may see.
@Suite struct ClaimsNeedPINTests {
    @Test func aFreeCharacterWithAPinIsRefusedWithoutIt() {
        given()
            .when(.system, .claim(character: "mia", device: "phone-1", pin: nil, tokenHash: "h1"), claimsNeedPIN: true)
            .thenRejected(.forbidden, "Claiming Mia needs Mia's PIN on this server")
    }

    @Test func aFreeCharacterWithAPinIsRefusedWithAWrongOne() {
        given()
            .when(.system, .claim(character: "mia", device: "phone-1", pin: "9999", tokenHash: "h1"), claimsNeedPIN: true)
            .thenRejected(.forbidden, "Cannot claim Mia: wrong PIN")
    }

    @Test func theRightPinClaimsAFreeCharacter() {
        given()
            .when(.system, .claim(character: "mia", device: "phone-1", pin: "4821", tokenHash: "h1"), claimsNeedPIN: true)
            .then([.characterClaimed(character: "mia", device: "phone-1", tokenHash: "h1", takeover: false)], actor: mia)
    }

    @Test func theDeviceThatHoldsTheCharacterClaimsAgainWithoutIt() {
        given(.characterClaimed(character: "mia", device: "phone-1", tokenHash: "h1", takeover: false))
            .when(.system, .claim(character: "mia", device: "phone-1", pin: nil, tokenHash: "h2"), claimsNeedPIN: true)
            .then([.characterClaimed(character: "mia", device: "phone-1", tokenHash: "h2", takeover: false)], actor: mia)
    }

    @Test func aCharacterWithoutAPinIsClaimedAsBefore() {
        given()
            .when(.system, .claim(character: "theo", device: "phone-1", pin: nil, tokenHash: "h1"), claimsNeedPIN: true)
            .then([.characterClaimed(character: "theo", device: "phone-1", tokenHash: "h1", takeover: false)], actor: .character("theo"))
    }

    @Test func afterAnUnclaimThePinIsNeededAgain() {
        given(.characterClaimed(character: "mia", device: "phone-1", tokenHash: "h1", takeover: false),
              .characterUnclaimed(character: "mia"))
            .when(.system, .claim(character: "mia", device: "phone-1", pin: nil, tokenHash: "h2"), claimsNeedPIN: true)
            .thenRejected(.forbidden, "Claiming Mia needs Mia's PIN on this server")
    }
}

@Suite struct UnclaimTests {
    @Test(arguments: [sam, admin])
    func theOrganizerOrAdminFreesACharacterAndItsTokensStopWorking(actor: Actor) {
        let after = given(.characterClaimed(character: "priya", device: "phone-1", tokenHash: "h1", takeover: false))
            .when(actor, .unclaim(character: "priya"))
            .then([.characterUnclaimed(character: "priya")])
        #expect(after.state.characters["priya"]?.device == nil)
        #expect(after.state.characters["priya"]?.isClaimed == false)
        #expect(after.state.character(forTokenHash: "h1") == nil)
    }

    @Test func unclaimingAFreeCharacterCommitsNothing() {
        given().when(sam, .unclaim(character: "priya")).thenNothingHappens()
    }

    @Test func anUnknownCharacterIsNotFound() {
        given().when(admin, .unclaim(character: "zoe")).thenRejected(.notFound, "No character \"zoe\"")
    }

    @Test(arguments: [mia, priya, theo, dani])
    func nobodyElseMayUnclaim(actor: Actor) {
        given(.characterClaimed(character: "priya", device: "phone-1", tokenHash: "h1", takeover: false))
            .when(actor, .unclaim(character: "priya"))
            .thenRejected(.forbidden, "Only the organizer can unclaim a character")
    }
}

@Suite struct UnseededGameTests {
    @Test func everyCommandButSeedIsNotFoundBeforeTheGameIsSetUp() {
        let commands: [Command] = [
            .claim(character: "mia", device: "d", pin: nil, tokenHash: "h"), .unclaim(character: "mia"),
            .completeChallenge(challenge: "c01", proof: .done, option: nil), .discoverSecrets,
            .unlockReward(reward: "r01"), .saveSecret(title: "t", description: "d", points: 25), .deliverSecret,
            .forceComplete(challenge: "c01"), .forceUnlock(reward: "r01", deduct: false), .triggerFinalBadge,
            .adjustPoints(delta: 5, reason: "r"), .setDay(2),
        ]
        for command in commands {
            Scenario.empty.when(admin, command).thenRejected(.notFound, "has not been set up yet")
        }
    }
}
