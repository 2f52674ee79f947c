import Foundation
import JSON
import UV
import POSIXSupport

/// A blocking NDJSON client for end-to-end tests. It keeps the subscriber's mirror
/// (snapshot plus patches) as lines arrive and records every protocol promise it sees
/// broken in `problems`, so tests can assert on them after the fact.
final class TestClient: @unchecked Sendable {
    static let mutations: Set<String> = [
        "claim", "complete_challenge", "discover_secrets", "unlock_reward", "save_secret", "deliver_secret",
        "force_complete", "force_unlock", "trigger_final_badge", "unclaim", "adjust_points", "set_day",
        "save_challenge", "save_reward",
    ]

    let socket: BlockingLineSocket
    var timeoutMilliseconds = 15_000
    /// A name for messages in `problems`.
    var label = "client"
    private(set) var hello: JSONValue = .null
    /// The subscriber's view at `mirrorVersion`, built only from pushes.
    private(set) var mirror: JSONValue?
    private(set) var mirrorVersion = 0
    private(set) var snapshots = 0
    private(set) var patches = 0
    private(set) var isSubscribed = false
    private(set) var byeReason: String?
    private(set) var problems: [String] = []
    /// When set, every line received is kept here (raw bytes and parsed).
    var recordsLines = false
    private(set) var lines: [(raw: [UInt8], message: JSONValue)] = []
    /// Called with every parsed line after the mirror took it into account.
    var observer: ((JSONValue, TestClient) -> Void)?
    private var nextID = 1
    private var sentOps: [Int: String] = [:]

    init(port: Int, receiveBufferBytes: Int? = nil) throws {
        socket = try BlockingLineSocket(host: "127.0.0.1", port: port, receiveBufferBytes: receiveBufferBytes)
        guard let first = try readMessage() else { throw HarnessError("connection closed before hello") }
        guard first["push"]?.stringValue == "hello" else {
            throw HarnessError("first line is not hello: \(first.serialized())")
        }
    }

    deinit { socket.close() }

    // MARK: Sending

    func sendRaw(_ bytes: [UInt8]) throws { try socket.send(bytes) }

    func sendLine(_ line: String) throws { try socket.sendLine(line) }

    /// Sends a request and returns its id without waiting (pipelining).
    @discardableResult
    func send(_ op: String, _ args: [String: JSONValue] = [:]) throws -> Int {
        let id = nextID
        nextID += 1
        var fields = args
        fields["id"] = .int(id)
        fields["op"] = .string(op)
        sentOps[id] = op
        try socket.sendLine(JSONValue.object(fields).serialized())
        return id
    }

    /// Sends a request and waits for its reply.
    func call(_ op: String, _ args: [String: JSONValue] = [:]) throws -> JSONValue {
        try reply(to: send(op, args))
    }

    /// Requires an `ok` reply and returns it (with `version` and `result`).
    @discardableResult
    func ok(_ op: String, _ args: [String: JSONValue] = [:]) throws -> JSONValue {
        let answer = try call(op, args)
        guard answer["ok"] == .bool(true) else {
            throw HarnessError("\(label): \(op) \(JSONValue.object(args).serialized()) was refused: \(answer.serialized())")
        }
        return answer
    }

    /// Subscribes and waits for the push that starts the mirror; returns the reply.
    @discardableResult
    /// `digest`: sent as `since_digest`, the `ViewDigest` of the view at `since`.
    func subscribe(since: Int? = nil, digest: String? = nil) throws -> JSONValue {
        var args: [String: JSONValue] = [:]
        if let since { args["since"] = .int(since) }
        if let digest { args["since_digest"] = .string(digest) }
        let answer = try ok("subscribe", args)
        let first = try readMessage()
        let kind = first?["push"]?.stringValue
        guard kind == "snapshot" || kind == "patch" else {
            throw HarnessError("\(label): subscribe was not followed by a snapshot or patch: \(first?.serialized() ?? "EOF")")
        }
        return answer
    }

    /// Starts the mirror from a view kept elsewhere (an earlier connection), to resume with `since`.
    func adoptMirror(_ view: JSONValue, version: Int) {
        mirror = view
        mirrorVersion = version
    }

    /// Requires a refusal and returns its error code.
    func refusal(_ op: String, _ args: [String: JSONValue] = [:]) throws -> String {
        let answer = try call(op, args)
        guard answer["ok"] == .bool(false), let code = answer["error"]?["code"]?.stringValue else {
            throw HarnessError("\(label): \(op) \(JSONValue.object(args).serialized()) was not refused: \(answer.serialized())")
        }
        return code
    }

    // MARK: Receiving

