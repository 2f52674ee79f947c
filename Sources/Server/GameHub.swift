import Domain
import EventLog
import JSON
import Logging
import Protocol
import Views

/// One game on the loop thread: its durable state, the speculative state that
/// pending commands were decided against, idempotency records, subscribers and
/// the per-viewer view cache (`ViewCache`). Confined to the loop thread: no locks.
final class GameHub {
    let name: String
    /// The game as of the last commit this loop has published: on disk, and what every read,
    /// view and reply is answered from. The writer may already have committed more, whose
    /// answers wait in the inbox for the next turn.
    private(set) var durable: GameState
    /// `durable` plus every command decided but not yet on disk: what the next command is
    /// decided against.
    private(set) var speculative: GameState
    private var pending = FIFO<PendingCommand>()
    private var idempotency: IdempotencyMemory<PendingCommand>
    private var subscribers: [ObjectIdentifier: ClientConnection] = [:]
    /// Signed-in connections, so a revoked token can find every one of them.
    private var members: [ObjectIdentifier: ClientConnection] = [:]
    private var views = ViewCache()
    /// Wrong PINs of this game's characters.
    var pinGuard = GuessGuard()
    /// Resumes from a past version, per viewer: each rebuilds that version's view from the log,
    /// so one person's connections share one budget however many they open.
    private var resumeBudgets: [Viewer: TokenBucket] = [:]
    /// Per player (character id): the mutations they may still have decided this second.
    private var changeBudgets: [String: TokenBucket] = [:]
    /// Resumes that found their viewer's budget spent, in arrival order (`GameHub+Resumes`).
    var deferredResumes: [PendingResume] = []
    /// Resumes whose past view is being rebuilt, by connection: one at most each, since a
    /// connection's reads wait for its earlier replies.
    var rebuilding: [ObjectIdentifier: PendingResume] = [:]
    private var nextSeq: UInt64 = 0
    /// Sent with every append; a failed commit moves it on. The writer refuses what was decided
    /// before the failure was known here (`AppendRequest.epoch`), so that what `failAll`
    /// answers as not committed cannot commit behind the failure.
    private var epoch: UInt64 = 0
    private var lastSnapshotVersion: Int
    /// Snapshots start-up found to disagree with the events (`GameLoader.checked`): resumes
    /// rebuild past them.
    let distrustedSnapshots: Set<Int>
    unowned let server: GameServer
    /// Commits whose patches and replies go out at the end of this loop turn.
    private var committedThisTurn: [PendingCommand] = []
    /// The durable version when this turn's first commit arrived, and what its commits touched.
    private var versionBeforeTurn = 0
    private var touchedThisTurn = Touched()

    init(name: String, state: GameState, idempotency records: [IdempotencyRecord], lastSnapshotVersion: Int,
         distrustedSnapshots: Set<Int> = [], server: GameServer) {
        self.name = name
        self.distrustedSnapshots = distrustedSnapshots
        self.durable = state
        self.speculative = state
        self.lastSnapshotVersion = lastSnapshotVersion
        self.server = server
        idempotency = IdempotencyMemory(unchangedLimit: server.config.idempotencyWindow)
        for record in records {
            idempotency.remember(KeyDigest(owner: record.identity, key: record.key), Fingerprint(record.fingerprint),
                                 version: Int(record.version), changedNothing: record.changedNothing)
        }
    }

    var hasPending: Bool { !pending.isEmpty }

    // MARK: Membership

    func join(_ connection: ClientConnection) { members[ObjectIdentifier(connection)] = connection }

    /// Connections signed in as `character` right now.
    func connectionCount(of character: String) -> Int {
        members.values.reduce(0) { count, connection in
            if case .character(character, _)? = connection.identity { return count + 1 }
            return count
        }
    }

