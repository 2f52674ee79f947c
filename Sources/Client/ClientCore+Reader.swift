import Foundation
import JSON
import Protocol
import POSIXSupport

// The reader thread's side of `ClientCore`: connecting, reconnecting with backoff, the
// liveness probe and the handshake after a reconnect (what it reads goes through
// `ClientCore+Lines`). Everything here runs on the reader thread, except `start`, which runs
// on the caller of `connect` before the reader exists.
extension ClientCore {
    // MARK: Connection lifecycle (reader thread, or the caller of `connect` before it starts)

    func start() throws(ClientError) {
        // A connection taken and then dropped or left silent (a network that blinked, a server
        // busy for a moment) is tried again, with the reconnects' backoff, for as long as a reply
        // may take. Nothing listening is said at once: no server is there to wait for.
        // On the monotonic clock, as every wait of the client: a wall clock set back would
        // otherwise keep it trying for as long as the clock went back.
        let deadline = monotonicDeadline(after: options.requestTimeout)
        var backoff = Backoff(options)
        var attempt = 0
        while true {
            // Never past the deadline by much: a slow try is the last one.
            let left = Int((Int64(bitPattern: deadline) - Int64(bitPattern: monotonicNanoseconds())) / 1_000_000)
            let wait = min(options.connectWait(attempt: attempt), max(100, left))
            attempt += 1
            let began = monotonicNanoseconds()
            let first: BlockingLineSocket
            do {
                first = try BlockingLineSocket(host: host, port: port, connectTimeoutMilliseconds: wait)
            } catch {
                markNeverStarted()
                throw .connectFailed(error.description)
            }
            do {
                try handshake(first, helloWait: wait, connectingSince: began)
                markReady(first)
                let thread = Thread { [self] in readerMain(first) }
                thread.name = "bq-client-reader"
                thread.start()
                return
            } catch {
                first.close()
                if case ClientError.serverFull(let message) = error {
                    markNeverStarted()
                    throw .serverFull(message)
                }
                // Something else holds the port (a web or ssh server): asking again will not help.
                if let other = error as? NotABQServer {
                    markNeverStarted()
                    throw .noSession("\(host):\(port) answered, but not as a bq server (its first line: \"\(other.firstLine)\"): "
                        + "is that the right port?")
                }
                let pause = backoff.next()
                if monotonicDeadline(after: pause) < deadline {
                    Thread.sleep(forTimeInterval: pause)
                    continue
                }
                markNeverStarted()
                throw Self.connectionTakenButLost(error, host: host, port: port)
            }
        }
    }

    /// Why a connection the server took never became a session, in words for the person.
    private static func connectionTakenButLost(_ error: any Error, host: String, port: Int) -> ClientError {
        // Connected, then silence: something holds the port but does not answer.
        if let silence = error as? SocketError, silence.kind == .timedOut {
            return .noSession("\(host):\(port) took the connection but did not answer in time "
                + "(a server that is stopped or overloaded, a very slow network, or not a bq server)")
        }
        if case ClientError.protocolViolation(Self.closedByServer) = error {
            return .noSession("\(host):\(port) took the connection and closed it before saying hello, again and again "
                + "(a server stopping, or a network dropping connections)")
        }
        return .noSession("\(error)")
    }

    static let closedByServer = "the server closed the connection"

    /// No reader thread will run: `close` (from `deinit`) must not wait for one to finish.
    private func markNeverStarted() {
        state.withLock { state in
            state.closing = true
            state.readerDone = true
        }
    }

    var isClosing: Bool { state.withLock { $0.closing } }

