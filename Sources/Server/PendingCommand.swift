import Domain
import JSON
import Protocol

struct Waiter {
    let command: Command
    let request: Request
    let identity: Identity?
    let target: ReplyTarget
}

/// A class, not a struct: it sits in the pending queue, the idempotency map and the turn's
/// commit list at once, and copying a dozen reference-counted fields at every step showed up
/// in profiles. Loop thread only.
final class PendingCommand {
    let seq: UInt64
    let request: Request
    let events: [Event]
    /// The game version its reply names: after its events, or the version it was decided at.
    let versionAfter: Int
    let result: JSONValue
    let target: ReplyTarget
    let key: IdempotencyKey?
    /// The request's digest when it has an idempotency key.
    let fingerprint: Fingerprint?
    let onCommitted: ((GameState) -> Void)?
    /// Copies of a keyed request that arrived while this one was on its way to disk.
    var waiters: [Waiter] = []
    /// `result` as the log stores it, for a keyed command: its replies reuse these bytes.
    var encodedResult: [UInt8]?
    /// Set when the answer is a refusal decided while changes ahead of it were on their way to
    /// disk: it waits for them like any answer that writes nothing, since it was decided on a
    /// state they may never make durable.
    let refusal: ProtocolError?
    /// The refusal went out ahead of its turn: a revocation, durable, made it final
    /// (`GameHub.revokeStaleTokens`). Its turn answers nothing.
    var answeredAhead = false

    init(seq: UInt64, request: Request, events: [Event], versionAfter: Int, result: JSONValue, target: ReplyTarget,
         key: IdempotencyKey?, fingerprint: Fingerprint?, onCommitted: ((GameState) -> Void)?,
         refusal: ProtocolError? = nil) {
        self.refusal = refusal
        self.seq = seq
        self.request = request
        self.events = events
        self.versionAfter = versionAfter
        self.result = result
        self.target = target
        self.key = key
        self.fingerprint = fingerprint
        self.onCommitted = onCommitted
    }

    /// Goes to the log: it has events, or an idempotency key whose `ok` reply must be
    /// remembered even though nothing changed (a retry must replay it, not re-decide).
    var goesToLog: Bool { !events.isEmpty || key != nil }
}