    func leave(_ connection: ClientConnection) {
        members[ObjectIdentifier(connection)] = nil
        subscribers[ObjectIdentifier(connection)] = nil
        if !deferredResumes.isEmpty { deferredResumes.removeAll { $0.connection === connection } }
        rebuilding[ObjectIdentifier(connection)] = nil
    }

    /// For a `subscribe` from a past version: false when this viewer resumed too often.
    func takeResumeToken(for viewer: Viewer) -> Bool {
        Self.take(from: &resumeBudgets, viewer, perSecond: server.config.limits.resumesPerSecond, now: server.loop.nowMilliseconds)
    }

    /// A token from `character`'s change budget; none left is said in the log (throttled).
    private func takeChangeToken(for character: String) -> Bool {
        // The server's steady clock, which a test can hold still, as the PIN and admin-key guards do.
        guard Self.take(from: &changeBudgets, character, perSecond: server.config.limits.changesPerSecond, now: server.steadyNow) else {
            server.noteChangeOverBudget(by: character, game: name)
            return false
        }
        return true
    }

    /// A token from `key`'s bucket, which starts full on its first use.
    private static func take<Key: Hashable>(from budgets: inout [Key: TokenBucket], _ key: Key, perSecond: Int, now: UInt64) -> Bool {
        budgets[key, default: TokenBucket(perSecond: perSecond, now: now)].take(now: now)
    }

    func unsubscribe(_ connection: ClientConnection) { subscribers[ObjectIdentifier(connection)] = nil }

    // MARK: Reads

    /// The durable view for a viewer, cached per version: many connections share one projection.
    func currentView(for viewer: Viewer) -> JSONValue { views.view(of: durable, for: viewer) }

    /// The `ViewDigest` of the viewer's current view.
    func currentDigest(for viewer: Viewer) -> String { views.digest(of: durable, for: viewer) }

    /// Subscribes and returns the push that starts the connection's view: one patch from
    /// `since` when that is now or `past` is the view then (`GameHub+Resumes`), else a snapshot.
    func subscribe(_ connection: ClientConnection, viewer: Viewer, since: Int?, past: JSONValue?) -> (mode: String, push: [UInt8]) {
        subscribers[ObjectIdentifier(connection)] = connection
        // Also caches the view, which the next commit's patch for this viewer starts from.
        let current = currentView(for: viewer)
        let version = durable.version
        // Back at the version it left (the usual reconnect): nothing to rebuild or compare.
        if since == version, version >= 1 { return ("patch", Wire.patch(from: version, to: version, ops: [])) }
        if let since, let past { return ("patch", Wire.patch(from: since, to: version, ops: JSONPatch.diff(past, current))) }
        return ("snapshot", snapshot(for: viewer))
    }

    /// The viewer's current view as JSON text.
    func encodedView(for viewer: Viewer) -> [UInt8] { views.encodedView(of: durable, for: viewer) }

    /// The viewer's current view as a `snapshot` push (a new subscriber, or one that fell behind).
    func snapshot(for viewer: Viewer) -> [UInt8] {
        Wire.snapshot(version: durable.version, encodedState: encodedView(for: viewer))
    }

    // MARK: Mutations

