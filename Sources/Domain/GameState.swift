/// One of the game's people. Claim data lives here because the log is the only
/// durable store: a server restart must find the same device and tokens.
public struct Character: Sendable, Hashable, Codable {
    public var id: String
    public var name: String
    public var role: Role
    public var tagline: String
    public var funFacts: [String]
    public var pin: String?
    public var order: Int
    /// The device that holds the character, nil while it is free.
    public var device: String?
    /// SHA-256 hashes of the tokens that may sign in as this character. Never the tokens.
    public var tokenHashes: TokenHashes

    public var isClaimed: Bool { device != nil }
}

/// The hashes of a character's working tokens, oldest first. Looked up as a set: each sign-in
/// and each of the character's commands checks one, and a device that claims again on every
/// reconnect gathers up to `Limits.tokensPerCharacter` of them. Kept in order so that the
/// claim past that bound can end the oldest token alone, not every session of the player; the
/// claim's event names the token it ends, so no replay depends on this order.
///
/// Encoded as an array, oldest first: the shape snapshots have always had. Snapshots written
/// before the order was kept list the hashes in no order, so two values are equal when they
/// hold the same hashes, whatever their order (`bq verify` compares snapshots with replays).
public struct TokenHashes: Sendable, Hashable, Codable, ExpressibleByArrayLiteral {
    /// Oldest first.
    public private(set) var inOrder: [String]
    private var members: Set<String>

    public init(_ hashes: [String]) {
        inOrder = []
        members = []
        for hash in hashes { insert(hash) }
    }

    public init(arrayLiteral hashes: String...) { self.init(hashes) }

    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode([String].self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(inOrder)
    }

    public var count: Int { inOrder.count }
    public func contains(_ hash: String) -> Bool { members.contains(hash) }

    /// Adds a hash as the newest; one already held keeps its place.
    public mutating func insert(_ hash: String) {
        guard members.insert(hash).inserted else { return }
        inOrder.append(hash)
    }

    public var oldest: String? { inOrder.first }

    public mutating func remove(_ hash: String) {
        guard members.remove(hash) != nil else { return }
        inOrder.removeAll { $0 == hash }
    }

    public mutating func removeAll() {
        inOrder.removeAll()
        members.removeAll()
    }

    public static func == (lhs: TokenHashes, rhs: TokenHashes) -> Bool { lhs.members == rhs.members }
    public func hash(into hasher: inout Hasher) { hasher.combine(members) }
}

public struct OptionText: Sendable, Hashable, Codable {
    public var title: String
    public var description: String

    public init(title: String, description: String) {
        self.title = title
        self.description = description
    }
}

public enum DareStatus: String, Sendable, Hashable, Codable {
    case draft, delivered, discovered
}

public struct Completion: Sendable, Hashable, Codable {
    public var at: Millis
    public var option: ChallengeOption
    /// nil when the organizer forced the completion.
    public var proof: Proof?
    public var forced: Bool
    public var points: Int
}

/// A regular challenge, or a friend's secret dare (then `author` and `dare` are set).
public struct Challenge: Sendable, Hashable, Codable {
    public var id: String
    public var title: String
    public var description: String
    public var optionB: OptionText?
    public var points: Int
    public var difficulty: Difficulty?
    public var category: Category?
    public var author: String?
    public var dare: DareStatus?
    public var completion: Completion?
    public var order: Int

    public var isSecret: Bool { author != nil }
    public var isCompleted: Bool { completion != nil }
    /// Counted on the board: regular challenges, and dares once the birthday person found them.
    public var isOnBoard: Bool { !isSecret || dare == .discovered }
}

public struct RewardContent: Sendable, Hashable, Codable {
    public var text: String?
    public var urls: [String]

    public init(text: String?, urls: [String]) {
        self.text = text
        self.urls = urls
    }
}

public struct Reward: Sendable, Hashable, Codable {
    public var id: String
    public var from: String
    public var fromCharacter: String?
    public var title: String
    public var teaser: String
    public var type: RewardType
    public var cost: Int
    public var order: Int
    public var content: RewardContent
    public var unlockedAt: Millis?

    public var isUnlocked: Bool { unlockedAt != nil }
}

public enum TimelineKind: String, Sendable, Hashable, Codable {
    case challengeCompleted = "challenge_completed"
    case rewardUnlocked = "reward_unlocked"
    case secretDiscovered = "secret_discovered"
    case finalBadge = "final_badge"
}

public struct TimelineEntry: Sendable, Hashable, Codable {
    public var seq: Int
    public var at: Millis
    public var kind: TimelineKind
    public var ref: String?
    public var title: String
    public var subtitle: String
    public var from: String?
}

