import Foundation
import JSON
import Protocol
import UV

/// Tuning for a `GameClient`.
public struct ClientOptions: Sendable {
    /// How long `request` waits for a reply by default, reconnects included.
    public var requestTimeout: Double = 30
    public var connectTimeoutMilliseconds = 3000
    /// Reconnect after a lost connection (with backoff), sign in again, resubscribe, re-send.
    public var reconnect = true
    /// The first pause before a reconnect attempt; it doubles up to `maxBackoff` (seconds).
    public var initialBackoff: Double = 0.05
    public var maxBackoff: Double = 2

    public init() {}
}

/// A connection to a BirthdayQuest server that survives server restarts.
///
/// Threads: one reader thread per client reads every line, matches replies to requests by id,
/// applies pushes to the mirror (`view`, `version`) and, when the connection is lost, reconnects
/// with backoff, signs in again with the saved credentials, resubscribes with `since` and re-sends
/// every request still waiting for its reply (mutations keep their original idempotency key, so
/// each is applied exactly once). Any thread may call `send`/`request`; they block only the
/// caller. One `NSCondition` guards all shared state; a separate write lock keeps lines whole and
/// in order (lock order: write lock, then state). Observers run on the reader thread and must
/// not wait for a reply (the reader could not read it): hand work to another thread instead.
public final class GameClient: @unchecked Sendable {
    public let host: String
    public let port: Int
    public let options: ClientOptions