    /// Decides a command against the speculative state and hands its events to the
    /// writer. The reply goes out only once the events are durable.
    func submit(_ command: Command, request: Request, identity: Identity?, target: ReplyTarget,
                onCommitted: ((GameState) -> Void)? = nil, onRefused: ((ErrorCode) -> Void)? = nil,
                result makeResult: ((GameState) -> JSONValue)? = nil) {
        // A takeover or an unclaim decided ahead of this command ends the token here, not only
        // once it is on disk: commands are decided in order, and the old token stops working at
        // that point in the order. (Its connections get `bye` when the change commits.) A claim
        // has no identity of its own but comes from the connection's, when signed in to this
        // game: one whose token has ended would be claimed for a device that gets `bye` before
        // the answer. (A sign-in to another game says nothing of this one's tokens.)
        let signedIn = identity ?? (target.connection.hub === self ? target.connection.identity : nil)
        if case .character(let id, let tokenHash)? = signedIn,
           speculative.characters[id]?.tokenHashes.contains(tokenHash) != true {
            return refuse(request, ProtocolError(.unauthenticated, Self.revokedTokenMessage), target: target)
        }
        let key = request.idem.flatMap { key in identity.map { IdempotencyKey(owner: $0.idempotencyOwner, key: key) } }
        // Stored and compared as a digest: short rows in the log, small entries in memory.
        let fingerprint = key == nil ? nil : Fingerprint(digestOf: request.canonicalBytes)
        if let key, answeredFromMemory(key, fingerprint: fingerprint, command, request: request, identity: identity, target: target) {
            return
        }
        if let (error, version) = admissionRefusal(request, identity: identity) {
            return target.error(request.id, error, version: version)
        }
        let context = CommandContext(actor: identity?.actor ?? .system, at: server.clock(), claimsNeedPIN: server.config.claimsNeedPIN)
        let events: [Event]
        switch decide(speculative, command, context) {
        case .failure(let rejection):
            let error = ProtocolError(rejection)
            onRefused?(error.code)
            return refuse(request, error, target: target)
        case .success(let decided): events = decided
        }
        // The organizer's unclaim is the way to open a character that wrong PINs keep closed,
        // whether anyone holds it or not (a free one may need its PIN: `claims_need_pin`).
        if case .unclaim(let character) = command { pinGuard.rightGuess(character) }
        // A claim is an event kept for good, and needs no sign-in: the device that holds a
        // character could otherwise grow the log without end by claiming it again and again.
        // It draws on that character's change budget (refused claims, which write nothing, do not).
        if case .claim(let character, _, _, _) = command, !events.isEmpty, !takeChangeToken(for: character) {
            let limit = server.config.limits.changesPerSecond
            return target.error(request.id, ProtocolError(.rateLimited,
                "More than \(limit) claim\(limit == 1 ? "" : "s") of \(character) a second; nothing was changed, try again in a moment"))
        }
        let expected = speculative.version
        // In place: the speculative state is this hub's own, so nothing the events leave alone is copied.
        for event in events { speculative.apply(event) }
        let result = makeResult?(speculative) ?? mutationResult(command, actor: context.actor, events: events, after: speculative)
        nextSeq += 1
        let entry = PendingCommand(seq: nextSeq, request: request, events: events, versionAfter: speculative.version,
                                   result: result, target: target, key: key, fingerprint: fingerprint, onCommitted: onCommitted)
        queue(entry, expected: expected)
    }

    /// Whether a keyed request was answered from what the hub remembers: its first answer
    /// replayed, a wait for its first copy still on its way to disk, or a mismatch.
    private func answeredFromMemory(_ key: IdempotencyKey, fingerprint: Fingerprint?, _ command: Command, request: Request,
                                    identity: Identity?, target: ReplyTarget) -> Bool {
        guard let entry = idempotency.lookup(key.digest) else { return false }
        switch entry {
        case .done(let remembered, let version):
            guard remembered == fingerprint else { target.error(request.id, mismatch(request)); return true }
            answerRetry(request, key: key, version: version, target: target)
        case .pending(let first):
            guard first.fingerprint == fingerprint else { target.error(request.id, mismatch(request)); return true }
            // The first copy is on its way to disk: answer this one with its reply.
            first.waiters.append(Waiter(command: command, request: request, identity: identity, target: target))
        }
        return true
    }

