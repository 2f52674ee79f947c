import Domain
import JSON

/// A request's `id`: echoed in its reply (a string verbatim; an integer written `7.0` comes back `7`).
public enum RequestID: Sendable, Hashable {
    case int(Int)
    case string(String)

    public var json: JSONValue {
        switch self {
        case .int(let number): return .int(number)
        case .string(let text): return .string(text)
        }
    }
}

/// What a request asks for, with its arguments checked and typed.
public enum Operation: Sendable, Hashable {
    case ping
    case characters(game: String?)
    case claim(character: String, device: String, pin: String?, game: String?)
    case auth(token: String)
    case admin(key: String, game: String?)
    case whoami
    case state
    /// `sinceDigest`: the client's `ViewDigest` of its view at `since` (lowercased), when sent.
    case subscribe(since: Int?, sinceDigest: String? = nil)
    case unsubscribe
    case timeline(after: Int, limit: Int)
    case events(after: Int, limit: Int)
    /// A change to the game: decided by the domain, committed to the log, and the only kind that
    /// takes `idem` and `expect`. (`claim` commits too, but it signs the connection in and takes
    /// neither, so it has a case of its own.)
    case mutation(Command)
}

public struct Request: Sendable, Hashable {
    public var id: RequestID
    public var op: String
    public var operation: Operation
    /// The idempotency key, for mutations.
    public var idem: String?
    /// The game version the client expects, for mutations (compare-and-set).
    public var expect: Int?
    /// For a mutation with an `idem` key: every field but `id`, `idem` and `expect`,
    /// canonically serialized as UTF-8: the same key with other canonical bytes is a different
    /// request (the server compares their digest, `Fingerprint`). Empty for every other request.
    public var canonicalBytes: [UInt8]

    /// `canonicalBytes` as text.
    public var canonicalText: String { String(decoding: canonicalBytes, as: UTF8.self) }
}

/// A request that could not be decoded: the reply still carries its id when it had a usable one.
public struct RequestFailure: Error, Sendable, Hashable {
    public var id: RequestID?
    public var error: ProtocolError
}
