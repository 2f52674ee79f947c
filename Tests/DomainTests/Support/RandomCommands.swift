import Domain
import SeededRandom

/// Random commands for the property tests: mostly plausible, sometimes invalid
/// (unknown ids, bad lengths, wrong roles), so both paths of every rule run.
struct RandomCommands {
    var rng: SplitMix64

    enum Kind: CaseIterable {
        case claim, unclaim, complete, discover, unlock, saveSecret, deliverSecret, forceComplete,
             forceUnlock, triggerBadge, adjust, setDay, saveChallenge, saveReward, seed
    }

    static let weights: [(Int, Kind)] = [
        (6, .claim), (2, .unclaim), (20, .complete), (5, .discover), (14, .unlock), (8, .saveSecret), (5, .deliverSecret),
        (4, .forceComplete), (4, .forceUnlock), (1, .triggerBadge), (8, .adjust), (3, .setDay), (4, .saveChallenge),
        (2, .saveReward), (1, .seed),
    ]

    static let characters = ["mia", "sam", "priya", "theo", "dani"]
    static let friends: [Actor] = [sam, priya, theo, dani]
    static let organizers: [Actor] = [sam, admin]

    mutating func next(in state: GameState, seedContent: SeedContent, step: Int) -> (Actor, Command) {
        let kind = rng.weighted(Self.weights)
        let command = makeCommand(kind, state: state, seedContent: seedContent, step: step)
        // Mostly someone who may do it, sometimes anyone: both the rule and the role check run.
        let actor: Actor
        if rng.chance(25) {
            actor = rng.pick(everyActor)
        } else {
            switch kind {
            case .complete, .discover, .unlock: actor = mia
            case .saveSecret, .deliverSecret: actor = rng.pick(Self.friends)
            case .claim, .seed: actor = .system
            default: actor = rng.pick(Self.organizers)
            }
        }
        return (actor, command)
    }

    private mutating func makeCommand(_ kind: Kind, state: GameState, seedContent: SeedContent, step: Int) -> Command {
        switch kind {
        case .claim:
            let character = rng.chance(5) ? "zoe" : rng.pick(Self.characters)
            let device = rng.chance(3) ? "" : rng.pick(["phone-a", "phone-b", "phone-c"])
            let pin = rng.weighted([(5, nil), (3, state.characters[character]?.pin), (2, "0000")])
            return .claim(character: character, device: device, pin: pin, tokenHash: "token-\(step)")
        case .unclaim:
            return .unclaim(character: rng.chance(5) ? "zoe" : rng.pick(Self.characters))
        case .complete:
            return .completeChallenge(challenge: challengeID(state), proof: proof(step), option: rng.weighted([(5, nil), (2, .a), (3, .b)]))
        case .discover:
            return .discoverSecrets
        case .unlock:
            return .unlockReward(reward: rewardID(state))
        case .saveSecret:
            return .saveSecret(title: chars(length(typical: 1...30, limit: 120)), description: chars(length(typical: 1...50, limit: 2_000)),
                               points: rng.weighted([(9, rng.pick(Limits.secretPoints)), (1, rng.pick([0, 10, 101]))]))
        case .deliverSecret:
            return .deliverSecret
        case .forceComplete:
            return .forceComplete(challenge: challengeID(state))
        case .forceUnlock:
            return .forceUnlock(reward: rewardID(state), deduct: rng.chance(50))
        case .triggerBadge:
            return .triggerFinalBadge
        case .adjust:
            // Pulled toward an empty balance, where the rules matter: to exactly zero, one past
            // it, and the limits (refused, or more than any balance). A billion given is left
            // to OrganizerTests: here it would lift the balance out of reach for good.
            let points = state.points
            let delta = rng.weighted([(14, rng.int(-200...200)), (2, -rng.int(200...5_000)), (3, -points), (2, -(points + 1)),
                                      (1, 0), (1, 1_000_000_001), (1, -1_000_000_000)])
            return .adjustPoints(delta: delta, reason: rng.chance(5) ? "" : "because \(step)")
        case .setDay:
            return .setDay(rng.weighted([(8, rng.int(1...4)), (1, rng.pick([0, 367, -3])), (1, rng.int(1...366))]))
        case .saveChallenge:
            let regular = state.challenges.values.filter { !$0.isSecret }.map(\.id).sorted()
            let id: String? = rng.weighted([(4, nil), (4, regular.isEmpty ? nil : rng.pick(regular)), (1, "c99"), (1, GameState.dareID(author: "priya"))])
            let points = rng.weighted([(8, rng.int(1...1_000)), (1, 0), (1, 1_001)])
            let optionB = rng.chance(30) ? OptionText(title: chars(length(typical: 1...20, limit: 120)), description: "or this") : nil
            return .saveChallenge(id: id, ChallengeFields(title: chars(length(typical: 1...30, limit: 120)), description: "do it \(step)",
                                                         optionB: optionB, points: points, difficulty: rng.pick(Difficulty.allCases),
                                                         category: rng.pick(Category.allCases)))
        case .saveReward:
            let id: String? = rng.weighted([(3, nil), (5, state.rewards.isEmpty ? nil : rng.pick(state.rewards.keys.sorted())), (1, "r99")])
            let giver = rng.weighted([(5, nil), (3, "sam"), (1, "mia"), (1, "zoe")])
            let content: RewardContent? = rng.weighted([(3, nil), (6, RewardContent(text: "gift \(step)", urls: ["https://g/\(step)"])),
                                                        (1, RewardContent(text: nil, urls: ["ftp://nope"]))])
            let cost: Int? = rng.weighted([(5, nil), (4, rng.int(0...150)), (1, 1_001)])
            return .saveReward(id: id, RewardFields(from: "Giver \(step)", fromCharacter: giver, title: "Gift \(step)", teaser: "A teaser",
                                                    type: rng.pick(RewardType.allCases), cost: cost, content: content))
        case .seed:
            return .seed(seedContent, hash: rng.chance(50) ? "shipped" : "another")
        }
    }

    /// Usually a real id (regular or dare), sometimes one that does not exist.
    private mutating func challengeID(_ state: GameState) -> String {
        rng.chance(5) ? "c99" : rng.pick(state.challenges.keys.sorted())
    }

    private mutating func rewardID(_ state: GameState) -> String {
        rng.chance(5) ? "r99" : rng.pick(state.rewards.keys.sorted())
    }

    private mutating func proof(_ step: Int) -> Proof {
        rng.weighted([
            (4, .done), (3, .text("did it \(step)")), (3, .photo(url: "https://photos.example/\(step).jpg")),
            (1, .text(chars(rng.pick([0, 2_001])))), (1, .photo(url: rng.pick(["", "ftp://x/y"]))),
        ])
    }

    /// A length mostly in `typical`, sometimes exactly at or just past the limits.
    private mutating func length(typical: ClosedRange<Int>, limit: Int) -> Int {
        rng.weighted([(18, rng.int(typical)), (1, rng.pick([0, limit + 1])), (1, limit)])
    }
}