    func readerMain(_ first: BlockingLineSocket) {
        state.withLock { $0.readerThread = pthread_self() }
        var current: BlockingLineSocket? = first
        // Carried from one reconnect to the next while connections keep ending soon after they
        // begin (a server that drops every connection at the same request, say): a fresh
        // backoff each time would make that a loop of dozens of connections a second.
        var backoff = Backoff(options)
        while let connection = current {
            let began = monotonicNanoseconds()
            let reason = readLoop(connection)
            // What arrived before the loss is news now, not after a reconnect that may take long.
            reportCaughtUp()
            drop(connection, reason: reason)
            current = nil
            if monotonicNanoseconds() &- began >= Self.connectionThatLasted { backoff = Backoff(options) }
            if options.reconnect, !isClosing {
                current = reconnect(with: &backoff)
                if current != nil {
                    state.withLock { $0.reconnects += 1 }
                    emit([.reconnected])
                }
            }
        }
        state.changing { state in
            state.readerDone = true
            for entry in state.pending.values where entry.outcome == nil { entry.settle(.failure(.closed)) }
        }
    }

    /// A connection that lasted this long (10 s) was not lost to what ended the one before it.
    static let connectionThatLasted: UInt64 = 10_000_000_000

    func reconnect(with backoff: inout Backoff) -> BlockingLineSocket? {
        var told = Set<String>()
        var attempt = 0
        while true {
            let stop = state.wait(seconds: backoff.next()) { state, expired in state.closing ? true : expired ? false : nil }
            if stop { return nil }
            let (slowest, lost) = state.withLock { ($0.slowestHandshake, $0.lostAt ?? monotonicNanoseconds()) }
            let offline = Int(min((monotonicNanoseconds() &- lost) / 1_000_000, UInt64(Int.max)))
            let wait = options.connectWait(attempt: attempt, reconnectingAfter: slowest, offline: offline)
            attempt += 1
            let began = monotonicNanoseconds()
            if let connection = try? BlockingLineSocket(host: host, port: port, connectTimeoutMilliseconds: wait) {
                // Shown to `close`, which may come while the handshake waits on the server.
                let closed = state.withLock { state in
                    if !state.closing { state.connecting = connection }
                    return state.closing
                }
                if closed {
                    connection.close()
                    return nil
                }
                defer { state.withLock { $0.connecting = nil } }
                do {
                    try handshake(connection, helloWait: wait, connectingSince: began)
                    markReady(connection)
                    return connection
                } catch {
                    connection.close()
                    if let reason = Self.refusalForNow(error), told.insert(reason).inserted {
                        emit([.reconnectRefused(reason: reason)])
                    }
                }
            }
        }
    }

    /// Reads lines until the connection ends; returns why it ended.
    func readLoop(_ connection: BlockingLineSocket) -> String {
        var heard = bootTimeNanoseconds()
        var probedAt: UInt64?
        var checked = heard
        var goodbyeAt: UInt64?
        // The handshake may have brought views (a resubscribe's catching up).
        reportCaughtUpIfDrained(connection)
        while true {
            if isClosing { return "closed" }
            do {
                guard let bytes = try connection.readLine(timeoutMilliseconds: 250) else {
                    return Self.closedByServer
                }
                heard = bootTimeNanoseconds()
                probedAt = nil
                try handleLine(bytes, awaiting: nil)
                reportCaughtUpIfDrained(connection)
                if let lost = hungUpAfterGoodbye(now: heard, since: &goodbyeAt) { return lost }
                // Pushes may keep the socket busy for ever; the server counts only what it receives.
                keepAliveIfIdle()
                // Lines may flow for ever too (pushes), so the overdue check runs between them,
                // a few times a second rather than at every line.
                if heard &- checked >= 250_000_000 {
                    checked = heard
                    if let lost = overdueReply(now: heard) { return lost }
                }
            } catch let error as SocketError where error.kind == .timedOut {
                keepAliveIfIdle()
                if let lost = probe(heard: heard, probedAt: &probedAt) { return lost }
                checked = bootTimeNanoseconds()
                if let lost = hungUpAfterGoodbye(now: checked, since: &goodbyeAt) { return lost }
                if let lost = overdueReply(now: checked) { return lost }
                continue
            } catch {
                return "\(error)"
            }
        }
    }

