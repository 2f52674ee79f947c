import Domain

/// The stable error codes of PROTOCOL.md. Clients switch on these; never rename one.
public enum ErrorCode: String, Sendable, Hashable, CaseIterable {
    case badJSON = "bad_json"
    case badRequest = "bad_request"
    case unknownOp = "unknown_op"
    case lineTooLong = "line_too_long"
    case unauthenticated
    case forbidden
    case notFound = "not_found"
    case alreadyClaimed = "already_claimed"
    case alreadyCompleted = "already_completed"
    case alreadyUnlocked = "already_unlocked"
    case insufficientPoints = "insufficient_points"
    case secretLocked = "secret_locked"
    case versionConflict = "version_conflict"
    case idempotencyMismatch = "idempotency_mismatch"
    case rateLimited = "rate_limited"
    case unavailable
    case `internal`

    /// The codes that count toward the "bad lines in a row" limit.
    public var isBadLine: Bool {
        switch self {
        case .badJSON, .lineTooLong, .badRequest, .unknownOp: return true
        default: return false
        }
    }
}

/// A refusal as it goes on the wire.
public struct ProtocolError: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String

    public init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public init(_ rejection: Rejection) {
        self.code = ErrorCode(rawValue: rejection.code.rawValue) ?? .internal
        self.message = rejection.message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
