/// The game's rules: answers a command with the events that carry it out, or
/// with the reason it is refused. Pure: the same state, command and context
/// always give the same answer.
public func decide(_ state: GameState, _ command: Command, _ context: CommandContext) -> Result<[Event], Rejection> {
    do {
        let changes = try Decider(state: state, context: context).changes(for: command)
        return .success(changes.map { Event(at: context.at, actor: eventActor(command, context), change: $0) })
    } catch {
        return .failure(error)
    }
}

/// A claim is made by a device that has not signed in yet: the log records the
/// character it claimed as the actor.
private func eventActor(_ command: Command, _ context: CommandContext) -> Actor {
    if case .claim(let character, _, _, _) = command { return .character(character) }
    return context.actor
}

private struct Decider {
    let state: GameState
    let context: CommandContext

    func changes(for command: Command) throws(Rejection) -> [Change] {
        switch command {
        case .seed(let content, let hash): return try seed(content, hash: hash)
        // Every other command acts on a game that exists.
        case _ where !state.isSeeded: throw Rejection(.notFound, "This game has not been set up yet")
        case .claim(let character, let device, let pin, let tokenHash):
            return try claim(character, device: device, pin: pin, tokenHash: tokenHash)
        case .unclaim(let character): return try unclaim(character)
        case .completeChallenge(let id, let proof, let option): return try complete(id, proof: proof, option: option)
        case .discoverSecrets: return try discover()
        case .unlockReward(let id): return try unlock(id)
        case .saveSecret(let title, let description, let points): return try saveSecret(title: title, description: description, points: points)
        case .deliverSecret: return try deliverSecret()
        case .forceComplete(let id): return try forceComplete(id)
        case .forceUnlock(let id, let deduct): return try forceUnlock(id, deduct: deduct)
        case .triggerFinalBadge: return try triggerFinalBadge()
        case .adjustPoints(let delta, let reason): return try adjustPoints(delta, reason: reason)
        case .setDay(let day): return try setDay(day)
        case .saveChallenge(let id, let fields): return try saveChallenge(id, fields)
        case .saveReward(let id, let fields): return try saveReward(id, fields)
        }
    }

    // MARK: Who may do what

    private func requireBirthday(_ doing: String) throws(Rejection) {
        guard state.role(of: context.actor) == .birthday else {
            throw Rejection(.forbidden, "Only the birthday person can \(doing)")
        }
    }

    /// Returns the author: dares belong to a character, so the admin console has none.
    private func requireFriend(_ doing: String) throws(Rejection) -> Character {
        guard case .character(let id) = context.actor, let character = state.characters[id], character.role.isFriend else {
            throw Rejection(.forbidden, "Only a friend can \(doing)")
        }
        return character
    }

    private func requireOrganizer(_ doing: String) throws(Rejection) {
        if context.actor == .system || state.isOrganizer(context.actor) { return }
        throw Rejection(.forbidden, "Only the organizer can \(doing)")
    }

    // MARK: Lookups

    private func challenge(_ id: String) throws(Rejection) -> Challenge {
        guard let challenge = state.challenges[id] else { throw Rejection(.notFound, "No challenge \"\(id)\"") }
        return challenge
    }

    private func reward(_ id: String) throws(Rejection) -> Reward {
        guard let reward = state.rewards[id] else { throw Rejection(.notFound, "No reward \"\(id)\"") }
        return reward
    }

    private func requireLength(_ text: String, _ range: ClosedRange<Int>, _ field: String, allowingBlank: Bool = false) throws(Rejection) {
        if let problem = text.lengthProblem(range, allowingBlank: allowingBlank) { throw Rejection(.badRequest, "\(field) \(problem)", field: field) }
    }

    // MARK: Seeding and claims

    private func seed(_ content: SeedContent, hash: String) throws(Rejection) -> [Change] {
        try requireOrganizer("seed a game")
        if state.seedHash == hash { return [] }
        guard state.version == 0 else {
            throw Rejection(.badRequest, "This game already has events; it cannot be seeded with other content")
        }
        let problems = content.problems()
        if let first = problems.first {
            let more = problems.count > 1 ? " (and \(problems.count - 1) more)" : ""
            throw Rejection(.badRequest, "Seed content is invalid: \(first)\(more)")
        }
        return [.gameSeeded(content: content, hash: hash)]
    }