    /// Why a new change is turned away before it is decided (a stale `expect`, a player over
    /// their budget), with the version to name; nil when it may be decided, having taken one of
    /// the player's change tokens. A stale `expect` is checked first and costs no token: a
    /// client that reads the state and tries again must not run out of budget for doing so.
    private func admissionRefusal(_ request: Request, identity: Identity?) -> (ProtocolError, version: Int?)? {
        // Answered at once, unlike the domain's refusals: it says nothing about the game but
        // that it moved, and a client that then reads the state and tries again loses nothing
        // if the version it was told is taken back by a failed commit.
        if let expect = request.expect, expect != speculative.version {
            return (ProtocolError(.versionConflict, "Expected version \(expect), but the game is at version \(speculative.version)"),
                    speculative.version)
        }
        if case .character(let id, _)? = identity, speculative.characters[id]?.role != .organizer, !takeChangeToken(for: id) {
            let limit = server.config.limits.changesPerSecond
            return (ProtocolError(.rateLimited,
                "More than \(limit) change\(limit == 1 ? "" : "s") a second from this player; nothing was changed, try again in a moment"), nil)
        }
        return nil
    }

    /// Queues a decided command behind the ones before it, and hands its events to the writer.
    private func queue(_ entry: PendingCommand, expected: Int) {
        let key = entry.key
        if !entry.goesToLog {
            // Nothing to write; the answer reflects the speculative state, so it still
            // waits behind the commands before it.
            if pending.isEmpty { return finish(entry, version: entry.versionAfter) }
            pending.append(entry)
            return
        }
        if let key { idempotency.markPending(key.digest, entry) }
        write(entry, expected: expected, key: key)
        pending.append(entry)
    }

    /// A refusal decided on the speculative state is a statement about it: with commands still
    /// on their way to disk it waits for them, as an answer that writes nothing does, so that a
    /// refusal never reports a state that a failed commit then takes back (`already_completed`
    /// to a second tap while the first one fails, say).
    private func refuse(_ request: Request, _ error: ProtocolError, target: ReplyTarget) {
        guard !pending.isEmpty else { return target.error(request.id, error) }
        nextSeq += 1
        pending.append(PendingCommand(seq: nextSeq, request: request, events: [], versionAfter: speculative.version, result: .null,
                                      target: target, key: nil, fingerprint: nil, onCommitted: nil, refusal: error))
    }

    /// Hands a decided command to the writer; `speculative` already includes its events.
    private func write(_ entry: PendingCommand, expected: Int, key: IdempotencyKey?) {
        let newEvents = entry.events.map { Codec.newEvent($0, idempotencyKey: key?.key) }
        var records: [IdempotencyRecord] = []
        if let key {
            // Encoded once: the log keeps this text and the replies reuse its bytes.
            var encoded: [UInt8] = []
            encoded.reserveCapacity(128)
            entry.result.write(to: &encoded, sortedKeys: true)
            entry.encodedResult = encoded
            records.append(IdempotencyRecord(identity: key.owner, key: key.key, fingerprint: entry.fingerprint?.hex ?? "",
                                             reply: String(decoding: encoded, as: UTF8.self),
                                             version: Int64(expected + entry.events.count), changedNothing: entry.events.isEmpty))
        }
        let request = AppendRequest(game: name, expected: Int64(expected), events: newEvents, idempotency: records,
                                    snapshot: snapshotIfDue(), epoch: epoch)
        server.queueForWriter(request, game: name, seq: entry.seq)
    }

    /// The speculative state, every `snapshot_every` events. A snapshot only shortens start-ups
    /// and resumes, so a change never waits on it: one that cannot be encoded is logged and left
    /// out, and the next is tried `snapshot_every` events later.
    private func snapshotIfDue() -> Snapshot? {
        guard speculative.version - lastSnapshotVersion >= server.config.snapshotEvery else { return nil }
        lastSnapshotVersion = speculative.version
        do {
            return try Codec.snapshot(speculative)
        } catch {
            server.logger.error("cannot encode a snapshot", metadata: ["game": "\(name)", "version": "\(speculative.version)",
                                                                      "error": "\(error)"])
            return nil
        }
    }

