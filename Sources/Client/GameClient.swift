import Foundation
import JSON
import Protocol
import POSIXSupport

/// Tuning for a `GameClient`.
public struct ClientOptions: Sendable {
    /// How long `request` waits for a reply by default, reconnects included.
    public var requestTimeout: Double = 30
    /// The first wait for a connection and the server's `hello`; each later try waits twice as
    /// long as the one before (see `connectWait`).
    public var connectTimeoutMilliseconds = 3000
    /// Reconnect after a lost connection (with backoff), sign in again, resubscribe, re-send.
    public var reconnect = true
    /// The first pause before a reconnect attempt; it doubles up to `maxBackoff` (seconds).
    public var initialBackoff: Double = 0.05
    public var maxBackoff: Double = 2
    /// Seconds without a line from the server before the client pings it, to learn that the
    /// connection still works: a server restarted while this machine slept, or a network that
    /// dropped the connection without a word, never says so, and the screen would stay as it was.
    public var silenceBeforeProbe: Double = 30
    /// Seconds that ping may go without any line back before the connection is taken for lost
    /// and replaced (reconnect, sign in, resubscribe, re-send), as a closed one is. Also how
    /// long any request may go without its reply while the server's pushes keep coming: a
    /// server that no longer hears this client may still be heard.
    public var probeTimeout: Double = 15

    public init() {}

    /// How long the `attempt`th try (from 0) of a connect waits for the connection and the
    /// server's `hello`: `connectTimeoutMilliseconds`, doubling with each try up to the request
    /// timeout, so that a network slower than the first wait (a congested hotspot) still gets
    /// through. A reconnect's tries stop doubling sooner: each starts afresh, and a network back
    /// while a long try waits on a connection lost in the outage would be noticed only once that
    /// try gave up. Their cap is twice the first wait, twice `slowestHandshake` (the longest
    /// connect and `hello` that has succeeded, in milliseconds), or a quarter of the time the
    /// connection has been lost (`offline`, milliseconds), whichever is longest: a network back
    /// after an outage is found within about a quarter of the outage, and one that has become
    /// slower than every try so far still gets through, once the tries have grown to it.
    public func connectWait(attempt: Int, reconnectingAfter slowestHandshake: Int? = nil, offline: Int = 0) -> Int {
        let ceiling = max(connectTimeoutMilliseconds, Int(requestTimeout * 1000))
        let doubled = min(connectTimeoutMilliseconds << min(attempt, 10), ceiling)
        guard let slowestHandshake else { return doubled }
        return min(doubled, max(2 * connectTimeoutMilliseconds, 2 * slowestHandshake, offline / 4))
    }
}

/// A connection to a BirthdayQuest server that survives server restarts.
///
/// Threads: one reader thread per client reads every line, matches replies to requests by id,
/// applies pushes to the mirror (`view`, `version`) and, when the connection is lost, reconnects
/// with backoff, signs in again with the saved credentials, resubscribes with `since` and re-sends
/// every request still waiting for its reply (mutations keep their original idempotency key, so
/// each is applied exactly once). Any thread may call `send`/`request`; they block only the
/// caller. Everything the threads share is one `ClientState` behind one lock (`state`); a
/// separate write lock keeps lines whole and in order (lock order: write lock, then state). The
/// reader's own requests (pings, a resubscribe) go out from a serial dispatch queue, so that the
/// reader never waits for the write lock.
/// Observers run on the reader thread and must not wait for a reply (the reader could not read
/// it): hand work to another thread instead.
public final class GameClient: Sendable {
    public let host: String
    public let port: Int
    public let options: ClientOptions

    /// Serializes writes and socket replacement; always taken before `state`.
    let writeLock = NSLock()
    /// What the reader and the callers share; `changing` also wakes the threads waiting on it.
    let state = Guarded(ClientState())
    /// The reader's own requests (pings, a resubscribe) are sent from here, in order: the reader
    /// must never wait for the write lock, which a sender blocked on a full socket may hold until
    /// the reader drains the connection.
    private let readerSends = DispatchQueue(label: "bq.client.reader-sends")