    private func claim(_ id: String, device: String, pin: String?, tokenHash: String) throws(Rejection) -> [Change] {
        guard let character = state.characters[id] else { throw Rejection(.notFound, "No character \"\(id)\"") }
        try requireLength(device, Limits.device, "device", allowingBlank: true)
        guard let holder = character.device, holder != device else {
            if context.claimsNeedPIN, character.device == nil, let expected = character.pin, pin != expected {
                throw Rejection(.forbidden, pin == nil ? "Claiming \(character.name) needs \(character.name)'s PIN on this server"
                                                       : "Cannot claim \(character.name): wrong PIN")
            }
            // The device's other sessions go on; at the bound, its oldest token ends.
            let ends = character.device == device && character.tokenHashes.count >= Limits.tokensPerCharacter ? character.tokenHashes.oldest : nil
            return [.characterClaimed(character: id, device: device, tokenHash: tokenHash, takeover: false, endsToken: ends)]
        }
        guard let pin else {
            throw Rejection(.alreadyClaimed, "\(character.name) is already claimed by another device")
        }
        guard let expected = character.pin, expected == pin else {
            let reason = character.pin == nil ? "has no PIN; ask the organizer to unclaim it" : "wrong PIN"
            throw Rejection(.forbidden, "Cannot take over \(character.name): \(reason)")
        }
        return [.characterClaimed(character: id, device: device, tokenHash: tokenHash, takeover: true)]
    }

    private func unclaim(_ id: String) throws(Rejection) -> [Change] {
        try requireOrganizer("unclaim a character")
        guard let character = state.characters[id] else { throw Rejection(.notFound, "No character \"\(id)\"") }
        return character.isClaimed ? [.characterUnclaimed(character: id)] : []
    }

    // MARK: Challenges

    private func complete(_ id: String, proof: Proof, option: ChallengeOption?) throws(Rejection) -> [Change] {
        try requireBirthday("complete a challenge")
        let challenge = try challenge(id)
        // A dare the birthday person has not found does not exist for them.
        guard challenge.isOnBoard else { throw Rejection(.notFound, "No challenge \"\(id)\"") }
        guard !challenge.isCompleted else { throw alreadyCompleted(challenge) }
        if option == .b && challenge.optionB == nil {
            throw Rejection(.badRequest, "option: \"\(challenge.title)\" has no option b, only a", field: "option")
        }
        switch proof {
        case .text(let text): try requireLength(text, Limits.proofText, "proof.text")
        case .photo(let url):
            try requireLength(url, Limits.proofURL, "proof.url")
            guard url.isWebLink else {
                throw Rejection(.badRequest, "proof.url must be \(String.webLinkRule)", field: "proof.url")
            }
        case .done: break
        }
        return [.challengeCompleted(challenge: id, option: option ?? .a, proof: proof, forced: false, points: challenge.points)]
    }

    private func forceComplete(_ id: String) throws(Rejection) -> [Change] {
        try requireOrganizer("force-complete a challenge")
        let challenge = try challenge(id)
        guard challenge.dare != .draft else { throw Rejection(.notFound, "\"\(id)\" is a draft dare, not delivered yet") }
        guard !challenge.isCompleted else { throw alreadyCompleted(challenge) }
        return [.challengeCompleted(challenge: id, option: .a, proof: nil, forced: true, points: challenge.points)]
    }

    /// Named as it was done: a 2-in-1 completed as its option b is known by that option's title.
    private func alreadyCompleted(_ challenge: Challenge) -> Rejection {
        guard challenge.completion?.option == .b, let optionB = challenge.optionB else {
            return Rejection(.alreadyCompleted, "\"\(challenge.title)\" is already completed")
        }
        return Rejection(.alreadyCompleted, "\"\(challenge.title)\" is already completed, as its option b \"\(optionB.title)\"")
    }

