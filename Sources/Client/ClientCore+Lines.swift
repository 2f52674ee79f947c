import Foundation
import JSON
import Protocol
import POSIXSupport

// The reader thread's routing of what the server sends: replies to their waiters (and late
// replies to nobody's), pushes to the mirror, and the synchronous requests of a handshake.
// Reader thread only.
extension ClientCore {
    func reportLine(_ line: String, _ outgoing: Bool) {
        state.withLock { $0.lineObserver }?(line, outgoing)
    }

    /// Sends one request on `connection` and reads until its reply, handling pushes on the way.
    func syncRequest(_ connection: BlockingLineSocket, _ request: [String: JSONValue]) throws -> JSONValue {
        let id = takeID()
        var fields = request
        fields["id"] = .int(id)
        let line = JSONValue.object(fields).serialized()
        reportLine(line, true)
        try connection.sendLine(line)
        while true {
            // A reply may take a while (rebuilding an old view for `subscribe since`): the request timeout, not the connect one.
            guard let bytes = try connection.readLine(timeoutMilliseconds: Int(options.requestTimeout * 1000)) else {
                throw ClientError.protocolViolation(Self.closedByServer)
            }
            if let reply = try handleLine(bytes, awaiting: id) { return reply }
        }
    }

    /// Routes one received line: pushes to the mirror, replies to their waiters. Returns the line
    /// when it is the reply to `awaiting`.
    @discardableResult
    func handleLine(_ bytes: [UInt8], awaiting: Int?) throws -> JSONValue? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard !bytes.isEmpty else {
            reportLine(text, false)
            return nil
        }
        let message: JSONValue
        do {
            message = try JSONParser.parse(bytes)
        } catch {
            reportLine(text, false)
            throw error
        }
        // The answers to the client's own requests (keep-alive pings, a resubscribe after a gap,
        // signing in again after a reconnect) would read as replies to requests nobody made
        // (`bq play --json` prints what arrives).
        if !isReplyToInternalRequest(message), awaiting == nil || message["id"]?.intValue != awaiting {
            reportLine(text, false)
        }
        if message["push"] != nil {
            try handlePush(message)
            return nil
        }
        let id: Int
        if let number = message["id"]?.intValue {
            id = number
        } else if message["ok"]?.boolValue == false {
            // A line the server could not read (too long, say) is refused with `"id": null`, in
            // its place among the replies: it answers the oldest request still unanswered here.
            if awaiting != nil { return message }
            guard let oldest = oldestUnanswered() else { return nil }
            id = oldest
        } else {
            return nil
        }
        if id == awaiting { return message }
        let resolved = resolve(id: id, message)
        if resolved.refusedResubscribe {
            // The resubscribe that cures a gap was refused: ask again, or the mirror would stay
            // frozen; not at once, since a refusal for speed (`rate_limited`) would only repeat.
            // Unless a reconnect, or the caller's `unsubscribe`, has ended the resync meanwhile.
            sendForReader("subscribe", after: 0.25, unless: { !$0.resyncing || !$0.subscribed })
        }
        if let late = resolved.late { emit([late]) }
        return nil
    }

    private func isReplyToInternalRequest(_ message: JSONValue) -> Bool {
        guard message["push"] == nil, let id = message["id"]?.intValue else { return false }
        return state.withLock { $0.pending[id].map { !$0.awaited } ?? false }
    }

    private func oldestUnanswered() -> Int? {
        state.withLock { state in
            let generation = state.generation
            return state.pending.values.lazy.filter { $0.outcome == nil && $0.sentGeneration == generation }.map(\.id).min()
        }
    }

    /// `refusedResubscribe` when the refused request was the reader's own resubscribe after a
    /// gap; `late` when the answer is to a mutation nobody waits for any more.
    @discardableResult
    func resolve(id: Int, _ message: JSONValue) -> (refusedResubscribe: Bool, late: ClientEvent?) {
        state.changing { state in
            guard let entry = state.pending[id], entry.outcome == nil else { return (false, nil) }
            if entry.sentGeneration == state.generation, entry.sentAt > 0 {
                state.noteRoundTrip(bootTimeNanoseconds() &- entry.sentAt)
            }
            if message["ok"]?.boolValue == true {
                let result = message["result"] ?? .object([:])
                entry.settle(.success(Reply(op: entry.op, version: message["version"]?.versionNumber, result: result,
                                            replayed: message["replayed"]?.boolValue ?? false)))
                switch entry.op {
                case "claim": if let token = result["token"]?.stringValue { state.savedCredentials = .token(token) }
                case "auth": if let token = entry.args["token"]?.stringValue { state.savedCredentials = .token(token) }
                case "admin":
                    if let key = entry.args["key"]?.stringValue {
                        state.savedCredentials = .adminKey(key, game: entry.args["game"]?.stringValue)
                    }
                case "subscribe": state.subscribed = true
                case "unsubscribe":
                    state.subscribed = false
                    state.resyncing = false
                default: break
                }
            } else {
                let error = message["error"]
                entry.settle(.failure(.refused(ServerRefusal(
                    op: entry.op, code: error?["code"]?.stringValue ?? "internal",
                    message: error?["message"]?.stringValue ?? "refused", field: error?["field"]?.stringValue))))
            }
            // Nobody will come for it: the reader's own request, or one whose caller gave up.
            if !entry.awaited || entry.abandoned { state.pending[id] = nil }
            let late = entry.abandoned && entry.isMutation ? entry.outcome.map { ClientEvent.lateReply(op: entry.op, args: entry.args, $0) } : nil
            return (entry.op == "subscribe" && !entry.awaited && state.resyncing && message["ok"]?.boolValue != true, late)
        }
    }

    func handlePush(_ message: JSONValue) throws {
        let (events, resubscribe) = state.changing { state -> ([ClientEvent], TimeInterval?) in
            var events: [ClientEvent] = []
            var resubscribe: TimeInterval?
            state.lastPushAt = bootTimeNanoseconds()
            switch message["push"]?.stringValue {
            case "hello":
                state.idleTimeout = message["idle_timeout"]?.intValue.flatMap { $0 > 0 ? TimeInterval($0) : nil }
                state.defaultGame = message["game"]?.stringValue
                events.append(.hello(server: message["server"]?.stringValue ?? "",
                                     game: message["game"]?.stringValue ?? "",
                                     version: message["version"]?.versionNumber ?? 0))
            case "snapshot":
                if let version = message["version"]?.versionNumber, let view = message["state"] {
                    state.mirror = view
                    state.mirrorVersion = version
                    state.resyncing = false
                    state.viewsSinceCaughtUp = true
                    events.append(.snapshot(version: version, view: view))
                }
            case "patch":
                let from = message["from"]?.versionNumber ?? -1
                let to = message["to"]?.versionNumber ?? -1
                if state.resyncing {
                    break
                }
                // A patch never takes a view back (a resume's may stay at its version).
                if let old = state.mirror, from == state.mirrorVersion, to >= from,
                   let ops = try? (message["ops"]?.arrayValue ?? []).map({ json throws(JSONPatchError) in try PatchOp(json: json) }),
                   let view = try? JSONPatch.apply(ops, to: old) {
                    state.mirror = view
                    state.mirrorVersion = to
                    state.viewsSinceCaughtUp = true
                    state.patchesSinceGap += 1
                    if state.patchesSinceGap >= ClientState.patchesThatEndAGapStreak { state.gapsInARow = 0 }
                    events.append(.patch(from: from, to: to, ops: ops, old: old, view: view))
                } else {
                    events.append(.gap(mirror: state.mirrorVersion, from: from))
                    state.resyncing = true
                    state.gapsInARow += 1
                    state.patchesSinceGap = 0
                    resubscribe = Self.resubscribeDelay(gapsInARow: state.gapsInARow)
                }
            case "bye":
                let reason = message["reason"]?.stringValue ?? ""
                // The server closes this connection next: requests from here on wait for the next
                // one, and a screen shown meanwhile says it is the game as last seen. The time
                // offline counts from here (a person's change gives up on it: `wait(for:)`).
                state.ready = false
                state.lostAt = state.lostAt ?? monotonicNanoseconds()
                events.append(.bye(reason: reason))
                if reason == "unclaimed" {
                    state.savedCredentials = nil
                    state.subscribed = false
                    events.append(.sessionLost(reason: "the character was unclaimed or taken over"))
                }
            default:
                break
            }
            return (events, resubscribe)
        }
        // A snapshot is the only cure for a gap: the mirror cannot be trusted for `since`.
        if let resubscribe { sendForReader("subscribe", after: resubscribe, unless: { !$0.resyncing || !$0.subscribed }) }
        emit(events)
    }

    /// At once after a first gap; after gaps in a row (snapshots whose next patches did not fit
    /// either), a quarter of a second, doubling up to 30 s.
    static func resubscribeDelay(gapsInARow: Int) -> TimeInterval {
        gapsInARow <= 1 ? 0 : min(30, 0.25 * Double(1 << min(gapsInARow - 2, 8)))
    }

    func emit(_ events: [ClientEvent]) {
        guard !events.isEmpty else { return }
        guard let observe = state.withLock({ $0.observer }) else { return }
        for event in events { observe(event) }
    }
}
