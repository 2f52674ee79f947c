/// What the organizer can set on a regular challenge (on creation or edit).
public struct ChallengeFields: Sendable, Hashable {
    public var title: String
    public var description: String
    public var optionB: OptionText?
    public var points: Int
    public var difficulty: Difficulty
    public var category: Category

    public init(title: String, description: String, optionB: OptionText?, points: Int, difficulty: Difficulty, category: Category) {
        self.title = title
        self.description = description
        self.optionB = optionB
        self.points = points
        self.difficulty = difficulty
        self.category = category
    }
}

/// What the organizer can set on a reward. `content` nil on an edit keeps the old content.
public struct RewardFields: Sendable, Hashable {
    public var from: String
    public var fromCharacter: String?
    public var title: String
    public var teaser: String
    public var type: RewardType
    public var cost: Int
    public var content: RewardContent?

    public init(from: String, fromCharacter: String?, title: String, teaser: String, type: RewardType, cost: Int? = nil, content: RewardContent?) {
        self.from = from
        self.fromCharacter = fromCharacter
        self.title = title
        self.teaser = teaser
        self.type = type
        self.cost = cost ?? type.defaultCost
        self.content = content
    }
}

public struct SeedCharacter: Sendable, Hashable {
    public var id: String
    public var name: String
    public var role: Role
    public var tagline: String
    public var funFacts: [String]
    public var pin: String?

    public init(id: String, name: String, role: Role, tagline: String, funFacts: [String], pin: String?) {
        self.id = id
        self.name = name
        self.role = role
        self.tagline = tagline
        self.funFacts = funFacts
        self.pin = pin
    }
}

public struct SeedChallenge: Sendable, Hashable {
    public var id: String
    public var fields: ChallengeFields

    public init(id: String, fields: ChallengeFields) {
        self.id = id
        self.fields = fields
    }
}

public struct SeedReward: Sendable, Hashable {
    public var id: String
    public var fields: RewardFields

    public init(id: String, fields: RewardFields) {
        self.id = id
        self.fields = fields
    }
}

/// A game's starting content, as the seed file gives it.
public struct SeedContent: Sendable, Hashable {
    public var title: String
    public var day: Int
    public var characters: [SeedCharacter]
    public var challenges: [SeedChallenge]
    public var rewards: [SeedReward]

    public init(title: String, day: Int, characters: [SeedCharacter], challenges: [SeedChallenge], rewards: [SeedReward]) {
        self.title = title
        self.day = day
        self.characters = characters
        self.challenges = challenges
        self.rewards = rewards
    }
}

/// One thing wrong with seed content: where (a path such as `challenges[3].points`) and what.
public struct SeedProblem: Sendable, Hashable, CustomStringConvertible {
    public var path: String
    public var message: String

    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { "\(path): \(message)" }

    /// The field a request names for this path under `root` ("reward.content.urls[2]" under
    /// "reward" is "content.urls"): indexes dropped, since a request's field holds the whole list.
    public func field(under root: String) -> String {
        var name = path.hasPrefix(root + ".") ? String(path.dropFirst(root.count + 1)) : path
        if let bracket = name.firstIndex(of: "[") { name = String(name[..<bracket]) }
        return name
    }
}

/// Ids are used in JSON Pointer paths and URLs-to-be: keep them short and plain.
public func isValidID(_ id: String) -> Bool {
    let bytes = Array(id.utf8)
    guard Limits.idBytes.contains(bytes.count) else { return false }
    for (index, byte) in bytes.enumerated() {
        let lowerOrDigit = (byte >= 97 && byte <= 122) || (byte >= 48 && byte <= 57)
        if index == 0 ? !lowerOrDigit : !(lowerOrDigit || byte == 45 || byte == 95) { return false }
    }
    return true
}

func lengthProblem(_ text: String, _ range: ClosedRange<Int>, at path: String) -> SeedProblem? {
    text.lengthProblem(range).map { SeedProblem(path: path, message: $0) }
}

extension ChallengeFields {
    func problems(at path: String) -> [SeedProblem] {
        var found: [SeedProblem] = []
        found += [lengthProblem(title, Limits.title, at: "\(path).title"),
                  lengthProblem(description, Limits.description, at: "\(path).description")].compactMap { $0 }
        if let optionB {
            found += [lengthProblem(optionB.title, Limits.title, at: "\(path).option_b.title"),
                      lengthProblem(optionB.description, Limits.description, at: "\(path).option_b.description")].compactMap { $0 }
        }
        if !Limits.challengePoints.contains(points) {
            found.append(SeedProblem(path: "\(path).points", message: "must be a positive integer up to \(Limits.challengePoints.upperBound), got \(points)"))
        }
        return found
    }
}

extension RewardFields {
    func unknownGiver(at path: String, characters: Set<String>) -> SeedProblem? {
        guard let fromCharacter, !characters.contains(fromCharacter) else { return nil }
        return SeedProblem(path: "\(path).from_character", message: "no character with id \"\(fromCharacter)\"")
    }