    private func saveChallenge(_ id: String?, _ fields: ChallengeFields) throws(Rejection) -> [Change] {
        try requireOrganizer("add or edit challenges")
        // What is edited comes before how: a refusal of one of the fields would hide that this
        // challenge cannot be edited at all (unknown, a dare, or completed).
        if let id {
            let challenge = try challenge(id)
            guard !challenge.isSecret else { throw Rejection(.forbidden, "\"\(id)\" is a secret dare: only its author edits it") }
            guard !challenge.isCompleted else { throw Rejection(.alreadyCompleted, "\"\(challenge.title)\" is completed and can no longer be edited") }
        }
        if let problem = fields.problems(at: "challenge").first {
            throw Rejection(.badRequest, problem.description, field: problem.field(under: "challenge"))
        }
        guard let id else {
            let regular = state.challenges.values.count { !$0.isSecret }
            guard regular < Limits.maxChallenges else {
                throw Rejection(.badRequest, "A game holds at most \(Limits.maxChallenges) challenges (dares aside); edit one instead")
            }
            let newID = nextFreeID(prefix: "c", from: regular + 1) { state.challenges[$0] != nil }
            return [.challengeSaved(challenge: newID, fields: fields, created: true)]
        }
        // Saving a challenge as it stands changes nothing, and so commits nothing.
        if let challenge = state.challenges[id], challenge.title == fields.title, challenge.description == fields.description,
           challenge.optionB == fields.optionB, challenge.points == fields.points,
           challenge.difficulty == fields.difficulty, challenge.category == fields.category {
            return []
        }
        return [.challengeSaved(challenge: id, fields: fields, created: false)]
    }

    // MARK: Secret dares

    private func saveSecret(title: String, description: String, points: Int) throws(Rejection) -> [Change] {
        let author = try requireFriend("write a secret dare")
        try requireLength(title, Limits.title, "title")
        try requireLength(description, Limits.description, "description")
        guard Limits.secretPoints.contains(points) else {
            throw Rejection(.badRequest, "points must be one of \(Limits.secretPointsSpelled), got \(points)", field: "points")
        }
        let id = GameState.dareID(author: author.id)
        if let existing = state.challenges[id] {
            guard existing.dare == .draft else {
                throw Rejection(.secretLocked, "Your dare was delivered: it can no longer be edited")
            }
            // Saving the draft as it stands changes nothing, and so commits nothing.
            if existing.title == title, existing.description == description, existing.points == points { return [] }
        }
        return [.secretSaved(challenge: id, author: author.id, title: title, description: description, points: points)]
    }

    private func deliverSecret() throws(Rejection) -> [Change] {
        let author = try requireFriend("deliver a secret dare")
        let id = GameState.dareID(author: author.id)
        guard let dare = state.challenges[id] else { throw Rejection(.notFound, "You have no dare to deliver: save one first") }
        guard dare.dare == .draft else { throw Rejection(.secretLocked, "Your dare was already delivered") }
        return [.secretDelivered(challenge: id)]
    }

    private func discover() throws(Rejection) -> [Change] {
        try requireBirthday("discover secret dares")
        let hidden = state.sortedChallenges.filter { $0.dare == .delivered }.map(\.id)
        return hidden.isEmpty ? [] : [.secretsDiscovered(challenges: hidden)]
    }

    // MARK: Rewards and the final badge

    private func unlock(_ id: String) throws(Rejection) -> [Change] {
        try requireBirthday("unlock a reward")
        let reward = try reward(id)
        guard !reward.isUnlocked else { throw Rejection(.alreadyUnlocked, "\"\(reward.title)\" is already unlocked") }
        guard state.points >= reward.cost else {
            throw Rejection(.insufficientPoints, "Not enough points: have \(state.points), need \(reward.cost)")
        }
        return [.rewardUnlocked(reward: id, cost: reward.cost, forced: false)] + badgeIfLast(unlocking: id)
    }

    private func forceUnlock(_ id: String, deduct: Bool) throws(Rejection) -> [Change] {
        try requireOrganizer("force-unlock a reward")
        let reward = try reward(id)
        guard !reward.isUnlocked else { throw Rejection(.alreadyUnlocked, "\"\(reward.title)\" is already unlocked") }
        if deduct && state.points < reward.cost {
            throw Rejection(.insufficientPoints, "Not enough points: have \(state.points), need \(reward.cost)")
        }
        return [.rewardUnlocked(reward: id, cost: deduct ? reward.cost : 0, forced: true)] + badgeIfLast(unlocking: id)
    }

