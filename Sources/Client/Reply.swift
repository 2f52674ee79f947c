import JSON
import Protocol

/// A successful reply to one request.
public struct Reply: Sendable {
    /// The op this reply answers.
    public let op: String
    /// The game version the reply reflects (after the mutation, for a mutation).
    public let version: Int?
    /// The op's `result` object.
    public let result: JSONValue
    /// True when the server answered an idempotent retry from its memory and committed nothing.
    public let replayed: Bool
}

/// A request the server answered with `ok: false`: its stable code and its message for people.
public struct ServerRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public let op: String
    /// The wire code, e.g. `insufficient_points` (kept as text: servers may add codes).
    public let code: String
    public let message: String
    /// The request's field at fault, when the server names one (a `bad_request` about one field).
    public let field: String?

    public init(op: String, code: String, message: String, field: String? = nil) {
        self.op = op
        self.code = code
        self.message = message
        self.field = field
    }

    /// The code as a known `ErrorCode`, or nil for a code this client does not know.
    public var errorCode: ErrorCode? { ErrorCode(rawValue: code) }

    public var description: String { message }
}

/// Why a request gave no reply.
public enum ClientError: Error, Sendable, CustomStringConvertible {
    /// The server refused the request.
    case refused(ServerRefusal)
    /// No reply within the request's timeout (the client may still be reconnecting).
    case timedOut(op: String)
    /// A mutation got no reply within its timeout and may have been applied. The client keeps
    /// it and sends it again, with its idempotency key, once it reconnects: it is applied at
    /// most once, and its reply comes later as `ClientEvent.lateReply`. Sending the same change
    /// again as a new request would apply it twice.
    case unconfirmed(op: String)
    /// The client was closed before a reply came.
    case closed
    /// The first connection could not be made.
    case connectFailed(String)
    /// Something took the first connection, but it never became a session (silence, or closed
    /// before the server's hello), also when tried again until the request timeout.
    case noSession(String)
    /// The server is up but turned the connection away: it holds as many as it allows.
    case serverFull(String)
    /// The server sent something this client cannot read.
    case protocolViolation(String)

    public var description: String {
        switch self {
        case .refused(let refusal): refusal.message
        case .timedOut(let op): "no reply to \(op) in time (is the server running?)"
        case .unconfirmed(let op):
            "no reply to \(op) yet (is the server running?). It is kept and sent again once the connection is back, "
                + "and applied at most once; its answer will show when it comes. Do not repeat it."
        case .closed: "the connection is closed"
        case .connectFailed(let why), .noSession(let why): "cannot connect: \(why)"
        case .serverFull(let message): message
        case .protocolViolation(let why): "protocol violation: \(why)"
        }
    }

    /// The server's refusal, when this is one.
    public var refusal: ServerRefusal? {
        if case .refused(let refusal) = self { return refusal }
        return nil
    }
}

/// Something that happened on the connection, reported to the observer.
public enum ClientEvent: Sendable {
    /// A `hello` push: the first line of every connection.
    case hello(server: String, game: String, version: Int)
    /// The mirror was replaced by a snapshot at `version`.
    case snapshot(version: Int, view: JSONValue)
    /// A patch was applied; `old` and `view` are the mirror before and after.
    case patch(from: Int, to: Int, ops: [PatchOp], old: JSONValue, view: JSONValue)
    /// Every line that had arrived is handled, and `.patch` or `.snapshot` events came since the
    /// last `.caughtUp`: the views of a burst (a screen waking up, a reconnect's catching up)
    /// arrive together, and an observer that shows changes may show them once, from the newest.
    /// Reported on the reader thread right after the last of them is handled, or after the line
    /// that ends the burst if that is not a view, or before `.disconnected` when the connection
    /// is lost with lines still unread.
    case caughtUp
    /// A reconnect's resubscribe found that the server's game is not the one the mirror was
    /// built from (its log restored from an older backup, then played on; another server at
    /// the address): the `.snapshot` that comes next replaces the mirror, and is not the game
    /// having moved on from it. Reported on the reader thread, before that snapshot.
    case diverged
    /// A patch did not chain onto the mirror (or did not apply); the client resubscribed.
    case gap(mirror: Int, from: Int)
    /// The server said goodbye with this reason (`server_shutdown`, `unclaimed`, ...).
    case bye(reason: String)
    /// The connection was lost; the client is reconnecting (unless closed).
    case disconnected(reason: String)
    /// A reconnect reached the server, which turned it away for now (full, too many connections
    /// from this address, shutting down, sign-in or resubscribe not possible yet); the client
    /// keeps trying. Reported once per reason while the reconnect lasts.
    case reconnectRefused(reason: String)
    /// A new connection is signed in again and resubscribed; in-flight requests were re-sent.
    case reconnected
    /// The saved session no longer works (unclaimed, taken over, wrong key): signed out.
    case sessionLost(reason: String)
    /// The answer to a mutation whose wait ended with `ClientError.unconfirmed`, with the
    /// arguments it was sent with (its `idem` among them).
    case lateReply(op: String, args: [String: JSONValue], Result<Reply, ClientError>)
}

/// How the client signs in again after a reconnect.
public enum Credentials: Sendable, Equatable {
    case token(String)
    case adminKey(String, game: String?)
}

/// The ops that change the game: each is sent with an idempotency key so a retry applies once.
public enum MutationOps {
    public static let all: Set<String> = RequestDecoder.mutationOps
}