    /// A retry of a committed command gets its first answer, read back from the log: memory
    /// keeps only each key's digest and version, which is what bounds it per remembered key.
    ///
    /// When that answer cannot be had, the refusal says the change was made: a person told only
    /// that "nothing was committed" would make it again, under a new key, and twice.
    private func answerRetry(_ request: Request, key: IdempotencyKey, version: Int, target: ReplyTarget) {
        let reply: String
        switch server.storedReply(game: name, key: key, version: version) {
        case .found(let text): reply = text
        case .unreadableNow:
            return target.error(request.id, ProtocolError(.unavailable,
                "This change was already made, at version \(version), but its first answer cannot be read back right now: "
                + "do not make it again; send this same request (same idem key) later for its answer"))
        case .missing: return target.error(request.id, unreadableAnswer(version: version))
        }
        // The stored text is the first answer's own bytes: sent as they are, so a retry sees the
        // very same result, once they are known to be JSON.
        let bytes = Array(reply.utf8)
        guard (try? JSONParser.parse(bytes)) != nil else {
            // Only a log edited by hand gets here: say so rather than invent an answer.
            server.logger.critical("a stored reply is not JSON", metadata: ["game": "\(name)", "version": "\(version)"])
            return target.error(request.id, unreadableAnswer(version: version))
        }
        // The reply names a version this connection's view may not have reached (the first
        // answer went to another device of the same player while this one's patches were held):
        // its view comes first, as for any answer (`publish`).
        let connection = target.connection
        if connection.hub === self, connection.isHoldingPatches { connection.endHoldingPatches() }
        target.ok(request.id, version: version, encodedResult: bytes, replayed: true)
    }

    private func unreadableAnswer(version: Int) -> ProtocolError {
        ProtocolError(.internal, "The first answer to this request is missing or unreadable in the log; it was applied once, at version \(version)")
    }

    private var undecided: ProtocolError {
        ProtocolError(.unavailable, "Storage failed before this could be decided; nothing was committed, try again")
    }

    private func mismatch(_ request: Request) -> ProtocolError {
        ProtocolError(.idempotencyMismatch, "Idempotency key \"\(request.idem ?? "")\" was already used for a different request")
    }

    /// The writer's answer for one command, on the loop thread.
    func completed(seq: UInt64, result: AppendResult) {
        guard let head = pending.elements.first(where: \.goesToLog), head.seq == seq else {
            // A command dropped after an earlier failure: it was decided before that failure
            // was known here, so the writer must have refused it (its epoch is fenced off).
            if case .committed = result {
                server.logger.critical("a dropped command committed", metadata: ["game": "\(name)", "seq": "\(seq)"])
            }
            return
        }
        switch result {
        case .committed(let version):
            if committedThisTurn.isEmpty {
                versionBeforeTurn = durable.version
                touchedThisTurn = Touched()
            }
            // Added in place: a `Touched` per command would allocate its sets only to merge them.
            for event in head.events { touchedThisTurn.add(event.change) }
            // Barriers ahead of it reflected states that are now durable.
            while let front = pending.popFirst(), front.seq != seq { committedThisTurn.append(front) }
            for event in head.events { durable.apply(event) }
            if durable.version != Int(version) {
                // A bug, not a state of the world: the log's compare-and-set passed on a version
                // this copy was not at. Said in release builds too. The command did commit, so it
                // is answered; the next one decided on this copy meets `.conflict` and is refused
                // with the same advice.
                server.logger.critical("the server's copy of the game is not at the version its log reached; restart the server to reload it",
                                       metadata: ["game": "\(name)", "copy": "\(durable.version)", "log": "\(version)"])
                assertionFailure("durable version \(durable.version) != log version \(version)")
            }
            committedThisTurn.append(head)
        case .conflict(let expected, let actual):
            // The log and this server's copy of the game disagree: a writer outside the server
            // (the data directory's lock keeps other servers out), or a commit reported as failed
            // that landed after all. Either way the copy is stale until a restart reloads it,
            // and every command decided on it will be refused the same way.
            server.logger.critical("the log and the server's copy of the game disagree; restart the server to reload it",
                                   metadata: ["game": "\(name)", "expected": "\(expected)", "actual": "\(actual)"])
            failAll(ProtocolError(.unavailable, "The game's log and the server's copy of it disagree; nothing was committed. "
                + "The organizer must restart the server"))
        case .failed(let error):
            server.commitFailed(game: name, error: error, outcomeUnknown: false)
            // A retry helps after a full disk; after the log's files moved, only a restart does.
            let advice = error.meansFilesMoved ? "the server takes no more changes until the organizer restarts it" : "try again"
            failAll(ProtocolError(.unavailable, "Storage failed; nothing was committed, \(advice)"), undecided: undecided)
        case .uncertain(let error):
            // Not `unavailable`: that code promises nothing was committed, and after a crash
            // this may turn out to have been.
            server.commitFailed(game: name, error: error, outcomeUnknown: true)
            failAll(ProtocolError(.internal, "The disk failed while saving this, and it may or may not have been saved. "
                + "A retry with the same idem key applies it at most once; without one, check the game first"), undecided: undecided)
        }
    }

