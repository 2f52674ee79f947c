import Domain

/// Who a connection is signed in as. A character identity remembers the token it
/// used, so revoking that token (takeover, unclaim) can find the connection.
enum Identity: Hashable {
    case character(String, tokenHash: String)
    case admin

    var viewer: Viewer {
        switch self {
        case .character(let id, _): return .character(id)
        case .admin: return .admin
        }
    }

    var actor: Actor {
        switch self {
        case .character(let id, _): return .character(id)
        case .admin: return .admin
        }
    }

    /// Idempotency keys belong to an identity: a character (whatever device) or admin.
    var idempotencyOwner: String {
        switch self {
        case .character(let id, _): return "character:" + id
        case .admin: return "admin"
        }
    }
}