    private init(host: String, port: Int, options: ClientOptions) {
        self.host = host
        self.port = port
        self.options = options
    }

    /// Connects, reads the server's `hello`, and starts the reader thread. `onLine`, when given,
    /// sees every raw line from the first one (the `hello`) on; see `onLine(_:)`.
    public static func connect(host: String = "127.0.0.1", port: Int, options: ClientOptions = ClientOptions(),
                               onLine: (@Sendable (_ line: String, _ outgoing: Bool) -> Void)? = nil) throws(ClientError) -> GameClient {
        let client = GameClient(host: host, port: port, options: options)
        client.state.withLock { $0.lineObserver = onLine }
        try client.start()
        return client
    }

    deinit { close() }

    // MARK: Observing

    /// Called on the reader thread for every `ClientEvent`. Replaces any earlier observer.
    public func onEvent(_ observer: (@Sendable (ClientEvent) -> Void)?) {
        state.withLock { $0.observer = observer }
    }

    /// Called with every raw protocol line, sent (`outgoing`) or received, without its newline;
    /// the replies to the client's own requests (keep-alive pings, resubscribes, signing in again
    /// after a reconnect) are not passed on.
    public func onLine(_ observer: (@Sendable (_ line: String, _ outgoing: Bool) -> Void)?) {
        state.withLock { $0.lineObserver = observer }
    }

    /// The local mirror of this connection's view, once subscribed.
    public var view: JSONValue? { state.withLock { $0.mirror } }

    /// The version the mirror is at (0 before the first snapshot).
    public var version: Int { state.withLock { $0.mirrorVersion } }

    /// The mirror and its version, read together.
    public var mirrorSnapshot: (version: Int, view: JSONValue?) { state.withLock { ($0.mirrorVersion, $0.mirror) } }

    /// How the client signs in again after a reconnect: set by a successful `claim`, `auth` or `admin`.
    public var credentials: Credentials? { state.withLock { $0.savedCredentials } }

    /// How many times the connection was re-established.
    public var reconnectCount: Int { state.withLock { $0.reconnects } }

    /// Whether a signed-in connection is up right now.
    public var isConnected: Bool { state.withLock { $0.ready } }

    /// The server's default game, as its `hello` named it; nil before the first.
    public var serverDefaultGame: String? { state.withLock { $0.defaultGame } }

    /// The mutations whose wait ended `unconfirmed` and that are still kept to be re-sent,
    /// oldest first: closing the client gives them up.
    public var keptMutations: [(op: String, args: [String: JSONValue])] {
        state.withLock { $0.pending.values.filter { $0.abandoned && $0.isMutation }.sorted { $0.id < $1.id }.map { ($0.op, $0.args) } }
    }

    /// Every mutation sent and not yet answered, oldest first: the kept ones, and one a caller
    /// is still waiting for. What a process that ends now leaves unknown.
    public var unansweredMutations: [(op: String, args: [String: JSONValue])] {
        state.withLock { $0.pending.values.filter(\.isMutation).sorted { $0.id < $1.id }.map { ($0.op, $0.args) } }
    }

