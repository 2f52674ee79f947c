/// Everything a person (or the seeder) can ask of a game. The server turns a
/// protocol request into one of these; `decide` answers it.
public enum Command: Sendable, Hashable {
    case seed(SeedContent, hash: String)
    /// `tokenHash` is the hash of a fresh random token the server made for this claim.
    case claim(character: String, device: String, pin: String?, tokenHash: String)
    case unclaim(character: String)
    case completeChallenge(challenge: String, proof: Proof, option: ChallengeOption?)
    case discoverSecrets
    case unlockReward(reward: String)
    case saveSecret(title: String, description: String, points: Int)
    case deliverSecret
    case forceComplete(challenge: String)
    case forceUnlock(reward: String, deduct: Bool)
    case triggerFinalBadge
    case adjustPoints(delta: Int, reason: String)
    case setDay(Int)
    case saveChallenge(id: String?, ChallengeFields)
    case saveReward(id: String?, RewardFields)
}

/// The values a decision needs from outside the domain: who asks, and when.
public struct CommandContext: Sendable, Hashable {
    public var actor: Actor
    public var at: Millis
    /// The house rule that a character with a PIN is claimed only with it, even while nobody
    /// holds it (PROTOCOL.md lets the first device that asks claim a free one). It keeps anyone,
    /// the birthday person included, from claiming a friend first and reading the gifts and dares
    /// that friend may see.
    public var claimsNeedPIN: Bool

    public init(actor: Actor, at: Millis, claimsNeedPIN: Bool = false) {
        self.actor = actor
        self.at = at
        self.claimsNeedPIN = claimsNeedPIN
    }
}

/// The stable codes of PROTOCOL.md that a game rule can give.
public enum RejectionCode: String, Sendable, Hashable, CaseIterable {
    case badRequest = "bad_request"
    case forbidden
    case notFound = "not_found"
    case alreadyClaimed = "already_claimed"
    case alreadyCompleted = "already_completed"
    case alreadyUnlocked = "already_unlocked"
    case insufficientPoints = "insufficient_points"
    case secretLocked = "secret_locked"
}

/// Why a command was refused. A refused command changes nothing.
public struct Rejection: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: RejectionCode
    public var message: String
    /// The command's field at fault, named as the request names it (`points`, `proof.url`),
    /// when a `badRequest` is about one field.
    public var field: String?

    public init(_ code: RejectionCode, _ message: String, field: String? = nil) {
        self.code = code
        self.message = message
        self.field = field
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