    /// The badge comes in the same commit as the unlock of the last locked reward.
    private func badgeIfLast(unlocking id: String) -> [Change] {
        let stillLocked = state.rewards.values.contains { !$0.isUnlocked && $0.id != id }
        return stillLocked || state.hasFinalBadge ? [] : [.finalBadgeUnlocked(forced: false)]
    }

    private func triggerFinalBadge() throws(Rejection) -> [Change] {
        try requireOrganizer("trigger the final badge")
        guard !state.hasFinalBadge else { throw Rejection(.alreadyUnlocked, "The final badge is already unlocked") }
        return [.finalBadgeUnlocked(forced: true)]
    }

    private func saveReward(_ id: String?, _ fields: RewardFields) throws(Rejection) -> [Change] {
        try requireOrganizer("add or edit rewards")
        // What is edited before how, as for challenges.
        if let id {
            let reward = try reward(id)
            guard !reward.isUnlocked else { throw Rejection(.alreadyUnlocked, "\"\(reward.title)\" is unlocked and can no longer be edited") }
        }
        if let problem = fields.problems(at: "reward", characters: Set(state.characters.keys)).first {
            throw Rejection(.badRequest, problem.description, field: problem.field(under: "reward"))
        }
        if let giver = fields.fromCharacter, state.characters[giver]?.role == .birthday {
            throw Rejection(.badRequest, "reward.from_character: a gift cannot come from the birthday person", field: "from_character")
        }
        guard let id else {
            guard state.rewards.count < Limits.maxRewards else {
                throw Rejection(.badRequest, "A game holds at most \(Limits.maxRewards) rewards; edit one instead")
            }
            let newID = nextFreeID(prefix: "r", from: state.rewards.count + 1) { state.rewards[$0] != nil }
            return [.rewardSaved(reward: newID, fields: fields, created: true)]
        }
        // Saving a reward as it stands (an edit without content keeps it) changes nothing.
        if let reward = state.rewards[id], reward.from == fields.from, reward.fromCharacter == fields.fromCharacter,
           reward.title == fields.title, reward.teaser == fields.teaser, reward.type == fields.type,
           reward.cost == fields.cost, fields.content.map({ $0 == reward.content }) ?? true {
            return []
        }
        return [.rewardSaved(reward: id, fields: fields, created: false)]
    }

    // MARK: Points and the day

    private func adjustPoints(_ delta: Int, reason: String) throws(Rejection) -> [Change] {
        try requireOrganizer("adjust points")
        guard delta != 0, (-Limits.maxAdjustment...Limits.maxAdjustment).contains(delta) else {
            throw Rejection(.badRequest, "delta must be a non-zero integer of at most \(Limits.maxAdjustment) either way, got \(delta)",
                            field: "delta")
        }
        try requireLength(reason, Limits.reason, "reason")
        // Replay applies every event without a check, so a total that cannot be held must be
        // refused here, or it would stop every start-up after it.
        if delta > 0, state.earned > Limits.maxEarned - delta {
            throw Rejection(.badRequest, "delta would take the points earned past \(Limits.maxEarned), the most a game can hold",
                            field: "delta")
        }
        if state.points + delta < 0 {
            throw Rejection(.insufficientPoints, "Not enough points: have \(state.points), cannot take \(-delta)")
        }
        return [.pointsAdjusted(delta: delta, reason: reason)]
    }

    private func setDay(_ day: Int) throws(Rejection) -> [Change] {
        try requireOrganizer("set the day")
        guard Limits.day.contains(day) else { throw Rejection(.badRequest, "day must be 1 to 366, got \(day)", field: "day") }
        return day == state.day ? [] : [.daySet(day: day)]
    }
}

/// "c16", "r10": the first id of the form prefix+number (two digits at least) nobody uses.
func nextFreeID(prefix: String, from start: Int, isTaken: (String) -> Bool) -> String {
    var number = max(start, 1)
    while true {
        let digits = String(number)
        let id = prefix + (digits.count < 2 ? "0" + digits : digits)
        if !isTaken(id) { return id }
        number += 1
    }
}