    /// Waits until the mirror is at `version` or later; false on timeout or close.
    @discardableResult
    public func waitForMirror(atLeast version: Int, timeout: Double? = nil) -> Bool {
        return state.wait(seconds: timeout ?? options.requestTimeout) { state, expired in
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
        let entry = submit(op, fields, awaited: true)
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
    /// Call it when done: the reader thread keeps the client alive until then.
    public func close() {
        // Marked first, so that the reader takes the hang-up it is about to see for the end,
        // not for a lost connection.
        let (wasClosing, early) = state.changing { state in
            defer { state.closing = true }
            return (state.closing, state.socket)
        }
        // A sender blocked on a peer that stopped reading holds the write lock: ending the
        // socket's sending side first fails its send at once.
        early?.shutdownWrite()
        writeLock.lock()
        // Read again under the write lock: a reconnect may have put a new socket in place.
        let (current, connecting) = state.withLock { ($0.socket, $0.connecting) }
        // Waking the reader: the server answers our FIN by hanging up. The reader closes the socket.
        current?.shutdownWrite()
        // A reconnect waiting for a server's hello may wait on one that never says it.
        connecting?.shutdownBoth()
        writeLock.unlock()
        if wasClosing { return }
        state.wait(seconds: 2) { state, expired in state.readerDone || expired ? () : nil }
    }

    /// Waits for the reply to request `id` (sent as `op`), which `delivered` keeps once it came.
    func wait(for id: Int, op: String, delivered: Delivered, timeout: Double?, offline: Double? = nil) throws(ClientError) -> Reply {
        let budget = offline.map { UInt64(max(0, min($0, 86_400)) * 1e9) }
        let started = monotonicNanoseconds()
        // When the connection, lost, has been lost for the whole budget of this wait.
        func due(_ state: ClientState) -> UInt64? {
            guard let budget, let lost = state.lostAt else { return nil }
            return max(lost, started) &+ budget
        }
        let outcome = state.wait(seconds: timeout ?? options.requestTimeout, dueAt: due) { state, expired -> Result<Reply, ClientError>? in
            if let outcome = delivered.outcome {
                // An awaited entry still listed is one nobody gave up on: its waiter takes it.
                state.pending[id] = nil
                return outcome
            }
            if state.readerDone { return .failure(.closed) }
            let offlineTooLong = due(state).map { monotonicNanoseconds() >= $0 } ?? false
            guard expired || offlineTooLong else { return nil }
            // Kept until its reply comes, which takes its place among the replies (a refusal with
            // `"id": null` is matched by that place). A mutation may have committed: a reconnect
            // still re-sends it with its key, so the server replays rather than applies it twice,
            // and its answer goes to the observer (and to a later wait on the same request).
            state.pending[id]?.abandoned = true
            return .failure(MutationOps.all.contains(op) ? .unconfirmed(op: op) : .timedOut(op: op))
        }
        return try outcome.get()
    }

    /// Registers the request and sends it now when a connection is ready; otherwise `markReady`
    /// sends it once a new connection is signed in.
    func enqueue(_ entry: PendingState) {
        writeLock.lock()
        defer { writeLock.unlock() }
        let (target, lines) = state.withLock { state -> (BlockingLineSocket?, LineObserver?) in
            var entry = entry
            let target = state.ready ? state.socket : nil
            if target != nil {
                entry.sentGeneration = state.generation
                entry.sentAt = bootTimeNanoseconds()
                state.lastSentAt = entry.sentAt
            }
            state.pending[entry.id] = entry
            return (target, state.lineObserver)
        }
        guard let target else { return }
        lines?(entry.line, true)
        // A failed send surfaces as a lost connection on the reader, which re-sends this entry.
        try? target.sendLine(entry.line)
    }

    /// Numbers the request and enqueues it. `awaited` is false for a request the reader makes for
    /// itself (resubscribe after a gap), which nobody waits for.
    @discardableResult
    func submit(_ op: String, _ args: [String: JSONValue], awaited: Bool) -> PendingState {
        let id = takeID()
        var fields = args
        fields["op"] = .string(op)
        fields["id"] = .int(id)
        let entry = PendingState(id: id, op: op, args: fields, awaited: awaited)
        enqueue(entry)
        return entry
    }

    /// Sends one of the reader's own requests without waiting for the write lock (`readerSends`),
    /// `after` seconds from now, `unless` the state by then says it is no longer wanted.
    func sendForReader(_ op: String, after delay: TimeInterval = 0,
                       unless unwanted: (@Sendable (ClientState) -> Bool)? = nil) {
        let client = self
        readerSends.asyncAfter(deadline: .now() + delay) {
            if let unwanted, client.state.withLock({ unwanted($0) }) { return }
            client.submit(op, [:], awaited: false)
        }
    }

    func takeID() -> Int {
        state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
    }
}

typealias LineObserver = @Sendable (_ line: String, _ outgoing: Bool) -> Void

/// Everything the reader thread and the callers share, reachable only through `GameClient.state`.
struct ClientState: Sendable {
    var socket: BlockingLineSocket?
    /// A reconnect's new connection until it is signed in and becomes `socket`, for `close`.
    var connecting: BlockingLineSocket?
    var ready = false
    /// Counts connections: a request sent on an earlier one is sent again on the next.
    var generation = 0
    var closing = false
    var readerDone = false
    var nextID = 1
    var pending: [Int: PendingState] = [:]
    var savedCredentials: Credentials?
    var subscribed = false
    var resyncing = false
    var mirror: JSONValue?
    var mirrorVersion = 0
    /// A `.patch` or `.snapshot` was reported that no `.caughtUp` has followed yet.
    var viewsSinceCaughtUp = false
    var reconnects = 0
    /// When the connection was lost (`monotonicNanoseconds`); nil while one is ready.
    var lostAt: UInt64?
    /// The longest a connect and the server's `hello` took among those that succeeded
    /// (milliseconds): how long a reconnect's tries may need (`ClientOptions.connectWait`).
    var slowestHandshake = 0
    /// The server's idle timeout, from its `hello`; nil when it has none.
    var idleTimeout: TimeInterval?
    /// The game the server's last `hello` named: its default game.
    var defaultGame: String?
    /// When a line was last sent (`bootTimeNanoseconds`, which a stepped wall clock does not
    /// move), for the idle ping.
    var lastSentAt = bootTimeNanoseconds()
    /// When the last push arrived (`bootTimeNanoseconds`), for `overdueReply`.
    var lastPushAt: UInt64 = 0
    /// The link's round trip as replies have measured it (nanoseconds): a rise counts at once,
    /// a fall an eighth at a time, so one quick reply does not make a slow link look fast.
    var roundTrip: UInt64 = 0
    var observer: (@Sendable (ClientEvent) -> Void)?
    var lineObserver: LineObserver?

    /// Takes one reply's time in flight into `roundTrip`.
    mutating func noteRoundTrip(_ sample: UInt64) {
        roundTrip = max(sample, roundTrip - roundTrip / 8)
    }
}

/// A request waiting for its reply, as kept in `ClientState.pending`.
struct PendingState: Sendable {
    let id: Int
    let op: String
    let args: [String: JSONValue]
    let line: String
    /// False for the reader's own requests: dropped with their connection, nobody waits.
    let awaited: Bool
    /// Its caller stopped waiting (timeout); removed once its reply arrives. A mutation may
    /// have committed, so it is still re-sent on a reconnect; anything else is dropped then.
    var abandoned = false
    var isMutation: Bool { MutationOps.all.contains(op) }
    var sentGeneration = -1
    /// When it was last sent (`bootTimeNanoseconds`), for `overdueReply`.
    var sentAt: UInt64 = 0
    /// Where the outcome is kept once the reply comes (or the client closes first): shared with
    /// the request's `PendingRequest`, which may still ask after the client has let go of it.
    let delivered = Delivered()
    var outcome: Result<Reply, ClientError>? { delivered.outcome }

    init(id: Int, op: String, args: [String: JSONValue], awaited: Bool) {
        self.id = id
        self.op = op
        self.args = args
        self.awaited = awaited
        line = JSONValue.object(args).serialized()
    }

    /// Records the outcome for the request's waiters. Under the client's lock.
    func settle(_ outcome: Result<Reply, ClientError>) {
        delivered.keep(outcome)
    }
}

/// A request's outcome, kept for its `PendingRequest`: a second wait gets what the first one
/// got, and a wait after one that gave up gets the reply that came late. Its own lock, taken
/// inside the client's (never the other way round).
final class Delivered: Sendable {
    private let value = Guarded<Result<Reply, ClientError>?>(nil)

    var outcome: Result<Reply, ClientError>? { value.withLock { $0 } }

    func keep(_ outcome: Result<Reply, ClientError>) {
        value.withLock { $0 = outcome }
    }
}

/// A request sent with `GameClient.send`; `wait` blocks for its reply.
public struct PendingRequest: Sendable {
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
        try client.wait(for: id, op: op, delivered: delivered, timeout: timeout, offline: offline)
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
