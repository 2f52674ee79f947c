import ArgumentParser
import Client
import Domain
import Foundation
import JSON

/// What to show when the answer to a mutation whose wait ended unconfirmed arrives after all.
func lateReplyLine(_ op: String, _ args: [String: JSONValue], _ result: Result<Reply, ClientError>, style: Style,
                   showsVersion: Bool) -> String {
    let what = commandWords(op, args).terminalSafe
    switch result {
    case .success(let reply):
        let points = reply.result["points"]?.intValue.map { " Points: \($0) ✦." } ?? ""
        let version = showsVersion ? " [version \(reply.version ?? 0)]" : ""
        return style.green("✓ ") + "\(what), sent earlier, went through.\(points)\(version)"
    case .failure(.refused(let refusal)) where refusal.errorCode == .internal:
        // Not a refusal: the server failed, and its words say what is known of the change.
        return style.red("✗ ") + "\(what), sent earlier, met a server error: \(refusal.message.terminalSafe)"
    case .failure(let error):
        return style.red("✗ ") + "\(what), sent earlier, was refused: \(error.description.terminalSafe)"
    }
}

/// Whether a late answer to an unlock (`unlock_reward`, `force_unlock`) is the one that
/// brought the final badge: the timeline of `view` (which holds the change before its answer
/// comes) has the badge right after this reward's unlock, since one commit made both. The
/// reply alone cannot say: it tells whether the badge is unlocked, also when it was earlier.
func unlockBroughtFinalBadge(_ op: String, _ args: [String: JSONValue], _ result: Result<Reply, ClientError>,
                             view: JSONValue?) -> Bool {
    guard op == "unlock_reward" || op == "force_unlock", case .success(let reply) = result,
          reply.result["final_badge"]?.boolValue == true, let reward = args["reward"]?.stringValue,
          let timeline = view?["timeline"]?.arrayValue,
          let unlock = timeline.lastIndex(where: { $0["kind"] == "reward_unlocked" && $0["ref"]?.stringValue == reward }),
          unlock + 1 < timeline.count else { return false }
    return timeline[unlock + 1]["kind"] == "final_badge"
}

/// A change as a person would have typed it (`complete c05`, `adjust-points 20`), for the
/// lines about a change whose answer came late or not at all: the protocol's op names are not
/// the words anyone used.
func commandWords(_ op: String, _ args: [String: JSONValue]) -> String {
    func arg(_ key: String) -> String { args[key].map { $0.stringValue ?? $0.serialized() } ?? "" }
    switch op {
    case "complete_challenge": return "complete \(arg("challenge"))"
    case "unlock_reward": return "unlock \(arg("reward"))"
    case "discover_secrets": return "discover"
    case "save_secret": return "dare save"
    case "deliver_secret": return "dare deliver"
    case "force_complete": return "force-complete \(arg("challenge"))"
    case "force_unlock": return "force-unlock \(arg("reward"))" + (args["deduct"] == .bool(false) ? " --no-deduct" : "")
    case "trigger_final_badge": return "final-badge"
    case "unclaim": return "unclaim \(arg("character"))"
    case "adjust_points": return "adjust-points \(arg("delta"))"
    case "set_day": return "set-day \(arg("day"))"
    case "save_challenge": return args["challenge"] == nil ? "add-challenge" : "edit-challenge \(arg("challenge"))"
    case "save_reward": return args["reward"] == nil ? "add-reward" : "edit-reward \(arg("reward"))"
    default: return op.replacingOccurrences(of: "_", with: " ")
    }
}

/// What `bq play` and `bq admin` say about their connection while it comes and goes. A server
/// that says goodbye because it is stopping (a restart, most often) has not lost anyone; a
/// server that turns a reconnect away is running, and its reason says what would let them in.
final class ConnectionNotices: @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by `lock`: the connection that ends next was closed by a stopping server.
    private var serverStopping = false

    /// The line to print for `event`, if it is news about the connection. Reader thread.
    func line(for event: ClientEvent, style: Style) -> String? {
        lock.lock()
        defer { lock.unlock() }
        switch event {
        case .bye(reason: "server_shutdown"):
            serverStopping = true
            return style.yellow("The server is stopping (a restart?); reconnecting when it is back…")
        case .disconnected:
            defer { serverStopping = false }
            return serverStopping ? nil : style.yellow("Connection lost; reconnecting…")
        case .reconnectRefused(let reason):
            return style.yellow("The server turned the reconnect away: \(reason.terminalSafe). Still trying…")
        case .reconnected:
            // A goodbye that came while a reconnect was being set up ended no connection the
            // person had: the next loss is news again.
            serverStopping = false
            return style.green("Reconnected.")
        default:
            return nil
        }
    }
}

/// A refusal worded for a person at a party: the server names the request's fields
/// ("Field `proof.text` must be 1 to 2000 characters, got 0"), which a player never typed.
func forPeople(_ message: String) -> String {
    // "option: …" names the field for programs; the rest of the sentence is for people.
    for field in ["option: ", "reward.from_character: "] where message.hasPrefix(field) {
        let rest = message.dropFirst(field.count)
        return rest.prefix(1).uppercased() + rest.dropFirst()
    }
    let opening = "Field `"
    let rest = message.dropFirst(opening.count)
    guard message.hasPrefix(opening), let end = rest.firstIndex(of: "`"), end > rest.startIndex else { return message }
    let field = String(rest[..<end])
    let words = fieldWords[field] ?? field.replacingOccurrences(of: "_", with: " ").replacingOccurrences(of: ".", with: " ")
    return "The " + words + message[message.index(after: end)...]
}