    /// `.caughtUp` once no further line has arrived, if views were reported since the last one.
    private func reportCaughtUpIfDrained(_ connection: BlockingLineSocket) {
        guard !connection.hasCompleteLine else { return }
        reportCaughtUp()
    }

    /// `.caughtUp`, if views were reported since the last one.
    private func reportCaughtUp() {
        let due = state.withLock { state in
            defer { state.viewsSinceCaughtUp = false }
            return state.viewsSinceCaughtUp
        }
        if due { emit([.caughtUp]) }
    }

    /// After a `bye` the server closes the connection once its last bytes are out, and the client
    /// waits for that, sending nothing (the probe does not ping, requests wait for the next
    /// connection). A server that said goodbye and then stayed (a faulty one, or a machine that
    /// lost its network between the two) would hold the person offline for good: past
    /// `probeTimeout` the client hangs up itself and connects again.
    private func hungUpAfterGoodbye(now: UInt64, since goodbyeAt: inout UInt64?) -> String? {
        guard !state.withLock({ $0.ready }) else { return nil }
        let since = goodbyeAt ?? now
        goodbyeAt = since
        let waited = Double(now &- since) / 1e9
        return waited >= options.probeTimeout ? "the server said goodbye but did not close the connection in \(Int(waited.rounded())) s" : nil
    }

    /// A connection silent for `silenceBeforeProbe` gets a ping; one still silent
    /// `probeTimeout` after it is lost (the reason returned). Measured on the clock that counts
    /// a suspended machine's sleep (so that the first check after it probes) and never jumps
    /// (so that setting the clock neither drops a good connection nor keeps a dead one).
    private func probe(heard: UInt64, probedAt: inout UInt64?) -> String? {
        let now = bootTimeNanoseconds()
        if let probedAt {
            let waited = Double(now &- probedAt) / 1e9
            // A slow link's answer takes its round trip on top.
            let allowed = options.probeTimeout + Double(state.withLock { $0.roundTrip }) / 1e9
            return waited >= allowed ? "no answer from the server in \(Int(waited.rounded())) s" : nil
        }
        guard Double(now &- heard) / 1e9 >= options.silenceBeforeProbe, state.withLock({ $0.ready }) else { return nil }
        probedAt = now
        sendForReader("ping")
        return nil
    }

    /// The connection is lost (the reason returned) when the server's pushes keep coming but a
    /// request sent on it has gone `probeTimeout` (plus a round trip) without its reply: a link
    /// or middlebox that fails one way, where the server no longer hears this client. A push
    /// that arrives over a round trip and a second after the request was sent comes from a
    /// commit made after the request reached the server; a server that holds a reply on purpose,
    /// or waits on its disk, sends this connection no such push meanwhile (its commits wait with
    /// it), so a slow server is left to the silence probe. Replacing the connection re-sends the
    /// request, a mutation under its key.
    private func overdueReply(now: UInt64) -> String? {
        let (oldest, pushed, trip) = state.withLock { state in
            let generation = state.generation
            return (state.pending.values.lazy.filter { $0.outcome == nil && $0.sentGeneration == generation }.map(\.sentAt).min(),
                    state.lastPushAt, state.roundTrip)
        }
        guard let oldest, now > oldest, pushed > oldest &+ trip &+ 1_000_000_000 else { return nil }
        let waited = Double(now - oldest) / 1e9
        guard waited >= options.probeTimeout + Double(trip) / 1e9 else { return nil }
        return "no answer from the server in \(Int(waited.rounded())) s, while its updates keep coming"
    }