    /// A failed commit takes every command decided on top of it along: their
    /// states never became durable. Reads keep working from the durable state.
    /// `undecided` answers the commands that wrote nothing but were answered on top of the
    /// failed ones (nil: `error` does, as when the log and this copy of it disagree).
    private func failAll(_ error: ProtocolError, undecided: ProtocolError? = nil) {
        let failed = pending.removeAll()
        epoch += 1
        speculative = durable
        lastSnapshotVersion = min(lastSnapshotVersion, durable.version)
        var retry: [Waiter] = []
        for entry in failed {
            if let key = entry.key {
                idempotency.clearPending(key.digest)
                retry += entry.waiters
            }
            // An answer that wrote nothing was never decided on a state that lasted; whatever
            // became of the commits ahead of it, it committed nothing itself.
            entry.target.error(entry.request.id, entry.goesToLog ? error : undecided ?? error)
        }
        // Copies of a failed keyed request were never answered: they get their own try.
        for waiter in retry {
            submit(waiter.command, request: waiter.request, identity: waiter.identity, target: waiter.target)
        }
    }

    /// Sends what this turn's commits produced. The connections that made them get
    /// their patch and reply first, written at once; the fan-out to everyone else
    /// follows, so an actor's ack never waits behind a thousand other sockets.
    func publish() {
        guard !committedThisTurn.isEmpty else { return }
        let done = committedThisTurn
        committedThisTurn = []
        // Keyed commands that changed nothing commit only their idempotency record: no new
        // version, so no patch ("every commit" means every change of version).
        let patches = durable.version == versionBeforeTurn ? [:]
            : views.patches(for: subscribers.values.lazy.compactMap(\.viewer), to: durable, from: versionBeforeTurn,
                            touched: touchedThisTurn)

        // Commands with nothing to write that waited behind these commits (barriers) are
        // answered with them: their replies name the new version, so their connections are
        // actors too and get the patch to it before the reply.
        var barriers: [PendingCommand] = []
        while let head = pending.first, !head.goesToLog, let barrier = pending.popFirst() { barriers.append(barrier) }
        let answered = done + barriers
        var actors: [ObjectIdentifier: ClientConnection] = [:]
        for entry in answered {
            actors[ObjectIdentifier(entry.target.connection)] = entry.target.connection
            for waiter in entry.waiters { actors[ObjectIdentifier(waiter.target.connection)] = waiter.target.connection }
        }
        // Only to those attached to this game: a claim for this game from a connection of
        // another (refused, or before its sign-in) is answered here, but its view is that game's.
        // A device cut off by these commits (a takeover, an unclaim) sees none of them: it gets
        // its replies, then `bye`, below.
        let revokes = done.contains { $0.events.contains(where: \.mayRevokeTokens) }
        for connection in actors.values where connection.hub === self && !(revokes && holdsRevokedToken(connection)) {
            if connection.isHoldingPatches { connection.endHoldingPatches() } else { deliver(patches, to: connection, aheadOfItsReply: true) }
        }
        for entry in done {
            entry.onCommitted?(durable)
            finish(entry, version: entry.versionAfter)
        }
        for barrier in barriers { finish(barrier, version: barrier.versionAfter) }
        for connection in actors.values { connection.flush() }
        for (id, connection) in subscribers where actors[id] == nil && !(revokes && holdsRevokedToken(connection)) {
            deliver(patches, to: connection)
        }

        if revokes { revokeStaleTokens() }
        // Keys older than the window are forgotten so memory does not grow with the log.
        idempotency.forget(through: durable.version - server.config.idempotencyWindow)
    }

