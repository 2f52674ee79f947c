import Domain

/// The cast as actors, named like the shipped seed so that tests read like the game.
let mia = Actor.character("mia")
let sam = Actor.character("sam")
let priya = Actor.character("priya")
let theo = Actor.character("theo")
let dani = Actor.character("dani")
let admin = Actor.admin

/// Every actor a command can come from, for "forbidden for everyone else" checks.
let everyActor: [Actor] = [mia, sam, priya, theo, dani, admin]

/// A game shaped like seed/birthdayquest.json but built in Swift, so the
/// command tests do not depend on the parser and every number is visible here.
/// Theo has no PIN: the takeover rule differs for such a character.
enum Fixture {
    static let hash = "fixture-hash-1"

    static let characters: [SeedCharacter] = [
        SeedCharacter(id: "mia", name: "Mia", role: .birthday, tagline: "Turning thirty", funFacts: ["Cannot whistle"], pin: "4821"),
        SeedCharacter(id: "sam", name: "Sam", role: .organizer, tagline: "Has a laminated schedule", funFacts: ["Owns three label makers"], pin: "7305"),
        SeedCharacter(id: "priya", name: "Priya", role: .friend, tagline: "Keeper of the snacks", funFacts: [], pin: "1964"),
        SeedCharacter(id: "theo", name: "Theo", role: .friend, tagline: "Drives the minibus", funFacts: ["Makes lasagne"], pin: nil),
        SeedCharacter(id: "dani", name: "Dani", role: .friend, tagline: "Films everything", funFacts: ["Three cameras"], pin: "5150"),
    ]

    /// Points of c01...c15, the same as the shipped seed (900 in all).
    static let challengePoints = [75, 35, 60, 55, 60, 35, 55, 75, 75, 75, 55, 75, 35, 35, 100]
    static let difficulties: [Difficulty] = [.hard, .easy, .medium, .medium, .medium, .easy, .medium, .hard, .hard, .hard, .medium, .hard, .easy, .easy, .hard]

    static let challenges: [SeedChallenge] = challengePoints.indices.map { index in
        let number = index + 1
        let id = number < 10 ? "c0\(number)" : "c\(number)"
        let optionB = [1, 7, 14, 15].contains(number) ? OptionText(title: "Option B of \(id)", description: "The other way to do \(id)") : nil
        return SeedChallenge(id: id, fields: ChallengeFields(
            title: "Challenge \(id)", description: "Do the thing numbered \(number)", optionB: optionB,
            points: challengePoints[index], difficulty: difficulties[index],
            category: Category.allCases[index % Category.allCases.count]))
    }

    /// r01 comes from Sam (a character) so that author-only content reading is testable;
    /// r02 from "Family" (a name only). Costs add up to 600, like the shipped seed.
    static let rewards: [SeedReward] = [
        reward("r01", from: "Sam", character: "sam", type: .audio),
        reward("r02", from: "Family", character: nil, type: .text),
        reward("r03", from: "Priya", character: "priya", type: .image),
        reward("r04", from: "Grandma Rosa", character: nil, type: .video),
        reward("r05", from: "Theo", character: "theo", type: .text),
        reward("r06", from: "Dani", character: "dani", type: .video),
        reward("r07", from: "Leo", character: nil, type: .audio),
        reward("r08", from: "The Clinic Crew", character: nil, type: .image),
        reward("r09", from: "Everyone", character: nil, type: .text),
    ]

    static let rewardIDs = rewards.map(\.id)
    static let challengeIDs = challenges.map(\.id)

    static func reward(_ id: String, from: String, character: String?, type: RewardType) -> SeedReward {
        SeedReward(id: id, fields: RewardFields(
            from: from, fromCharacter: character, title: "Gift \(id)", teaser: "Something \(type.rawValue)", type: type,
            content: RewardContent(text: "The secret inside \(id)", urls: type == .text ? [] : ["https://example.com/\(id)"])))
    }

    static let content = SeedContent(title: "Mia's 30th (fixture)", day: 1, characters: characters, challenges: challenges, rewards: rewards)

    /// The first event of every fixture game.
    static var seedEvent: Event { Event(at: startTime, actor: .system, change: .gameSeeded(content: content, hash: hash)) }

    /// 2026-11-20T18:00:00.000Z: the Friday evening of the birthday weekend.
    static let startTime: Millis = 1_795_197_600_000
}
