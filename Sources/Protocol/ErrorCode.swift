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

    /// Refusals that say nothing about the request itself, only that the server cannot take it
    /// now (too fast, storage failing, a fault): the same request may pass later.
    public var isTransient: Bool {
        switch self {
        case .rateLimited, .unavailable, .internal: return true
        default: return false
        }
    }

    /// The codes that count toward the "bad lines in a row" limit.
    public var isBadLine: Bool {
        switch self {
        case .badJSON, .lineTooLong, .badRequest, .unknownOp: return true
        default: return false
        }
    }
}

extension ErrorCode {
    /// Every rule the domain can break has its code on the wire: a new `RejectionCode` does not
    /// compile until it is given one here.
    public init(_ rejection: RejectionCode) {
        switch rejection {
        case .badRequest: self = .badRequest
        case .forbidden: self = .forbidden
        case .notFound: self = .notFound
        case .alreadyClaimed: self = .alreadyClaimed
        case .alreadyCompleted: self = .alreadyCompleted
        case .alreadyUnlocked: self = .alreadyUnlocked
        case .insufficientPoints: self = .insufficientPoints
        case .secretLocked: self = .secretLocked
        }
    }
}

/// A refusal as it goes on the wire.
public struct ProtocolError: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String
    /// The request's field at fault, as the request names it (`reward`, `proof.text`), when a
    /// `bad_request` is about one field: for a client to point at, as the message does for people.
    public var field: String?

    public init(_ code: ErrorCode, _ message: String, field: String? = nil) {
        self.code = code
        self.message = message
        self.field = field
    }

    public init(_ rejection: Rejection) {
        self.code = ErrorCode(rejection.code)
        self.message = rejection.message
        self.field = rejection.field
    }

    /// A `bad_request` about `field`: "Field `field` must be a string".
    public static func field(_ field: String, _ problem: String) -> ProtocolError {
        ProtocolError(.badRequest, "Field `\(field)` \(problem)", field: field)
    }

    /// A `bad_request` for a required field left out: "Missing field `field`", then `hint`.
    public static func missing(_ field: String, _ hint: String = "") -> ProtocolError {
        ProtocolError(.badRequest, "Missing field `\(field)`" + (hint.isEmpty ? "" : " " + hint), field: field)
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