    /// A server with an idle timeout says goodbye to a connection that sends nothing for that
    /// long; a person watching the game is not idle, so past half of it the client pings.
    private func keepAliveIfIdle() {
        let due = state.withLock { state -> Bool in
            let now = bootTimeNanoseconds()
            guard state.ready, let idle = state.idleTimeout, Double(now &- state.lastSentAt) >= idle / 2 * 1e9 else { return false }
            state.lastSentAt = now  // one ping on its way is enough
            return true
        }
        if due { sendForReader("ping") }
    }

    func drop(_ connection: BlockingLineSocket, reason: String) {
        // As in `close`: a sender blocked on this connection would otherwise keep the lock.
        connection.shutdownBoth()
        writeLock.lock()
        let quiet = state.changing { state in
            state.ready = false
            state.socket = nil
            state.lostAt = state.lostAt ?? monotonicNanoseconds()  // set already by a goodbye
            state.resyncing = false
            // The reader's own requests and abandoned reads are not worth a new connection.
            state.pending = state.pending.filter { $0.value.awaited && !($0.value.abandoned && !$0.value.isMutation) }
            return state.closing
        }
        connection.close()
        writeLock.unlock()
        if !quiet { emit([.disconnected(reason: reason)]) }
    }

    /// Makes `connection` current and sends every request still waiting, in id order.
    func markReady(_ connection: BlockingLineSocket) {
        writeLock.lock()
        defer { writeLock.unlock() }
        let (resend, lines) = state.withLock { state -> ([PendingState], LineObserver?) in
            state.generation += 1
            state.socket = connection
            state.ready = true
            state.lostAt = nil
            let generation = state.generation
            let resend = state.pending.values
                .filter { $0.outcome == nil && $0.sentGeneration != generation && !($0.abandoned && !$0.isMutation) }
                .sorted { $0.id < $1.id }
            let now = bootTimeNanoseconds()
            for entry in resend {
                state.pending[entry.id]?.sentGeneration = generation
                state.pending[entry.id]?.sentAt = now
            }
            state.lastSentAt = now
            return (resend, state.lineObserver)
        }
        for entry in resend {
            lines?(entry.line, true)
            try? connection.sendLine(entry.line)
        }
    }