private let fieldWords = [
    "proof.text": "text", "proof.url": "photo link", "proof.kind": "kind of proof", "delta": "number of points",
    "from_character": "giver's character", "content.text": "gift's text", "content.urls": "gift's links",
    "option_b": "option B", "option_b.title": "option B title", "option_b.description": "option B description",
]

/// What a one-shot or a script says of a change whose answer never came: the process ends
/// here, so nothing will send it again, and all that is known is that it may have been made.
/// `retry`, for a one-shot, is how to run it again under the same key.
func unknownOutcomeMessage(_ op: String, checkWith check: String, retry: String? = nil) -> String {
    "No reply to \(op) in time (is the server running, and the network up?): it may or may not have been applied. "
        + "Check \(check) before doing it again"
        + (retry.map { ", or run \($0), signed in as now: if it was made, it is not made twice." } ?? ".")
}

/// `--idem` of `bq play` and `bq admin`: a key the server takes.
func validateIdempotencyKey(_ key: String?) throws {
    guard let key else { return }
    let count = key.unicodeScalars.count
    guard Limits.idempotencyKey.contains(count) else {
        throw ValidationError("--idem must be \(Limits.idempotencyKey.lowerBound) to \(Limits.idempotencyKey.upperBound) characters, got \(count)")
    }
}

/// What an open `bq play` says of a change with no answer yet: it keeps it and sends it again.
func keptChangeMessage(_ command: String, connected: Bool) -> String {
    guard connected else {
        return "No answer yet to \(command.terminalSafe) (is the server running, and the network up?): it is kept and sent again once "
            + "the connection is back, and made at most once; its answer will show when it comes. Do not type it again."
    }
    return "No answer yet to \(command.terminalSafe) (a slow server or network): its answer will show when it comes; if the connection "
        + "is lost first, it is sent again once it is back, and made at most once. Do not type it again."
}

extension GameClient {
    /// How long a change a person at the game makes waits: for its answer, `answerPatience`
    /// (or less, offline) and never past the request timeout; for a connection that is down,
    /// `offlineWait`. Then it is kept, its answer shown when it comes, and the person may type.
    var personsChangeWait: (timeout: Double, offline: Double) {
        (min(isConnected ? PlaySession.answerPatience : PlaySession.offlineWait, options.requestTimeout), PlaySession.offlineWait)
    }
}

/// Leaving gives up the changes kept for sending once the connection is back: a person at a
/// terminal is asked first (`asking`); otherwise it is said, so that they are checked later.
func mayLeaveKeptChanges(of client: GameClient, terminal: Terminal, asking: Bool, check: String) -> Bool {
    // Leaving without asking (Ctrl-C, the end of input) may cut a command's own wait short too.
    let kept = (asking ? client.keptMutations : client.unansweredMutations).map { commandWords($0.op, $0.args).terminalSafe }
    guard !kept.isEmpty else { return true }
    let list = kept.joined(separator: ", ")
    if asking, Terminal.stdinIsTerminal {
        return terminal.confirm("Still no answer to \(list): leaving gives up sending it, "
            + "and it may or may not have been made. Leave anyway? [y/N] ")
    }
    terminal.error("Left with no answer to \(list): it may or may not have been made. Check \(check) before doing it again.")
    return true
}

/// What `bq play` and `bq admin` say when they cannot reach a server: most often it is not
/// running, or runs on another address.
func cannotConnectMessage(_ command: String, _ error: any Error, host: String, port: Int) -> String {
    // The server's words (a full server's) are shown like any text from it. A server that is
    // full is running: no hint that it might not be.
    let said = "bq \(command): " + String(describing: error).terminalSafe
    // Only when nothing took the connection: one that was taken says what happened instead.
    guard let clientError = error as? ClientError, case .connectFailed = clientError else { return said }
    return said + ". Is bq serve running at \(host):\(port)?"
}

extension ClientOptions {
    /// `--timeout` shorter than the usual wait for a connection and the server's `hello` (a
    /// script checking quickly whether the server is up) bounds each such wait too; a longer
    /// one leaves them at 3 s, tried again until `--timeout` has passed.
    mutating func limitConnectTimeout(toSeconds seconds: Double) {
        connectTimeoutMilliseconds = min(connectTimeoutMilliseconds, max(1, Int((seconds * 1000).rounded(.up))))
    }
}

/// `--timeout` of `bq play` and `bq admin`: a wait Foundation can keep (`inf` crashed it).
func validatePort(_ port: Int) throws {
    guard (1...65_535).contains(port) else { throw ValidationError("--port must be 1 to 65535, got \(port)") }
}

func validateTimeout(_ seconds: Double) throws {
    guard (0.1...86_400).contains(seconds) else {
        throw ValidationError("--timeout must be 0.1 to 86400 seconds (a day), got \(seconds)")
    }
}

/// Whether the answer to a yes/no question is yes (`y` or `yes`, any case); no by default.
func isYes(_ answer: String?) -> Bool {
    let said = answer?.trimmingCharacters(in: .whitespaces).lowercased()
    return said == "y" || said == "yes"
}

extension ClientError {
    /// How a one-shot that ends with this error exits, as docs/playing.md's table says: 1 refused,
    /// 75 no reply in time (to a change, which may or may not have been made, or to a read),
    /// 2 no server to talk to (the connection lost and not found again, a full server).
    var exitStatus: Int32 {
        switch self {
        case .refused: 1
        case .timedOut, .unconfirmed: Admin.exitUnconfirmed
        default: 2
        }
    }
}
