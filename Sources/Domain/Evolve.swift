/// Applies one event. Never fails and never checks a rule: `decide` already did,
/// and replaying the log must rebuild exactly the state that was acknowledged.
public func evolve(_ state: GameState, _ event: Event) -> GameState {
    var next = state
    next.apply(event)
    return next
}

/// Replays events from a starting state (the empty game by default).
public func replay(_ events: some Sequence<Event>, from state: GameState = GameState()) -> GameState {
    var next = state
    for event in events { next.apply(event) }
    return next
}

extension GameState {
    public mutating func apply(_ event: Event) {
        version += 1
        let at = event.at
        switch event.change {
        case .gameSeeded(let content, let hash):
            seed(content, hash: hash)

        case .characterClaimed(let id, let device, let tokenHash, let takeover, let endsToken):
            guard var character = characters[id] else { return }
            if takeover || character.device != device {
                character.tokenHashes.removeAll()
            } else if let endsToken {
                character.tokenHashes.remove(endsToken)
            } else if character.tokenHashes.count >= Limits.tokensPerCharacter {
                // Logged before the ended token was: such a claim ended them all.
                character.tokenHashes.removeAll()
            }
            character.device = device
            character.tokenHashes.insert(tokenHash)
            characters[id] = character

        case .characterUnclaimed(let id):
            characters[id]?.device = nil
            characters[id]?.tokenHashes.removeAll()

        case .challengeCompleted(let id, let option, let proof, let forced, let points):
            guard var challenge = challenges[id] else { return }
            challenge.completion = Completion(at: at, option: option, proof: proof, forced: forced, points: points)
            // Forcing a delivered dare counts it as found, and finding it is a moment of its own.
            if challenge.dare == .delivered { discover(&challenge, at: at) }
            challenges[id] = challenge
            earned += points
            let title = option == .b ? (challenge.optionB?.title ?? challenge.title) : challenge.title
            addEntry(at: at, kind: .challengeCompleted, ref: id, title: title, subtitle: "+\(points) ✦", from: authorName(challenge))

        case .secretsDiscovered(let ids):
            for id in ids {
                guard var challenge = challenges[id] else { continue }
                discover(&challenge, at: at)
                challenges[id] = challenge
            }

        case .rewardUnlocked(let id, let cost, _):
            guard var reward = rewards[id] else { return }
            reward.unlockedAt = at
            rewards[id] = reward
            spent += cost
            addEntry(at: at, kind: .rewardUnlocked, ref: id, title: reward.title,
                     subtitle: cost > 0 ? "-\(cost) ✦" : "free", from: reward.from)

        case .finalBadgeUnlocked(let forced):
            finalBadgeAt = at
            finalBadgeForced = forced
            addEntry(at: at, kind: .finalBadge, ref: nil, title: "Final badge unlocked",
                     subtitle: "\(rewardsUnlocked) of \(rewardsTotal) gifts", from: nil)

        case .secretSaved(let id, let author, let title, let description, let points):
            var dare = challenges[id] ?? Challenge(
                id: id, title: title, description: description, optionB: nil, points: points,
                difficulty: nil, category: nil, author: author, dare: .draft, completion: nil,
                order: 10_000 + (characters[author]?.order ?? 0))
            dare.title = title
            dare.description = description
            dare.points = points
            challenges[id] = dare

        case .secretDelivered(let id):
            challenges[id]?.dare = .delivered

        case .pointsAdjusted(let delta, _):
            if delta > 0 { earned += delta } else { spent -= delta }

        case .daySet(let newDay):
            day = newDay

        case .challengeSaved(let id, let fields, _):
            saveChallenge(id, fields)

        case .rewardSaved(let id, let fields, _):
            saveReward(id, fields)
        }
    }

    /// A delivered dare found: it shows on the board, and the timeline says so.
    private mutating func discover(_ challenge: inout Challenge, at: Millis) {
        challenge.dare = .discovered
        addEntry(at: at, kind: .secretDiscovered, ref: challenge.id, title: challenge.title,
                 subtitle: "worth \(challenge.points) ✦", from: authorName(challenge))
    }

    /// A new challenge goes after the regular ones; an edited one keeps its place and completion.
    private mutating func saveChallenge(_ id: String, _ fields: ChallengeFields) {
        var challenge = challenges[id] ?? Challenge(
            id: id, title: "", description: "", optionB: nil, points: 0, difficulty: nil, category: nil,
            author: nil, dare: nil, completion: nil,
            order: (challenges.values.filter { !$0.isSecret }.map(\.order).max() ?? -1) + 1)
        challenge.title = fields.title
        challenge.description = fields.description
        challenge.optionB = fields.optionB
        challenge.points = fields.points
        challenge.difficulty = fields.difficulty
        challenge.category = fields.category
        challenges[id] = challenge
    }

    /// A new reward goes last; an edited one keeps its place, its unlock and, unless the edit
    /// brings new content, its content.
    private mutating func saveReward(_ id: String, _ fields: RewardFields) {
        let order = rewards[id]?.order ?? ((rewards.values.map(\.order).max() ?? -1) + 1)
        let content = fields.content ?? rewards[id]?.content ?? RewardContent(text: nil, urls: [])
        rewards[id] = Reward(id: id, from: fields.from, fromCharacter: fields.fromCharacter, title: fields.title,
                             teaser: fields.teaser, type: fields.type, cost: fields.cost, order: order,
                             content: content, unlockedAt: rewards[id]?.unlockedAt)
    }

    private mutating func seed(_ content: SeedContent, hash: String) {
        seedHash = hash
        title = content.title
        day = content.day
        for (index, seed) in content.characters.enumerated() {
            characters[seed.id] = Character(id: seed.id, name: seed.name, role: seed.role, tagline: seed.tagline,
                                            funFacts: seed.funFacts, pin: seed.pin, order: index, device: nil, tokenHashes: [])
        }
        for (index, seed) in content.challenges.enumerated() {
            let fields = seed.fields
            challenges[seed.id] = Challenge(id: seed.id, title: fields.title, description: fields.description,
                                            optionB: fields.optionB, points: fields.points, difficulty: fields.difficulty,
                                            category: fields.category, author: nil, dare: nil, completion: nil, order: index)
        }
        for (index, seed) in content.rewards.enumerated() {
            let fields = seed.fields
            rewards[seed.id] = Reward(id: seed.id, from: fields.from, fromCharacter: fields.fromCharacter, title: fields.title,
                                      teaser: fields.teaser, type: fields.type, cost: fields.cost, order: index,
                                      content: fields.content ?? RewardContent(text: nil, urls: []), unlockedAt: nil)
        }
    }

    private func authorName(_ challenge: Challenge) -> String? {
        challenge.author.map { characters[$0]?.name ?? $0 }
    }

    private mutating func addEntry(at: Millis, kind: TimelineKind, ref: String?, title: String, subtitle: String, from: String?) {
        timeline.append(TimelineEntry(seq: timeline.count + 1, at: at, kind: kind, ref: ref, title: title, subtitle: subtitle, from: from))
    }
}