    /// On a new connection: the `hello`, then signing in again and resubscribing from the mirror's
    /// version, each awaited here before any queued request is re-sent.
    /// `began`: when the connect began (`monotonicNanoseconds`), to learn how long a connect
    /// and `hello` can take on this network (`slowestHandshake`).
    func handshake(_ connection: BlockingLineSocket, helloWait: Int, connectingSince began: UInt64) throws {
        guard let first = try connection.readLine(timeoutMilliseconds: helloWait) else {
            throw ClientError.protocolViolation(Self.closedByServer)
        }
        reportLine(String(decoding: first, as: UTF8.self), false)
        guard let hello = try? JSONParser.parse(first), hello["push"]?.stringValue == "hello" else {
            throw NotABQServer(first)
        }
        let took = Int((monotonicNanoseconds() &- began) / 1_000_000)
        state.withLock { $0.slowestHandshake = max($0.slowestHandshake, took) }
        try handlePush(hello)
        // A full server says hello, then that it is full, then hangs up. One ping before anything
        // else tells that apart from an answer to whatever request happens to be first.
        let pinged = bootTimeNanoseconds()
        let ping = try syncRequest(connection, ["op": "ping"])
        state.withLock { $0.noteRoundTrip(bootTimeNanoseconds() &- pinged) }
        if ping["ok"]?.boolValue != true, ping["id"]?.isNull == true {
            throw ClientError.serverFull(ping["error"]?["message"]?.stringValue ?? "the server turned the connection away")
        }
        let (credentials, mirror, since) = state.withLock { ($0.savedCredentials, $0.mirror, $0.mirrorVersion) }
        if let credentials {
            let request: [String: JSONValue]
            switch credentials {
            case .token(let token): request = ["op": "auth", "token": .string(token)]
            case .adminKey(let key, let game):
                request = ["op": "admin", "key": .string(key), "game": game.map(JSONValue.string) ?? .null]
            }
            let reply = try syncRequest(connection, request)
            if reply["ok"]?.boolValue != true {
                let message = reply["error"]?["message"]?.stringValue ?? "sign-in refused"
                // Only a refused identity is a lost session; anything else (a busy or
                // shutting-down server) is a reason to try this reconnect again later.
                guard reply["error"]?["code"]?.stringValue.flatMap(ErrorCode.init(rawValue:)) == .unauthenticated else {
                    throw RefusedForNow(reason: message)
                }
                // Signed out, as after `bye unclaimed`: nothing to subscribe to as anyone.
                state.withLock { state in
                    state.savedCredentials = nil
                    state.subscribed = false
                }
                emit([.sessionLost(reason: message)])
            }
        }
        if state.withLock({ $0.subscribed }) {
            var request: [String: JSONValue] = ["op": "subscribe"]
            if let mirror, since > 0 {
                request["since"] = .int(since)
                // The mirror's own fingerprint: the server patches it only if its game at
                // `since` is this very view, not another game's that reached the same version.
                request["since_digest"] = .string(ViewDigest.of(mirror))
            }
            var reply = try syncRequest(connection, request)
            if reply["ok"]?.boolValue != true, request["since"] != nil {
                // Resuming from a version may be refused for a while (a server that limits
                // rebuilding past views, say); a snapshot of the present needs no past.
                reply = try syncRequest(connection, ["op": "subscribe"])
            }
            if reply["ok"]?.boolValue != true {
                // Signed in but not subscribed, the screen would sit on an old game with no word
                // of it. A refusal that passes (a busy or failing server) makes this reconnect
                // start over; any other will not pass by trying again.
                let message = reply["error"]?["message"]?.stringValue ?? "refused"
                let code = reply["error"]?["code"]?.stringValue.flatMap(ErrorCode.init(rawValue:))
                guard code?.isTransient != true else {
                    throw RefusedForNow(reason: message)
                }
                state.withLock { $0.subscribed = false }
            }
            // Told before the snapshot that follows the reply is handled (the reader handles
            // it next), so that it reads as a replacement, not as the game moving on.
            if reply["result"]?["diverged"]?.boolValue == true { emit([.diverged]) }
        }
    }
}

/// A reconnect the server turned away with a reason that passes (busy, shutting down, full):
/// worth trying again, and worth telling the person why it has not worked yet.
struct RefusedForNow: Error {
    let reason: String
}

extension ClientCore {
    /// The server's reason when `error` ended a reconnect attempt that it turned away for now.
    static func refusalForNow(_ error: any Error) -> String? {
        switch error {
        case let refused as RefusedForNow: refused.reason
        case ClientError.serverFull(let message): message
        case let other as NotABQServer: "something that is not a bq server answers on the port now (its first line: \"\(other.firstLine)\")"
        default: nil
        }
    }
}

/// The pauses between attempts to connect: doubling from `initialBackoff` up to `maxBackoff`,
/// each spread by a fifth either way, so that the players' clients that lost a server together
/// do not all come back in the same millisecond, attempt after attempt.
struct Backoff {
    private var delay: Double
    private let limit: Double

    init(_ options: ClientOptions) {
        delay = options.initialBackoff
        limit = options.maxBackoff
    }

    mutating func next() -> Double {
        defer { delay = min(delay * 2, limit) }
        return delay * Double.random(in: 0.8...1.2)
    }
}

/// A first line that is not a `hello`: another program holds the port.
struct NotABQServer: Error, CustomStringConvertible {
    /// Its start, printable ASCII alone (the rest as `?`): it is quoted to a person's terminal.
    let firstLine: String

    init(_ line: [UInt8]) {
        firstLine = String(decoding: line.prefix(60).map { (0x20...0x7E).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
            + (line.count > 60 ? "..." : "")
    }

    var description: String { "the first line was not a hello: \"\(firstLine)\"" }
}