    /// Reads until the reply with this id; pushes on the way update the mirror.
    func reply(to id: Int) throws -> JSONValue {
        while true {
            guard let message = try readMessage() else { throw HarnessError("\(label): EOF while waiting for reply \(id)") }
            guard message["push"] == nil else { continue }
            if message["id"] == .int(id) { return message }
            throw HarnessError("\(label): reply out of order: wanted id \(id), got \(message.serialized())")
        }
    }

    /// Reads until the next reply (any id), skipping pushes.
    func nextReply() throws -> JSONValue {
        while true {
            guard let message = try readMessage() else { throw HarnessError("\(label): EOF while waiting for a reply") }
            if message["push"] == nil { return message }
        }
    }

    /// Reads until a push of this kind arrives.
    @discardableResult
    func waitForPush(_ kind: String) throws -> JSONValue {
        while true {
            guard let message = try readMessage() else { throw HarnessError("\(label): EOF while waiting for a \(kind) push") }
            if message["push"]?.stringValue == kind { return message }
        }
    }

    /// Reads everything up to EOF and returns it.
    func readToEOF() throws -> [JSONValue] {
        var all: [JSONValue] = []
        while let message = try readMessage() { all.append(message) }
        return all
    }

    /// The next line, parsed and taken into account; nil at EOF.
    func readMessage() throws -> JSONValue? {
        guard let raw = try socket.readLine(timeoutMilliseconds: timeoutMilliseconds) else { return nil }
        let message: JSONValue
        do {
            message = try JSONParser.parse(raw)
        } catch {
            problems.append("\(label): unparsable line: \(String(decoding: raw, as: UTF8.self))")
            return .object([:])
        }
        if recordsLines { lines.append((raw, message)) }
        take(message)
        observer?(message, self)
        return message
    }

    private func take(_ message: JSONValue) {
        switch message["push"]?.stringValue {
        case "hello"?:
            hello = message
        case "snapshot"?:
            snapshots += 1
            mirror = message["state"]
            mirrorVersion = message["version"]?.intValue ?? -1
        case "patch"?:
            patches += 1
            let from = message["from"]?.intValue ?? -1
            let to = message["to"]?.intValue ?? -1
            guard let current = mirror else {
                problems.append("\(label): patch \(from)->\(to) before any snapshot")
                return
            }
            if from != mirrorVersion { problems.append("\(label): patch from \(from) but the mirror is at \(mirrorVersion)") }
            if to < from { problems.append("\(label): patch goes back from \(from) to \(to)") }
            do {
                let ops = try (message["ops"]?.arrayValue ?? []).map { json throws(JSONPatchError) in try PatchOp(json: json) }
                mirror = try JSONPatch.apply(ops, to: current)
            } catch {
                problems.append("\(label): patch \(from)->\(to) does not apply: \(error)")
            }
            mirrorVersion = to
        case "bye"?:
            byeReason = message["reason"]?.stringValue
        case nil:
            takeReply(message)
        default:
            break
        }
    }

    private func takeReply(_ reply: JSONValue) {
        guard let id = reply["id"]?.intValue, let op = sentOps.removeValue(forKey: id) else { return }
        guard reply["ok"] == .bool(true) else { return }
        switch op {
        case "subscribe": isSubscribed = true
        case "unsubscribe": isSubscribed = false
        default:
            // A subscriber gets the patch with its own mutation before the reply to it.
            if isSubscribed, Self.mutations.contains(op), let version = reply["version"]?.intValue,
               reply["replayed"] != .bool(true), mirrorVersion < version {
                problems.append("\(label): reply to \(op) at version \(version) came before its patch (mirror at \(mirrorVersion))")
            }
        }
    }

    // MARK: Checks

    /// Compares the mirror with a fresh `state` reply; records any difference in `problems`.
    func checkMirror(step: String) throws {
        let answer = try ok("state")
        let version = answer["version"]?.intValue ?? -1
        guard isSubscribed else { return }
        if version != mirrorVersion {
            problems.append("\(label) at \(step): state is at version \(version), mirror at \(mirrorVersion)")
        }
        if answer["result"]?["state"] != mirror {
            let ops = JSONPatch.diff(mirror ?? .null, answer["result"]?["state"] ?? .null).map { $0.json.serialized() }
            problems.append("\(label) at \(step): mirror differs from state: \(ops.prefix(5))")
        }
    }
}

extension JSONValue {
    /// Every string anywhere inside this value.
    var allStrings: [String] {
        switch self {
        case .string(let text): return [text]
        case .array(let items): return items.flatMap(\.allStrings)
        case .object(let members): return members.values.flatMap(\.allStrings)
        default: return []
        }
    }
}
