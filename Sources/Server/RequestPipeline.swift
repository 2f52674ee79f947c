import Protocol

/// One line of input, in the order it arrived.
enum Incoming {
    case request(Request)
    /// Refused before it reached the game (bad JSON, bad request, too fast, too long).
    case refusal(RequestID?, ProtocolError)
}

/// A connection's lines from arrival to reply: which line may start, and which replies may
/// leave. Replies leave in request order whatever finishes first, so a client may pipeline.
/// It does no I/O: `ClientConnection` starts the requests and sends the bytes, and the rules
/// live here, where tests reach them without a socket (`RequestPipelineTests`).
struct RequestPipeline {
    /// Lines not yet started, in arrival order (see `mayStart`).
    private var waiting = FIFO<Incoming>()
    /// Replies in request order: slot `firstSlot + i` is `slots[i]`, empty until answered.
    private var slots = FIFO<Slot>()
    private var firstSlot = 0
    /// Slots of claims and reads not yet answered: no change starts behind one (see `mayStart`).
    private var barrierSlots: Set<Int> = []
    /// Bad lines in a row, counted in the order the client sees their replies; an `ok` resets it.
    private(set) var badLinesInARow = 0
    /// False once the connection's last replies are being sent (`stopStarting`).
    private var isStarting = true
    let maxBadLines: Int

    init(maxBadLines: Int) {
        precondition(maxBadLines >= 1, "a client gets at least one reply before it is told it sent too many bad lines")
        self.maxBadLines = maxBadLines
    }

    /// Lines that arrived and were not started yet.
    var waitingCount: Int { waiting.count }
    /// Lines started (refusals included) whose replies have not left yet, answered or not.
    var unsentReplyCount: Int { slots.count }
    /// Every line between its arrival and its reply's leaving.
    var count: Int { waiting.count + slots.count }
    var isEmpty: Bool { slots.isEmpty && waiting.isEmpty }
    /// The client has had its last reply it may have: `bye` is due.
    var hasTooManyBadLines: Bool { badLinesInARow >= maxBadLines }

    /// Every line joins the wait in arrival order, refusals included, so that their replies
    /// keep their place.
    mutating func arrive(_ line: Incoming) {
        waiting.append(line)
    }

    /// Mutations pipeline. A read waits for every earlier reply to have left, so it sees the
    /// connection's own changes, and a `subscribe`'s first push leaves before any later patch
    /// (the connection counts the subscriber as sent that version at once). A change waits for
    /// an earlier read's answer in turn, so that the read does not show a change sent after it
    /// and the versions of a connection's replies never go back (most reads are answered at
    /// once; a `subscribe since` rebuilds a past view first). While a claim is unanswered
    /// everything waits, because the claim may change who this connection is; the other
    /// sign-ins, `auth` and `admin`, are reads, answered at once. A change never starts once the
    /// refusals ahead of it make `bye` certain before its reply: it could commit, and its client
    /// would never hear of it.
    private func mayStart(_ line: Incoming) -> Bool {
        guard case .request(let request) = line, !slots.isEmpty else { return true }
        return request.operation.isMutation && barrierSlots.isEmpty && knownBadLinesAhead < maxBadLines
    }

    /// The bad lines in a row that the client will have been sent just before the next line's
    /// reply, counting only the replies already known: one still unanswered may be an `ok`,
    /// which resets the count. (Refusals of other kinds neither count nor reset.) A run behind
    /// an unanswered reply is not counted: that reply is answered before the ones behind it
    /// (a connection's requests are answered in the order they start), and the change behind
    /// it could start only while the run ahead of it was short. The walk looks at most
    /// `knownRunLookBack` replies back, so that a long run of other refusals (stale `expect`s,
    /// say) costs each start a bounded look.
    private var knownBadLinesAhead: Int {
        var run = 0
        for index in stride(from: slots.count - 1, through: max(0, slots.count - Self.knownRunLookBack), by: -1) {
            guard slots[index].bytes != nil, let error = slots[index].error else { return run }
            if error.isBadLine { run += 1 }
        }
        // Past the look-back the run counted so far is a lower bound, and serves as one.
        return slots.count <= Self.knownRunLookBack ? run + badLinesInARow : run
    }

    static let knownRunLookBack = 256

    /// Starts nothing more: the connection is sending its last replies before `bye`.
    mutating func stopStarting() {
        isStarting = false
    }

    /// What starting a line asks of the connection.
    enum Started {
        /// Refused before the game: its reply already holds its place.
        case refused
        /// To be answered through `fill(slot:with:error:)`.
        case request(Request, slot: Int)
    }

    /// Takes the oldest waiting line if it may start now, and gives it its place in the reply
    /// order. Nothing starts once the client is due its `bye`.
    mutating func startNext() -> Started? {
        guard isStarting, !hasTooManyBadLines, let next = waiting.first, mayStart(next) else { return nil }
        _ = waiting.popFirst()
        switch next {
        case .refusal(let id, let error):
            slots.append(Slot(bytes: Wire.error(id: id, error), error: error.code))
            return .refused
        case .request(let request):
            let slot = firstSlot + slots.count
            slots.append(Slot())
            if !request.operation.isMutation { barrierSlots.insert(slot) }
            return .request(request, slot: slot)
        }
    }

    /// Answers a started request. False when the slot is not one waiting for its reply: it
    /// was answered already, or never handed out.
    mutating func fill(slot: Int, with bytes: [UInt8], error: ErrorCode?) -> Bool {
        let index = slot - firstSlot
        guard index >= 0, index < slots.count, slots[index].bytes == nil else { return false }
        slots[index] = Slot(bytes: bytes, error: error)
        // Nearly always empty under load (changes): skip hashing the slot for every reply.
        if !barrierSlots.isEmpty { barrierSlots.remove(slot) }
        return true
    }

    /// The next reply in order, if it is ready, taken out to be sent. None after the reply that
    /// brings the bad lines in a row to the limit: that client gets `bye` next, and nothing else.
    mutating func nextReply() -> [UInt8]? {
        guard !hasTooManyBadLines, let head = slots.first, let bytes = head.bytes else { return nil }
        _ = slots.popFirst()
        firstSlot += 1
        if let error = head.error {
            if error.isBadLine { badLinesInARow += 1 }
        } else {
            badLinesInARow = 0
        }
        return bytes
    }
}

/// A place in the reply order; `bytes` is nil until the reply is ready.
private struct Slot {
    var bytes: [UInt8]?
    var error: ErrorCode?
}

private extension Operation {
    var isMutation: Bool {
        if case .mutation = self { return true }
        return false
    }
}