    func problems(at path: String, characters: Set<String>) -> [SeedProblem] {
        var found: [SeedProblem] = []
        found += [lengthProblem(from, Limits.name, at: "\(path).from"),
                  lengthProblem(title, Limits.title, at: "\(path).title"),
                  lengthProblem(teaser, Limits.teaser, at: "\(path).teaser")].compactMap { $0 }
        if let problem = unknownGiver(at: path, characters: characters) { found.append(problem) }
        if !Limits.rewardCost.contains(cost) {
            found.append(SeedProblem(path: "\(path).cost", message: "must be 0 to \(Limits.rewardCost.upperBound), got \(cost)"))
        }
        if let content {
            if let text = content.text, !Limits.contentText.contains(text.codePointCount) {
                found.append(SeedProblem(path: "\(path).content.text", message: "must be at most \(Limits.contentText.upperBound) characters, got \(text.codePointCount)"))
            }
            if !Limits.contentURLs.contains(content.urls.count) {
                found.append(SeedProblem(path: "\(path).content.urls", message: "must hold at most \(Limits.contentURLs.upperBound) links, got \(content.urls.count)"))
            }
            for (index, url) in content.urls.enumerated() where !url.isWebLink || !Limits.contentURL.contains(url.codePointCount) {
                found.append(SeedProblem(path: "\(path).content.urls[\(index)]",
                                         message: "must be \(String.webLinkRule), of at most \(Limits.contentURL.upperBound) characters, got \"\(url)\""))
            }
        }
        return found
    }
}

/// Which seed rules to check: all of them (a seed file, a game about to be seeded), or the
/// structure alone (a seed read back from a log).
public enum SeedRules: Sendable {
    case all
    /// Exactly one birthday person and one organizer, valid and unique ids, gifts from real
    /// characters other than the birthday person: what makes the content a game at all, and
    /// unchanged since the first build. The bounds on lengths, counts, points and links have
    /// tightened since, and a log an older build seeded must still replay.
    case structure
}

extension SeedContent {
    /// The rules a game's starting content must satisfy; empty when it is good.
    public func problems(_ rules: SeedRules = .all) -> [SeedProblem] {
        let bounds = rules == .all
        var found: [SeedProblem] = []
        if bounds, let problem = lengthProblem(title, Limits.title, at: "game.title") { found.append(problem) }
        if bounds, !Limits.day.contains(day) { found.append(SeedProblem(path: "game.day", message: "must be 1 to 366, got \(day)")) }

        var characterIDs = Set<String>()
        for (index, character) in characters.enumerated() {
            let path = "characters[\(index)]"
            if !isValidID(character.id) {
                found.append(SeedProblem(path: "\(path).id", message: "must match [a-z0-9][a-z0-9_-]{0,31}, got \"\(character.id)\""))
            } else if !characterIDs.insert(character.id).inserted {
                found.append(SeedProblem(path: "\(path).id", message: "duplicate id \"\(character.id)\""))
            }
            guard bounds else { continue }
            found += [lengthProblem(character.name, Limits.name, at: "\(path).name"),
                      lengthProblem(character.tagline, Limits.tagline, at: "\(path).tagline")].compactMap { $0 }
            if !Limits.funFacts.contains(character.funFacts.count) {
                found.append(SeedProblem(path: "\(path).fun_facts", message: "must hold at most \(Limits.funFacts.upperBound) facts, got \(character.funFacts.count)"))
            }
            for (factIndex, fact) in character.funFacts.enumerated() {
                if let problem = lengthProblem(fact, Limits.funFact, at: "\(path).fun_facts[\(factIndex)]") { found.append(problem) }
            }
            if let pin = character.pin, !Limits.seedPINDigits.contains(pin.count) || !pin.allSatisfy({ $0.isASCII && $0.isNumber }) {
                found.append(SeedProblem(path: "\(path).pin",
                                         message: "must be \(Limits.seedPINDigits.lowerBound) to \(Limits.seedPINDigits.upperBound) digits"))
            }
        }
        for role in [Role.birthday, .organizer] {
            let holders = characters.filter { $0.role == role }.map(\.id)
            if holders.count != 1 {
                let which = holders.isEmpty ? "" : " (\(holders.joined(separator: ", ")))"
                found.append(SeedProblem(path: "characters", message: "must have exactly one \(role.rawValue), got \(holders.count)\(which)"))
            }
        }

        if bounds, challenges.count > Limits.maxChallenges {
            found.append(SeedProblem(path: "challenges", message: "must hold at most \(Limits.maxChallenges) challenges, got \(challenges.count)"))
        }
        if bounds, rewards.count > Limits.maxRewards {
            found.append(SeedProblem(path: "rewards", message: "must hold at most \(Limits.maxRewards) rewards, got \(rewards.count)"))
        }
        var challengeIDs = Set<String>()
        for (index, challenge) in challenges.enumerated() {
            let path = "challenges[\(index)]"
            if !isValidID(challenge.id) || challenge.id.hasPrefix("dare-") {
                found.append(SeedProblem(path: "\(path).id", message: "must match [a-z0-9][a-z0-9_-]{0,31} and not start with \"dare-\", got \"\(challenge.id)\""))
            } else if !challengeIDs.insert(challenge.id).inserted {
                found.append(SeedProblem(path: "\(path).id", message: "duplicate id \"\(challenge.id)\""))
            }
            if bounds { found += challenge.fields.problems(at: path) }
        }

        var rewardIDs = Set<String>()
        let birthday = Set(characters.filter { $0.role == .birthday }.map(\.id))
        for (index, reward) in rewards.enumerated() {
            let path = "rewards[\(index)]"
            if !isValidID(reward.id) {
                found.append(SeedProblem(path: "\(path).id", message: "must match [a-z0-9][a-z0-9_-]{0,31}, got \"\(reward.id)\""))
            } else if !rewardIDs.insert(reward.id).inserted {
                found.append(SeedProblem(path: "\(path).id", message: "duplicate id \"\(reward.id)\""))
            }
            if bounds {
                found += reward.fields.problems(at: path, characters: characterIDs)
            } else if let problem = reward.fields.unknownGiver(at: path, characters: characterIDs) {
                found.append(problem)
            }
            if let giver = reward.fields.fromCharacter, birthday.contains(giver) {
                found.append(SeedProblem(path: "\(path).from_character", message: "a gift cannot come from the birthday person"))
            }
        }
        return found
    }
}