/// The whole game as the server holds it: every viewer's view is projected from this.
/// Codable for one purpose: snapshots of the state in the event log.
public struct GameState: Sendable, Equatable, Codable {
    /// The number of events applied: the game's version.
    public var version: Int = 0
    public var seedHash: String?
    public var title: String = ""
    public var day: Int = 1
    public var earned: Int = 0
    public var spent: Int = 0
    public var finalBadgeAt: Millis?
    public var finalBadgeForced: Bool = false
    public var characters: [String: Character] = [:]
    public var challenges: [String: Challenge] = [:]
    public var rewards: [String: Reward] = [:]
    public var timeline: [TimelineEntry] = []

    public init() {}

    /// The birthday person's wallet. Never negative: decide refuses anything that would make it so.
    public var points: Int { earned - spent }
    public var isSeeded: Bool { seedHash != nil }

    public var challengesTotal: Int { challengeCounts.total }
    public var challengesCompleted: Int { challengeCounts.completed }
    public var secretsHidden: Int { challengeCounts.secretsHidden }
    public var secretsFound: Int { challengeCounts.secretsFound }
    public var secretsCompleted: Int { challengeCounts.secretsCompleted }

    /// Every challenge count in one pass: a view update wants all five after each commit.
    public var challengeCounts: ChallengeCounts {
        var counts = ChallengeCounts()
        for challenge in challenges.values {
            if challenge.isOnBoard {
                counts.total += 1
                if challenge.isCompleted { counts.completed += 1 }
            }
            if challenge.dare == .delivered { counts.secretsHidden += 1 }
            if challenge.dare == .discovered { counts.secretsFound += 1 }
            if challenge.isSecret && challenge.isCompleted { counts.secretsCompleted += 1 }
        }
        return counts
    }
    public var rewardsUnlocked: Int { rewards.values.count(where: \.isUnlocked) }
    public var rewardsTotal: Int { rewards.count }
    public var hasFinalBadge: Bool { finalBadgeAt != nil }

    public var birthdayCharacter: Character? { characters.values.first { $0.role == .birthday } }

    /// The timeline entries with `seq` above `after`, oldest first. Entries are numbered 1, 2, 3
    /// in the order they are added, so they start at index `after`: a page late in a long game
    /// does not scan the entries before it. (Should a state from elsewhere number them
    /// otherwise, say a snapshot written by hand, they are found by their numbers.)
    public func timeline(after: Int) -> ArraySlice<TimelineEntry> {
        guard timeline.isEmpty || (timeline[0].seq == 1 && timeline[timeline.count - 1].seq == timeline.count) else {
            return ArraySlice(timeline.filter { $0.seq > after })
        }
        return timeline[min(max(after, 0), timeline.count)...]
    }

    public func role(of actor: Actor) -> Role? {
        if case .character(let id) = actor { return characters[id]?.role }
        return nil
    }

    /// The admin console and the organizer's character: who may run the organizer's
    /// operations and read what only the organizer reads.
    public func isOrganizer(_ actor: Actor) -> Bool { actor == .admin || role(of: actor) == .organizer }

    /// The character a token hash signs in as, if any.
    public func character(forTokenHash hash: String) -> Character? {
        characters.values.first { $0.tokenHashes.contains(hash) }
    }

    /// The id a friend's dare gets: one dare per author, so the author names it.
    public static func dareID(author: String) -> String { "dare-\(author)" }

    public var sortedCharacters: [Character] { characters.values.sorted { $0.order < $1.order } }
    public var sortedChallenges: [Challenge] { challenges.values.sorted { ($0.order, $0.id) < ($1.order, $1.id) } }
    public var sortedRewards: [Reward] { rewards.values.sorted { ($0.order, $0.id) < ($1.order, $1.id) } }
}

/// The challenge board's numbers, as the game section of a view shows them.
public struct ChallengeCounts: Sendable, Equatable {
    /// On the board: not a secret dare still hidden from it.
    public var total = 0
    /// On the board and completed.
    public var completed = 0
    /// Secret dares delivered but not yet discovered.
    public var secretsHidden = 0
    /// Secret dares discovered: on the board now.
    public var secretsFound = 0
    /// Secret dares completed.
    public var secretsCompleted = 0

    /// The counts as given; `GameState.challengeCounts` makes the real ones.
    public init(total: Int = 0, completed: Int = 0, secretsHidden: Int = 0, secretsFound: Int = 0, secretsCompleted: Int = 0) {
        self.total = total
        self.completed = completed
        self.secretsHidden = secretsHidden
        self.secretsFound = secretsFound
        self.secretsCompleted = secretsCompleted
    }
}
