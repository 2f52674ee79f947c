import Foundation
import JSON
import Protocol
import POSIXSupport

/// What a `GameClient` is made of, held by its reader thread and its reader's send queue as
/// well as by the handle, so that the handle alone decides the client's lifetime.
///
/// Everything the threads share is one `ClientState` behind one lock (`state`); a separate write
/// lock keeps lines whole and in order (lock order: write lock, then state). The reader's own
/// requests (pings, a resubscribe) go out from a serial dispatch queue, so that the reader never
/// waits for the write lock.
final class ClientCore: Sendable {
    let host: String
    let port: Int
    let options: ClientOptions

    /// Serializes writes and socket replacement; always taken before `state`.
    let writeLock = NSLock()
    /// What the reader and the callers share; `changing` also wakes the threads waiting on it.
    let state = Guarded(ClientState())
    /// The reader's own requests (pings, a resubscribe) are sent from here, in order: the reader
    /// must never wait for the write lock, which a sender blocked on a full socket may hold until
    /// the reader drains the connection.
    private let readerSends = DispatchQueue(label: "bq.client.reader-sends")

    init(host: String, port: Int, options: ClientOptions) {
        self.host = host
        self.port = port
        self.options = options
    }

    /// Stops reconnecting, closes the connection and fails waiting requests with `.closed`; waits
    /// (a little) for the reader to finish. A second call returns at once.
    func close() {
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
        // The reader itself (an event observer that closed the client) cannot wait for its own
        // end: it comes once the observer returns.
        let onReader = state.withLock { $0.readerThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
        if wasClosing || onReader { return }
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

/// Everything the reader thread and the callers share, reachable only through `ClientCore.state`.
struct ClientState: Sendable {
    var socket: BlockingLineSocket?
    /// A reconnect's new connection until it is signed in and becomes `socket`, for `close`.
    var connecting: BlockingLineSocket?
    var ready = false
    /// Counts connections: a request sent on an earlier one is sent again on the next.
    var generation = 0
    var closing = false
    /// The reader thread, once it runs.
    var readerThread: pthread_t?
    var readerDone = false
    var nextID = 1
    var pending: [Int: PendingState] = [:]
    var savedCredentials: Credentials?
    var subscribed = false
    var resyncing = false
    /// Gaps without `patchesThatEndAGapStreak` patches applied between them: a server whose
    /// patches do not fit (a faulty one, every one or every other) would otherwise be asked for a
    /// snapshot after every gap, dozens of times a second.
    var gapsInARow = 0
    var patchesSinceGap = 0
    static let patchesThatEndAGapStreak = 16
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