    private func finish(_ entry: PendingCommand, version: Int) {
        guard !entry.answeredAhead else { return }
        if let refusal = entry.refusal { return entry.target.error(entry.request.id, refusal) }
        func answer(_ target: ReplyTarget, _ id: RequestID, replayed: Bool) {
            if let encoded = entry.encodedResult {
                target.ok(id, version: version, encodedResult: encoded, replayed: replayed)
            } else {
                target.ok(id, version: version, result: entry.result, replayed: replayed)
            }
        }
        answer(entry.target, entry.request.id, replayed: false)
        guard let key = entry.key, let fingerprint = entry.fingerprint else { return }
        idempotency.remember(key.digest, fingerprint, version: version, changedNothing: entry.events.isEmpty)
        for waiter in entry.waiters { answer(waiter.target, waiter.request.id, replayed: true) }
    }

    private func deliver(_ patches: [Viewer: ViewerPatch], to connection: ClientConnection, aheadOfItsReply: Bool = false) {
        guard let viewer = connection.viewer, let patch = patches[viewer], !connection.isHoldingPatches else { return }
        if connection.sentVersion == patch.from {
            connection.push(patch.bytes, version: patch.to, aheadOfItsReply: aheadOfItsReply)
        } else {
            // Not on the cached view (it cannot happen by design): heal with a snapshot rather than a gap.
            connection.push(Wire.snapshot(version: patch.to, state: patch.view), version: patch.to, aheadOfItsReply: aheadOfItsReply)
        }
    }

    private func revokeStaleTokens() {
        for connection in members.values where holdsRevokedToken(connection) {
            // Its changes still waiting behind other players' commits were decided after the
            // revocation (everything decided before it is answered by now, in order): refused
            // for the token, a refusal that the revocation, now durable, makes final. They are
            // answered before the `bye` rather than left without a reply, and not again when
            // their turn comes. Any other refusal waits for
            // the commits it was decided on, as ever. Lines behind them do not start: they would
            // be answered after the `bye`, or not at all.
            connection.stopStartingLines()
            for entry in pending.elements
            where entry.refusal?.code == .unauthenticated && entry.target.connection === connection {
                finish(entry, version: entry.versionAfter)
                entry.answeredAhead = true
            }
            connection.sayGoodbye(.unclaimed)
        }
    }

    static let revokedTokenMessage = "This session's token no longer works: the character was taken over or unclaimed, "
        + "or this device claimed it again past its 1,000 tokens and this one was the oldest"

    /// Signed in with a token the game no longer knows.
    func holdsRevokedToken(_ connection: ClientConnection) -> Bool {
        guard case .character(let id, let tokenHash)? = connection.identity else { return false }
        return durable.characters[id]?.tokenHashes.contains(tokenHash) != true
    }
}

private extension Event {
    /// Whether the event ends tokens: an unclaim, a takeover, or a claim past the tokens its
    /// device may hold (which ends the oldest).
    var mayRevokeTokens: Bool {
        switch change {
        case .characterUnclaimed: return true
        case .characterClaimed(_, _, _, let takeover, let endsToken): return takeover || endsToken != nil
        default: return false
        }
    }
}
