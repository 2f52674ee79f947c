/// What happened, with every value `evolve` needs: evolving never fails and never decides.
public enum Change: Sendable, Hashable {
    case gameSeeded(content: SeedContent, hash: String)
    /// `endsToken`: the hash of the holding device's oldest token, ended because the device
    /// held `Limits.tokensPerCharacter` of them. Recorded rather than worked out on replay, so
    /// that a replay from any snapshot ends the same token. A claim logged before it was
    /// recorded, at the bound, ended every earlier token of the device.
    case characterClaimed(character: String, device: String, tokenHash: String, takeover: Bool, endsToken: String? = nil)
    case characterUnclaimed(character: String)
    /// `proof` is nil for a forced completion; `points` is what it awarded.
    case challengeCompleted(challenge: String, option: ChallengeOption, proof: Proof?, forced: Bool, points: Int)
    case secretsDiscovered(challenges: [String])
    /// `cost` is what was deducted: 0 for a free forced unlock.
    case rewardUnlocked(reward: String, cost: Int, forced: Bool)
    case finalBadgeUnlocked(forced: Bool)
    case secretSaved(challenge: String, author: String, title: String, description: String, points: Int)
    case secretDelivered(challenge: String)
    case pointsAdjusted(delta: Int, reason: String)
    case daySet(day: Int)
    case challengeSaved(challenge: String, fields: ChallengeFields, created: Bool)
    case rewardSaved(reward: String, fields: RewardFields, created: Bool)

    /// The event's type as the log names it.
    public var type: String {
        switch self {
        case .gameSeeded: return "game_seeded"
        case .characterClaimed: return "character_claimed"
        case .characterUnclaimed: return "character_unclaimed"
        case .challengeCompleted: return "challenge_completed"
        case .secretsDiscovered: return "secrets_discovered"
        case .rewardUnlocked: return "reward_unlocked"
        case .finalBadgeUnlocked: return "final_badge_unlocked"
        case .secretSaved: return "secret_saved"
        case .secretDelivered: return "secret_delivered"
        case .pointsAdjusted: return "points_adjusted"
        case .daySet: return "day_set"
        case .challengeSaved: return "challenge_saved"
        case .rewardSaved: return "reward_saved"
        }
    }
}

/// One entry of a game's log: what changed, who did it and when.
public struct Event: Sendable, Hashable {
    public var at: Millis
    public var actor: Actor
    public var change: Change

    public init(at: Millis, actor: Actor, change: Change) {
        self.at = at
        self.actor = actor
        self.change = change
    }

    public var type: String { change.type }
}
