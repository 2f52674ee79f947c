import Domain
import JSON
import Testing
import Views

/// The log stores each change as JSON; reading it back must give the same change,
/// or a restart would rebuild a different game than the one players saw.
@Suite struct EventCodingTests {
    @Test func theSeedEventReadsBackAsTheSameContent() throws {
        let content = try ShippedSeed.content()
        let change = Change.gameSeeded(content: content, hash: "abc123")
        let stored = EventCoding.encode(change).serialized(sortedKeys: true)
        #expect(try EventCoding.decode(type: "game_seeded", payload: JSONParser.parse(stored)) == change)
    }

    /// A seed logged by an older build met that build's rules; rules tightened since (a bound
    /// on rewards, the link rule, blank text) must not make its log unreadable at start-up.
    @Test func aLoggedSeedIsReadWithoutTodaysRules() throws {
        var content = try ShippedSeed.content()
        content.rewards += (0..<Limits.maxRewards).map { index in
            var reward = content.rewards[0]
            reward.id = "extra-\(index)"
            return reward
        }
        #expect(!content.problems().isEmpty, "the content breaks a rule of this build")
        let change = Change.gameSeeded(content: content, hash: "abc123")
        let stored = EventCoding.encode(change).serialized(sortedKeys: true)
        #expect(try EventCoding.decode(type: "game_seeded", payload: JSONParser.parse(stored)) == change)
        #expect(throws: SeedError.self) { try SeedParser.parse(JSONParser.parse(stored)["content"]!, file: "seed.json") }

        // Its structure still counts: content with no birthday person is no game, logged or not.
        var broken = try ShippedSeed.content()
        broken.characters = broken.characters.filter { $0.role != .birthday }
        let damaged = EventCoding.encode(.gameSeeded(content: broken, hash: "abc123")).serialized(sortedKeys: true)
        #expect(throws: EventDecodingError.self) { try EventCoding.decode(type: "game_seeded", payload: JSONParser.parse(damaged)) }
    }

    @Test func organizerEditsReadBack() throws {
        let changes: [Change] = [
            .challengeSaved(challenge: "c16", fields: ChallengeFields(title: "Juggle", description: "Three oranges", optionB: OptionText(title: "Or", description: "Two"),
                                                                      points: 40, difficulty: .medium, category: .physical), created: true),
            .rewardSaved(reward: "r10", fields: RewardFields(from: "Aunt May", fromCharacter: nil, title: "Song", teaser: "Listen",
                                                             type: .audio, content: RewardContent(text: nil, urls: ["https://x.example/a.mp3"])), created: true),
            .rewardSaved(reward: "r02", fields: RewardFields(from: "Sam", fromCharacter: "sam", title: "T", teaser: "t", type: .text, cost: 0, content: nil), created: false),
            .challengeCompleted(challenge: "c01", option: .b, proof: .photo(url: "https://p.example/1.jpg"), forced: false, points: 35),
            .challengeCompleted(challenge: "c02", option: .a, proof: nil, forced: true, points: 50),
            .characterClaimed(character: "mia", device: "dev-1", tokenHash: "h2", takeover: false, endsToken: "h1"),
            .characterClaimed(character: "mia", device: "dev-1", tokenHash: "h3", takeover: false),
        ]
        for change in changes {
            let stored = EventCoding.encode(change).serialized(sortedKeys: true)
            #expect(try EventCoding.decode(type: change.type, payload: JSONParser.parse(stored)) == change, "\(stored)")
        }
    }

    /// The fast path writes the hot changes straight to bytes; the log must not be able to tell.
    @Test func payloadTextIsTheSortedTreeForEveryKind() throws {
        let awkward = "Say \"hi\"\n\u{1} \u{e9}t\u{e9} \u{2713}"
        let changes: [Change] = [
            .gameSeeded(content: try ShippedSeed.content(), hash: "abc123"),
            .characterClaimed(character: "mia", device: "dev-1", tokenHash: "h", takeover: true),
            .characterClaimed(character: "mia", device: "dev-1", tokenHash: "h2", takeover: false, endsToken: "h1"),
            .characterUnclaimed(character: "sam"),
            .challengeCompleted(challenge: "c01", option: .b, proof: .photo(url: "https://p.example/1.jpg"), forced: false, points: 35),
            .challengeCompleted(challenge: "c02", option: .a, proof: nil, forced: true, points: 50),
            .challengeCompleted(challenge: "c03", option: .a, proof: .text(awkward), forced: false, points: -1),
            .challengeCompleted(challenge: "c04", option: .a, proof: .done, forced: false, points: 0),
            .secretsDiscovered(challenges: ["s1", "s2"]),
            .rewardUnlocked(reward: "r01", cost: 120, forced: false),
            .rewardUnlocked(reward: "r09", cost: 0, forced: true),
            .finalBadgeUnlocked(forced: false),
            .finalBadgeUnlocked(forced: true),
            .secretSaved(challenge: "s3", author: "priya", title: awkward, description: "Jump in the lake", points: 75),
            .secretDelivered(challenge: "s3"),
            .pointsAdjusted(delta: -5, reason: awkward),
            .pointsAdjusted(delta: Int.min, reason: ""),
            .daySet(day: 2),
            .challengeSaved(challenge: "c16", fields: ChallengeFields(title: "Juggle", description: "Three", optionB: nil,
                                                                      points: 40, difficulty: .medium, category: .physical), created: true),
            .rewardSaved(reward: "r02", fields: RewardFields(from: "Sam", fromCharacter: "sam", title: "T", teaser: "t", type: .text, cost: 0, content: nil), created: false),
        ]
        for change in changes {
            #expect(EventCoding.payloadText(change) == EventCoding.encode(change).serialized(sortedKeys: true), "\(change.type)")
        }
    }

    @Test func anUnknownTypeOrAMissingFieldIsAnErrorNotAGuess() throws {
        #expect(throws: EventDecodingError.self) { try EventCoding.decode(type: "points_stolen", payload: ["delta": 5]) }
        #expect(throws: EventDecodingError.self) { try EventCoding.decode(type: "points_adjusted", payload: ["delta": 5]) }
        #expect(throws: EventDecodingError.self) { try EventCoding.decode(type: "day_set", payload: ["day": "two"]) }
    }
}
