import Domain
import JSON

/// The game as one viewer may see it, in PROTOCOL.md's "View shape". Hidden
/// things are absent rather than masked, so nothing can leak through a field
/// a client forgot to hide.
public func view(_ state: GameState, for viewer: Viewer) -> JSONValue {
    let lens = Lens(state: state, viewer: viewer)
    return .object([
        "me": lens.me,
        "game": gameSection(state),
        "characters": .object(Dictionary(uniqueKeysWithValues: state.characters.values.map { ($0.id, characterView($0)) })),
        "challenges": .object(Dictionary(uniqueKeysWithValues: state.challenges.values.filter(lens.canSee).map { ($0.id, challengeView($0)) })),
        "rewards": .object(Dictionary(uniqueKeysWithValues: state.rewards.values.map { ($0.id, rewardView($0, withContent: lens.canReadContent($0))) })),
        "timeline": .array(state.timeline.map(timelineView)),
    ])
}

/// Who the viewer is, and therefore what they may see.
struct Lens {
    let state: GameState
    let viewer: Viewer

    var role: Role? {
        if case .character(let id) = viewer { return state.characters[id]?.role }
        return nil
    }

    var characterID: String? {
        if case .character(let id) = viewer { return id }
        return nil
    }

    /// The admin console and the organizer see everything the game holds.
    var seesAll: Bool { viewer == .admin || role == .organizer }

    var me: JSONValue {
        switch viewer {
        case .admin: return .object(["character": .null, "role": .string("admin")])
        case .character(let id): return .object(["character": .string(id), "role": role.map { .string($0.rawValue) } ?? .null])
        }
    }

    func canSee(_ challenge: Challenge) -> Bool {
        switch challenge.dare {
        case nil, .discovered?: return true
        case .draft?: return seesAll || challenge.author == characterID
        case .delivered?: return seesAll || role?.isFriend == true
        }
    }

    func canReadContent(_ reward: Reward) -> Bool {
        reward.isUnlocked || seesAll || (characterID != nil && reward.fromCharacter == characterID)
    }
}

func gameSection(_ state: GameState) -> JSONValue {
    var members: [String: JSONValue] = [:]
    members.reserveCapacity(14)
    forEachGameMember(state) { key, value in members[key] = value }
    return .object(members)
}

/// The game section's members in key order, the order a diff gives its ops: the view update
/// compares them one by one with the members it holds instead of building a new table.
func forEachGameMember(_ state: GameState, _ body: (String, JSONValue) -> Void) {
    let counts = state.challengeCounts
    body("challenges_completed", .int(counts.completed))
    body("challenges_total", .int(counts.total))
    body("day", .int(state.day))
    body("earned", .int(state.earned))
    body("final_badge", .bool(state.hasFinalBadge))
    body("final_badge_at", state.finalBadgeAt.map { .string(formatTimestamp($0)) } ?? .null)
    body("points", .int(state.points))
    body("rewards_total", .int(state.rewardsTotal))
    body("rewards_unlocked", .int(state.rewardsUnlocked))
    body("secrets_completed", .int(counts.secretsCompleted))
    body("secrets_found", .int(counts.secretsFound))
    body("secrets_hidden", .int(counts.secretsHidden))
    body("spent", .int(state.spent))
    body("title", .string(state.title))
}

func characterView(_ character: Character) -> JSONValue {
    .object([
        "name": .string(character.name),
        "role": .string(character.role.rawValue),
        "tagline": .string(character.tagline),
        "fun_facts": .array(character.funFacts.map { .string($0) }),
        "claimed": .bool(character.isClaimed),
    ])
}

func challengeView(_ challenge: Challenge) -> JSONValue {
    let status: String
    switch challenge.dare {
    case .draft?: status = "draft"
    case .delivered?: status = "delivered"
    case nil, .discovered?: status = challenge.isCompleted ? "completed" : "open"
    }
    let completion = challenge.completion
    return .object([
        "title": .string(challenge.title),
        "description": .string(challenge.description),
        "option_b": challenge.optionB.map { .object(["title": .string($0.title), "description": .string($0.description)]) } ?? .null,
        "points": .int(challenge.points),
        "difficulty": challenge.difficulty.map { .string($0.rawValue) } ?? .null,
        "category": challenge.category.map { .string($0.rawValue) } ?? .null,
        "secret": .bool(challenge.isSecret),
        "author": challenge.author.map { .string($0) } ?? .null,
        "status": .string(status),
        "completed_at": completion.map { .string(formatTimestamp($0.at)) } ?? .null,
        "option": completion.map { .string($0.option.rawValue) } ?? .null,
        "proof": completion?.proof.map(proofView) ?? .null,
        "forced": .bool(completion?.forced ?? false),
    ])
}

public func proofView(_ proof: Proof) -> JSONValue {
    switch proof {
    case .photo(let url): return .object(["kind": .string("photo"), "url": .string(url)])
    case .text(let text): return .object(["kind": .string("text"), "text": .string(text)])
    case .done: return .object(["kind": .string("done")])
    }
}

func rewardView(_ reward: Reward, withContent: Bool) -> JSONValue {
    var fields: [String: JSONValue] = [
        "from": .string(reward.from),
        "from_character": reward.fromCharacter.map { .string($0) } ?? .null,
        "title": .string(reward.title),
        "teaser": .string(reward.teaser),
        "type": .string(reward.type.rawValue),
        "cost": .int(reward.cost),
        "order": .int(reward.order + 1),
        "unlocked": .bool(reward.isUnlocked),
        "unlocked_at": reward.unlockedAt.map { .string(formatTimestamp($0)) } ?? .null,
    ]
    if withContent {
        fields["content"] = .object([
            // Always a string, as PROTOCOL.md shows it: a gift of links alone has "".
            "text": .string(reward.content.text ?? ""),
            "urls": .array(reward.content.urls.map { .string($0) }),
        ])
    }
    return .object(fields)
}

public func timelineView(_ entry: TimelineEntry) -> JSONValue {
    .object([
        "seq": .int(entry.seq),
        "at": .string(formatTimestamp(entry.at)),
        "kind": .string(entry.kind.rawValue),
        "ref": entry.ref.map { .string($0) } ?? .null,
        "title": .string(entry.title),
        "subtitle": .string(entry.subtitle),
        "from": entry.from.map { .string($0) } ?? .null,
    ])
}
