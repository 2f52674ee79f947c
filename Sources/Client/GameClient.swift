import Dispatch
import JSON

/// A connection to a BirthdayQuest server that survives server restarts.
///
/// Threads: one reader thread per client reads every line, matches replies to requests by id,
/// applies pushes to the mirror (`view`, `version`) and, when the connection is lost, reconnects
/// with backoff, signs in again with the saved credentials, resubscribes with `since` and re-sends
/// every request still waiting for its reply (mutations keep their original idempotency key, so
/// each is applied exactly once). Any thread may call `send`/`request`; they block only the
/// caller. Event observers, and line observers of received lines, run on the reader thread and
/// must not wait for a reply (the reader could not read it): hand work to another thread
/// instead. A line observer of a sent line runs on the sending thread while it holds the
/// client's write lock: it must neither send nor `close()`.
///
/// Lifetime: the reader thread works for a `ClientCore`, never for this handle, so a client
/// nobody holds any more closes itself, as `close()` would: its connection, reader and
/// reconnects end with it. A `PendingRequest` kept, or an observer that captures the client,
/// holds it, and keeps it open until `close()`.
public final class GameClient: Sendable {
    let core: ClientCore

    public var host: String { core.host }
    public var port: Int { core.port }
    public var options: ClientOptions { core.options }

    private init(core: ClientCore) {
        self.core = core
    }

    /// Connects, reads the server's `hello`, and starts the reader thread. `onLine`, when given,
    /// sees every raw line from the first one (the `hello`) on; see `onLine(_:)`.
    public static func connect(host: String = "127.0.0.1", port: Int, options: ClientOptions = ClientOptions(),
                               onLine: (@Sendable (_ line: String, _ outgoing: Bool) -> Void)? = nil) throws(ClientError) -> GameClient {
        let core = ClientCore(host: host, port: port, options: options)
        core.state.withLock { $0.lineObserver = onLine }
        try core.start()
        return GameClient(core: core)
    }

    /// On another thread: the last reference may go inside an observer, whose thread holds
    /// what `close` waits for (the reader's end, or the write lock for a sent line's observer).
    deinit {
        let core = self.core
        DispatchQueue.global().async { core.close() }
    }

    // MARK: Observing

    /// Called on the reader thread for every `ClientEvent`. Replaces any earlier observer.
    public func onEvent(_ observer: (@Sendable (ClientEvent) -> Void)?) {
        core.state.withLock { $0.observer = observer }
    }

    /// Called with every raw protocol line, sent (`outgoing`) or received, without its newline;
    /// the replies to the client's own requests (keep-alive pings, resubscribes, signing in again
    /// after a reconnect) are not passed on.
    public func onLine(_ observer: (@Sendable (_ line: String, _ outgoing: Bool) -> Void)?) {
        core.state.withLock { $0.lineObserver = observer }
    }

    /// The local mirror of this connection's view, once subscribed.
    public var view: JSONValue? { core.state.withLock { $0.mirror } }

    /// The version the mirror is at (0 before the first snapshot).
    public var version: Int { core.state.withLock { $0.mirrorVersion } }

    /// The mirror and its version, read together.
    public var mirrorSnapshot: (version: Int, view: JSONValue?) { core.state.withLock { ($0.mirrorVersion, $0.mirror) } }

    /// How the client signs in again after a reconnect: set by a successful `claim`, `auth` or `admin`.
    public var credentials: Credentials? { core.state.withLock { $0.savedCredentials } }

    /// How many times the connection was re-established.
    public var reconnectCount: Int { core.state.withLock { $0.reconnects } }

    /// Whether a signed-in connection is up right now.
    public var isConnected: Bool { core.state.withLock { $0.ready } }

    /// The server's default game, as its `hello` named it; nil before the first.
    public var serverDefaultGame: String? { core.state.withLock { $0.defaultGame } }

    /// The mutations whose wait ended `unconfirmed` and that are still kept to be re-sent,
    /// oldest first: closing the client gives them up.
    public var keptMutations: [(op: String, args: [String: JSONValue])] {
        core.state.withLock { $0.pending.values.filter { $0.abandoned && $0.isMutation }.sorted { $0.id < $1.id }.map { ($0.op, $0.args) } }
    }

    /// Every mutation sent and not yet answered, oldest first: the kept ones, and one a caller
    /// is still waiting for. What a process that ends now leaves unknown.
    public var unansweredMutations: [(op: String, args: [String: JSONValue])] {
        core.state.withLock { $0.pending.values.filter(\.isMutation).sorted { $0.id < $1.id }.map { ($0.op, $0.args) } }
    }

    /// Waits until the mirror is at `version` or later; false on timeout or close.
    @discardableResult
    public func waitForMirror(atLeast version: Int, timeout: Double? = nil) -> Bool {
        core.state.wait(seconds: timeout ?? options.requestTimeout) { state, expired in
            let reached = state.mirror != nil && state.mirrorVersion >= version
            return reached || state.readerDone || expired ? reached : nil
        }
    }

    // MARK: Requests

    /// Sends a request without waiting (pipelining): replies are matched by id, so several may be
    /// in flight. A mutation gets a fresh idempotency key unless `args` has an `idem`.
    public func send(_ op: String, _ args: [String: JSONValue] = [:]) -> PendingRequest {
        var fields = args
        if MutationOps.all.contains(op), fields["idem"] == nil {
            fields["idem"] = .string(IdempotencyKey.make())
        }
        let entry = core.submit(op, fields, awaited: true)
        return PendingRequest(client: self, id: entry.id, op: entry.op, args: entry.args, delivered: entry.delivered)
    }

    /// Sends a request and waits for its reply; a refusal throws `.refused` with the server's code
    /// and message. Across a reconnect the request is re-sent (same idempotency key) and awaited.
    /// `offline`: give up once the connection has been lost for that many seconds of the wait
    /// (a person waiting for the answer is better told it is kept for later).
    public func request(_ op: String, _ args: [String: JSONValue] = [:],
                        timeout: Double? = nil, offline: Double? = nil) throws(ClientError) -> Reply {
        try send(op, args).wait(timeout: timeout, offline: offline)
    }

    /// Stops reconnecting, closes the connection and fails waiting requests with `.closed`.
    /// Letting go of the client does the same; calling it says when.
    public func close() {
        core.close()
    }
}

/// A request sent with `GameClient.send`; `wait` blocks for its reply.
public struct PendingRequest: Sendable {
    /// Held, so that a request kept (to wait for, or waited for) keeps its client open.
    let client: GameClient
    let id: Int
    /// The op sent.
    public let op: String
    let args: [String: JSONValue]
    let delivered: Delivered

    /// The idempotency key sent with this request, for mutations.
    public var idem: String? { args["idem"]?.stringValue }

    /// Waits for the reply; see `GameClient.request`. Waiting again returns the same reply; a
    /// wait that ended without one gave the request up (a mutation's late answer goes to the
    /// observer), but a later wait still gets that answer if it has come.
    public func wait(timeout: Double? = nil, offline: Double? = nil) throws(ClientError) -> Reply {
        try client.core.wait(for: id, op: op, delivered: delivered, timeout: timeout, offline: offline)
    }
}

/// Random keys for idempotent mutations.
public enum IdempotencyKey {
    /// 32 hex digits from the system's random source.
    public static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in
            let part = String(generator.next() as UInt32, radix: 16)
            return String(repeating: "0", count: 8 - part.count) + part
        }.joined()
    }
}