    /// Serializes writes and socket replacement; always taken before `state`.
    private let writeLock = NSLock()
    /// Guards every `var` below and signals replies, mirror changes and the reader's end.
    private let state = NSCondition()
    private var socket: BlockingLineSocket?
    private var ready = false
    private var generation = 0
    private var closing = false
    private var readerDone = false
    private var nextID = 1
    private var pending: [Int: PendingState] = [:]
    private var savedCredentials: Credentials?
    private var subscribed = false
    private var resyncing = false
    private var mirror: JSONValue?
    private var mirrorVersion = 0
    private var reconnects = 0
    private var observer: (@Sendable (ClientEvent) -> Void)?
    private var lineObserver: (@Sendable (_ line: String, _ outgoing: Bool) -> Void)?

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
        client.lineObserver = onLine
        try client.start()
        return client
    }

    deinit { close() }

    // MARK: Observing

    /// Called on the reader thread for every `ClientEvent`. Replaces any earlier observer.
    public func onEvent(_ observer: (@Sendable (ClientEvent) -> Void)?) {
        state.lock()
        self.observer = observer
        state.unlock()
    }

    /// Called with every raw protocol line, sent (`outgoing`) or received, without its newline.
    public func onLine(_ observer: (@Sendable (_ line: String, _ outgoing: Bool) -> Void)?) {
        state.lock()
        lineObserver = observer
        state.unlock()
    }

    /// The local mirror of this connection's view, once subscribed.
    public var view: JSONValue? {
        state.lock()
        defer { state.unlock() }
        return mirror
    }

    /// The version the mirror is at (0 before the first snapshot).
    public var version: Int {
        state.lock()
        defer { state.unlock() }
        return mirrorVersion
    }

    /// The mirror and its version, read together.
    public var mirrorSnapshot: (version: Int, view: JSONValue?) {
        state.lock()
        defer { state.unlock() }
        return (mirrorVersion, mirror)
    }

    /// How the client signs in again after a reconnect: set by a successful `claim`, `auth` or `admin`.
    public var credentials: Credentials? {
        state.lock()
        defer { state.unlock() }
        return savedCredentials
    }

    /// How many times the connection was re-established.
    public var reconnectCount: Int {
        state.lock()
        defer { state.unlock() }
        return reconnects
    }

    /// Whether a signed-in connection is up right now.
    public var isConnected: Bool {
        state.lock()
        defer { state.unlock() }
        return ready
    }

    /// Waits until the mirror is at `version` or later; false on timeout or close.
    @discardableResult
    public func waitForMirror(atLeast version: Int, timeout: Double? = nil) -> Bool {
        let deadline = Date().addingTimeInterval(timeout ?? options.requestTimeout)
        state.lock()
        defer { state.unlock() }
        while mirror == nil || mirrorVersion < version {
            if readerDone || !state.wait(until: deadline) { return mirror != nil && mirrorVersion >= version }
        }
        return true
    }

    // MARK: Requests

    /// Sends a request without waiting (pipelining): replies are matched by id, so several may be
    /// in flight. A mutation gets a fresh idempotency key unless `args` has an `idem`.
    public func send(_ op: String, _ args: [String: JSONValue] = [:]) -> PendingRequest {
        var fields = args
        if MutationOps.all.contains(op), fields["idem"] == nil {
            fields["idem"] = .string(IdempotencyKey.make())
        }
        state.lock()
        let id = nextID
        nextID += 1
        state.unlock()
        fields["op"] = .string(op)
        fields["id"] = .int(id)
        let entry = PendingState(id: id, op: op, args: fields, awaited: true)
        enqueue(entry)
        return PendingRequest(client: self, entry: entry)
    }

    /// Sends a request and waits for its reply; a refusal throws `.refused` with the server's code
    /// and message. Across a reconnect the request is re-sent (same idempotency key) and awaited.
    public func request(_ op: String, _ args: [String: JSONValue] = [:],
                        timeout: Double? = nil) throws(ClientError) -> Reply {
        try send(op, args).wait(timeout: timeout)
    }

    /// Stops reconnecting, closes the connection and fails waiting requests with `.closed`.
    /// Call it when done: the reader thread keeps the client alive until then.
    public func close() {
        writeLock.lock()
        state.lock()
        let wasClosing = closing
        closing = true
        let current = socket
        state.broadcast()
        state.unlock()
        // Waking the reader: the server answers our FIN by hanging up. The reader closes the socket.
        current?.shutdownWrite()
        writeLock.unlock()
        if wasClosing { return }
        let deadline = Date().addingTimeInterval(2)
        state.lock()
        while !readerDone, state.wait(until: deadline) {}
        state.unlock()
    }

    func wait(for entry: PendingState, timeout: Double?) throws(ClientError) -> Reply {
        let deadline = Date().addingTimeInterval(timeout ?? options.requestTimeout)
        state.lock()
        while entry.outcome == nil {
            if readerDone { entry.outcome = .failure(.closed); break }
            if !state.wait(until: deadline) { break }
        }
        pending[entry.id] = nil
        let outcome = entry.outcome ?? .failure(.timedOut(op: entry.op))
        state.unlock()
        return try outcome.get()
    }

    /// Registers the request and sends it now when a connection is ready; otherwise `markReady`
    /// sends it once a new connection is signed in.
    private func enqueue(_ entry: PendingState) {
        writeLock.lock()
        defer { writeLock.unlock() }
        state.lock()
        pending[entry.id] = entry
        let target = ready ? socket : nil
        if target != nil { entry.sentGeneration = generation }
        let lines = lineObserver
        state.unlock()
        guard let target else { return }
        let line = entry.line
        lines?(line, true)
        // A failed send surfaces as a lost connection on the reader, which re-sends this entry.
        try? target.sendLine(line)
    }

    /// A request the reader makes for itself (resubscribe after a gap); nobody waits for it.
    private func sendInternal(_ op: String, _ args: [String: JSONValue]) {
        var fields = args
        state.lock()
        let id = nextID
        nextID += 1
        state.unlock()
        fields["op"] = .string(op)
        fields["id"] = .int(id)
        enqueue(PendingState(id: id, op: op, args: fields, awaited: false))
    }

    // MARK: Connection lifecycle (reader thread, or the caller of `connect` before it starts)

    private func start() throws(ClientError) {
        let first: BlockingLineSocket
        do {
            first = try BlockingLineSocket(host: host, port: port,
                                           connectTimeoutMilliseconds: options.connectTimeoutMilliseconds)
        } catch {
            throw .connectFailed(error.description)
        }
        do {
            try handshake(first)
        } catch {
            first.close()
            throw .connectFailed("\(error)")
        }
        markReady(first)
        let thread = Thread { [self] in readerMain(first) }
        thread.name = "bq-client-reader"
        thread.start()
    }

    private var isClosing: Bool {
        state.lock()
        defer { state.unlock() }
        return closing
    }

    private func readerMain(_ first: BlockingLineSocket) {
        var current: BlockingLineSocket? = first
        while let connection = current {
            let reason = readLoop(connection)
            drop(connection, reason: reason)
            current = nil
            if options.reconnect, !isClosing {
                current = reconnectWithBackoff()
                if current != nil {
                    state.lock()
                    reconnects += 1
                    state.unlock()
                    emit([.reconnected])
                }
            }
        }
        state.lock()
        readerDone = true
        for entry in pending.values where entry.outcome == nil { entry.outcome = .failure(.closed) }
        state.broadcast()
        state.unlock()
    }

    private func reconnectWithBackoff() -> BlockingLineSocket? {
        var delay = options.initialBackoff
        while true {
            state.lock()
            let deadline = Date().addingTimeInterval(delay)
            while !closing, state.wait(until: deadline) {}
            let stop = closing
            state.unlock()
            if stop { return nil }
            if let connection = try? BlockingLineSocket(host: host, port: port,
                                                        connectTimeoutMilliseconds: options.connectTimeoutMilliseconds) {
                do {
                    try handshake(connection)
                    markReady(connection)
                    return connection
                } catch {
                    connection.close()
                }
            }
            delay = min(delay * 2, options.maxBackoff)
        }
    }

    /// Reads lines until the connection ends; returns why it ended.
    private func readLoop(_ connection: BlockingLineSocket) -> String {
        while true {
            if isClosing { return "closed" }
            do {
                guard let bytes = try connection.readLine(timeoutMilliseconds: 250) else {
                    return "the server closed the connection"
                }
                try handleLine(bytes, awaiting: nil)
            } catch let error as SocketError where error.kind == .timedOut {
                continue
            } catch {
                return "\(error)"
            }
        }
    }

    private func drop(_ connection: BlockingLineSocket, reason: String) {
        writeLock.lock()
        state.lock()
        ready = false
        socket = nil
        resyncing = false
        for (id, entry) in pending where !entry.awaited { pending[id] = nil }
        let quiet = closing
        state.unlock()
        connection.close()
        writeLock.unlock()
        if !quiet { emit([.disconnected(reason: reason)]) }
    }

    /// Makes `connection` current and sends every request still waiting, in id order.
    private func markReady(_ connection: BlockingLineSocket) {
        writeLock.lock()
        defer { writeLock.unlock() }
        state.lock()
        generation += 1
        socket = connection
        ready = true
        let resend = pending.values.filter { $0.outcome == nil && $0.sentGeneration != generation }
            .sorted { $0.id < $1.id }
        for entry in resend { entry.sentGeneration = generation }
        let lines = lineObserver
        state.unlock()
        for entry in resend {
            lines?(entry.line, true)
            try? connection.sendLine(entry.line)
        }
    }

    /// On a new connection: the `hello`, then signing in again and resubscribing from the mirror's
    /// version, each awaited here before any queued request is re-sent.
    private func handshake(_ connection: BlockingLineSocket) throws {
        let hello = try readJSON(connection)
        guard hello["push"]?.stringValue == "hello" else {
            throw ClientError.protocolViolation("the first line was not a hello")
        }
        try handlePush(hello)
        state.lock()
        let credentials = savedCredentials
        let resubscribe = subscribed
        let since = mirror == nil ? nil : mirrorVersion
        state.unlock()
        if let credentials {
            let line: JSONValue
            switch credentials {
            case .token(let token): line = ["op": "auth", "token": .string(token)]
            case .adminKey(let key, let game):
                line = ["op": "admin", "key": .string(key), "game": game.map(JSONValue.string) ?? .null]
            }
            let reply = try syncRequest(connection, line)
            if reply["ok"]?.boolValue != true {
                let message = reply["error"]?["message"]?.stringValue ?? "sign-in refused"
                state.lock()
                savedCredentials = nil
                state.unlock()
                emit([.sessionLost(reason: message)])
            }
        }
        if resubscribe {
            var line: JSONValue = ["op": "subscribe"]
            if let since, since > 0, case .object(var fields) = line {
                fields["since"] = .int(since)
                line = .object(fields)
            }
            _ = try syncRequest(connection, line)
        }
    }

    private func readJSON(_ connection: BlockingLineSocket) throws -> JSONValue {
        guard let bytes = try connection.readLine(timeoutMilliseconds: options.connectTimeoutMilliseconds) else {
            throw ClientError.protocolViolation("the server closed the connection")
        }
        reportLine(String(decoding: bytes, as: UTF8.self), false)
        return try JSONParser.parse(bytes)
    }

    private func reportLine(_ line: String, _ outgoing: Bool) {
        state.lock()
        let observe = lineObserver
        state.unlock()
        observe?(line, outgoing)
    }

    /// Sends one request on `connection` and reads until its reply, handling pushes on the way.
    private func syncRequest(_ connection: BlockingLineSocket, _ request: JSONValue) throws -> JSONValue {
        state.lock()
        let id = nextID
        nextID += 1
        state.unlock()
        guard case .object(var fields) = request else { return .null }
        fields["id"] = .int(id)
        let line = JSONValue.object(fields).serialized()
        reportLine(line, true)
        try connection.sendLine(line)
        while true {
            guard let bytes = try connection.readLine(timeoutMilliseconds: options.connectTimeoutMilliseconds) else {
                throw ClientError.protocolViolation("the server closed the connection")
            }
            if let reply = try handleLine(bytes, awaiting: id) { return reply }
        }
    }

    /// Routes one received line: pushes to the mirror, replies to their waiters. Returns the line
    /// when it is the reply to `awaiting`.
    @discardableResult
    private func handleLine(_ bytes: [UInt8], awaiting: Int?) throws -> JSONValue? {
        reportLine(String(decoding: bytes, as: UTF8.self), false)
        guard !bytes.isEmpty else { return nil }
        let message = try JSONParser.parse(bytes)
        if message["push"] != nil {
            try handlePush(message)
            return nil
        }
        guard let id = message["id"]?.intValue else { return nil }
        if id == awaiting { return message }
        resolve(id: id, message)
        return nil
    }

    private func resolve(id: Int, _ message: JSONValue) {
        state.lock()
        defer {
            state.broadcast()
            state.unlock()
        }
        guard let entry = pending[id], entry.outcome == nil else { return }
        if message["ok"]?.boolValue == true {
            let result = message["result"] ?? .object([:])
            entry.outcome = .success(Reply(op: entry.op, version: message["version"]?.intValue, result: result,
                                           replayed: message["replayed"]?.boolValue ?? false))
            switch entry.op {
            case "claim": if let token = result["token"]?.stringValue { savedCredentials = .token(token) }
            case "auth": if let token = entry.args["token"]?.stringValue { savedCredentials = .token(token) }
            case "admin":
                if let key = entry.args["key"]?.stringValue {
                    savedCredentials = .adminKey(key, game: entry.args["game"]?.stringValue)
                }
            case "subscribe": subscribed = true
            case "unsubscribe": subscribed = false
            default: break
            }
        } else {
            let error = message["error"]
            entry.outcome = .failure(.refused(ServerRefusal(
                op: entry.op, code: error?["code"]?.stringValue ?? "internal",
                message: error?["message"]?.stringValue ?? "refused")))
        }
        if !entry.awaited { pending[id] = nil }
    }

    private func handlePush(_ message: JSONValue) throws {
        var events: [ClientEvent] = []
        var resubscribe = false
        state.lock()
        switch message["push"]?.stringValue {
        case "hello":
            events.append(.hello(server: message["server"]?.stringValue ?? "",
                                 game: message["game"]?.stringValue ?? "",
                                 version: message["version"]?.intValue ?? 0))
        case "snapshot":
            if let version = message["version"]?.intValue, let view = message["state"] {
                mirror = view
                mirrorVersion = version
                resyncing = false
                events.append(.snapshot(version: version, view: view))
            }
        case "patch":
            let from = message["from"]?.intValue ?? -1
            let to = message["to"]?.intValue ?? -1
            if resyncing {
                break
            }
            if let old = mirror, from == mirrorVersion,
               let ops = try? (message["ops"]?.arrayValue ?? []).map({ json throws(JSONPatchError) in try PatchOp(json: json) }),
               let view = try? JSONPatch.apply(ops, to: old) {
                mirror = view
                mirrorVersion = to
                events.append(.patch(from: from, to: to, ops: ops, old: old, view: view))
            } else {
                events.append(.gap(mirror: mirrorVersion, from: from))
                resyncing = true
                resubscribe = true
            }
        case "bye":
            let reason = message["reason"]?.stringValue ?? ""
            events.append(.bye(reason: reason))
            if reason == "unclaimed" {
                savedCredentials = nil
                subscribed = false
                events.append(.sessionLost(reason: "the character was unclaimed or taken over"))
            }
        default:
            break
        }
        state.broadcast()
        state.unlock()
        // A snapshot is the only cure for a gap: the mirror cannot be trusted for `since`.
        if resubscribe { sendInternal("subscribe", [:]) }
        emit(events)
    }

    private func emit(_ events: [ClientEvent]) {
        guard !events.isEmpty else { return }
        state.lock()
        let observe = observer
        state.unlock()
        guard let observe else { return }
        for event in events { observe(event) }
    }
}

/// A request waiting for its reply; its state belongs to the client's lock.
final class PendingState: @unchecked Sendable {
    let id: Int
    let op: String
    let args: [String: JSONValue]
    let line: String
    /// False for the reader's own requests: dropped with their connection, nobody waits.
    let awaited: Bool
    var sentGeneration = -1
    var outcome: Result<Reply, ClientError>?

    init(id: Int, op: String, args: [String: JSONValue], awaited: Bool) {
        self.id = id
        self.op = op
        self.args = args
        self.awaited = awaited
        line = JSONValue.object(args).serialized()
    }
}

/// A request sent with `GameClient.send`; `wait` blocks for its reply.
public struct PendingRequest: Sendable {
    let client: GameClient
    let entry: PendingState

    /// The op sent.
    public var op: String { entry.op }
    /// The idempotency key sent with this request, for mutations.
    public var idem: String? { entry.args["idem"]?.stringValue }

    /// Waits for the reply; see `GameClient.request`.
    public func wait(timeout: Double? = nil) throws(ClientError) -> Reply {
        try client.wait(for: entry, timeout: timeout)
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
