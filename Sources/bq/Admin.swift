import ArgumentParser
import Client
import Foundation
import JSON
import POSIXSupport

struct Admin: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin",
        abstract: "The organizer's console: status, the event log, and every organizer operation.",
        discussion: """
            Signs in with the admin key: --key, else BQ_ADMIN_KEY, else DIR/admin.key with --data DIR.

            Each operation is a one-shot subcommand. It exits 0 when done; 1 with the server's \
            message when refused; 2 when no server answers; 64 for bad arguments; 75 when no reply \
            came in time and the change may or may not have been made: then it prints the key the \
            change went under, and the same operation run again with --idem KEY is made at most once.

            `console` runs them interactively and asks before destructive ones.
            """,
        subcommands: [AdminStatus.self, AdminShow.self, AdminTimeline.self, AdminLog.self, AdminWatch.self, AdminConsole.self,
                      AdminForceComplete.self, AdminForceUnlock.self, AdminFinalBadge.self, AdminUnclaim.self,
                      AdminAdjustPoints.self, AdminSetDay.self, AdminAddChallenge.self, AdminEditChallenge.self,
                      AdminAddReward.self, AdminEditReward.self])

    @OptionGroup var connection: AdminConnectionOptions

    /// The help of the subcommand `words` start with, when they ask for it (`-h`, `--help`):
    /// inside a console a help request is not an error, and it does not parse as an operation.
    static func subcommandHelp(_ words: [String]) -> String? {
        guard let name = words.first, words.contains("--help") || words.contains("-h"),
              let type = configuration.subcommands.first(where: { $0.configuration.commandName == name })
        else { return nil }
        return withoutConnectionOptions(type.helpMessage(columns: 100))
    }

    /// A subcommand's help as a console shows it: a line typed at a console that is already
    /// signed in has no use for the options that say where the server is and how to sign in.
    static func withoutConnectionOptions(_ help: String) -> String {
        let flags = ["--host", "--port", "--timeout", "--game", "--key", "--data", "--no-color", "--idem"]
        var kept: [Substring] = []
        var skipping = false
        for var line in help.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("USAGE: ") {
                var usage = String(line)
                for flag in flags {
                    // ` [--flag <value>]`, whatever the value is called, or ` [--flag]`.
                    usage = usage.replacingOccurrences(of: " \\[\(flag)( <[^>]*>)?\\]", with: "", options: .regularExpression)
                }
                line = Substring(usage)
            }
            let text = line.drop { $0 == " " }
            let indent = line.count - text.count
            // An option's entry starts two spaces in; its wrapped lines go deeper; a heading or
            // a blank line ends it.
            if indent == 2 && text.hasPrefix("-") {
                skipping = flags.contains { text.hasPrefix($0 + " ") || text == $0 }
            } else if indent < 2 || text.isEmpty {
                skipping = false
            }
            if !skipping { kept.append(line) }
        }
        return kept.joined(separator: "\n")
    }

    /// EX_TEMPFAIL: a script can tell "the outcome is unknown" from a refusal.
    static let exitUnconfirmed: Int32 = 75
}

/// Where the server is and how to sign in; shared by every `bq admin` subcommand.
struct AdminConnectionOptions: ParsableArguments {
    @Option(help: "Server address.") var host = "127.0.0.1"
    @Option(help: "Server port.") var port = 4747
    @Option(help: "Seconds to wait for each reply, reconnecting included (0.1 to 86400); under 3, also for the connection and the server's hello.") var timeout: Double = 30
    @Option(help: "Game name (default: the server's default game).") var game: String?
    @Option(help: "The admin key (else BQ_ADMIN_KEY, else --data DIR/admin.key); other users of this machine can read it in the process list, as they cannot BQ_ADMIN_KEY.") var key: String?
    @Option(help: "The server's data directory, to read DIR/admin.key.") var data: String?
    @Flag(name: .customLong("no-color"), help: "No ANSI colours (NO_COLOR is respected too).") var noColor = false

    func validate() throws {
        try validateTimeout(timeout)
        try validatePort(port)
    }

    /// The key, and where it was found (for the message when it is wrong).
    func adminKey() throws -> (key: String, source: String) {
        if let key, !key.isEmpty { return (key, "--key") }
        if let key = ProcessInfo.processInfo.environment["BQ_ADMIN_KEY"], !key.isEmpty { return (key, "BQ_ADMIN_KEY") }
        if let data {
            let path = (data as NSString).appendingPathComponent("admin.key")
            guard let contents = FileManager.default.contents(atPath: path) else {
                throw ValidationError("cannot read \(path)")
            }
            return (String(decoding: contents, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines), path)
        }
        throw ValidationError("no admin key: pass --key, set BQ_ADMIN_KEY, or pass --data DIR")
    }

    /// Connects and signs in as admin, runs `body`, then closes; on a failure to sign in prints
    /// why and exits non-zero.
    func withContext(_ body: (AdminContext) throws -> Void) throws {
        // A reader that stops early (`| head -1`) must not end a change half told: its exit
        // status, not SIGPIPE's, says whether it was made.
        ignoreSIGPIPE()
        let terminal = Terminal(colorAllowed: !noColor)
        let key: (key: String, source: String)
        do {
            key = try adminKey()
        } catch {
            // Thrown from here, ArgumentParser would print the top-level usage, not this command's.
            terminal.error("bq admin: \(error)")
            throw ExitCode.validationFailure
        }
        let client: GameClient
        do {
            var options = ClientOptions()
            options.requestTimeout = timeout
            options.limitConnectTimeout(toSeconds: timeout)
            client = try GameClient.connect(host: host, port: port, options: options)
        } catch {
            // As `bq play`: 2 when there is no server to talk to, 1 when it says no.
            terminal.error(cannotConnectMessage("admin", error, host: host, port: port))
            throw ExitCode(2)
        }
        do {
            try client.signInAdmin(key: key.key, game: game)
        } catch {
            client.close()
            // A wrong key is most often another server's: say which key was tried.
            let tried = error.refusal?.code == "unauthenticated"
                ? " (the key from \(key.source)\(key.source.hasSuffix("admin.key") ? ": is --data the data directory of the server on port \(port)?" : ""))" : ""
            terminal.error("bq admin: \(String(describing: error).terminalSafe)\(tried.terminalSafe)")
            // A refusal (a wrong key) is 1; a server that does not answer is none to talk to, 2
            // (as `bq play` has it: nothing was asked of it yet).
            throw ExitCode(error.refusal == nil ? 2 : 1)
        }
        defer { client.close() }
        try body(AdminContext(client: client, terminal: terminal, game: game))
    }
}

/// What one line typed at a console (`bq admin console`, or the organizer's `bq play`) came to.
enum ConsoleLine {
    case output([String])
    case refused(ClientError)
    /// Bad options, said in ArgumentParser's words.
    case usage(String)
    case cancelled
    /// The words name a subcommand that is not an operation (a screen such as `status`).
    case notAnOperation
}

extension Admin {
    /// Why `words` (an operation and its options) do not parse, as `runConsoleLine` would say
    /// it; nil when they do, or ask for help: for checking a one-shot before it connects.
    static func usageProblem(_ words: [String]) -> String? {
        guard subcommandHelp(words) == nil, case .failure(let usage) = parseConsoleLine(words) else { return nil }
        return usage.message
    }

    private struct ConsoleUsage: Error {
        let message: String
    }

    /// `words` parsed, or why they cannot run from a console line (or a one-shot `bq play`):
    /// ArgumentParser's words for bad options, or a key typed among a change's words.
    private static func parseConsoleLine(_ words: [String]) -> Result<any ParsableCommand, ConsoleUsage> {
        let command: any ParsableCommand
        do {
            command = try parseAsRoot(words)
        } catch {
            return .failure(ConsoleUsage(message: message(for: error)))
        }
        // A console already makes each change at most once, under a key of its own, and tells
        // its late answer; a key typed among a command's words would be silently set aside.
        if let change = command as? any AdminChange, change.change.idem != nil {
            let name = words[0]
            return .failure(ConsoleUsage(message: "--idem is for running a one-shot again with the key it printed, the way it "
                + "first ran: bq admin \(name) ... --idem KEY, or bq play --idem KEY \(name) ... (a key belongs to whoever sent "
                + "the change). A console needs none: it makes each change at most once by itself."))
        }
        return .success(command)
    }

    /// Runs an operation from a console line (`typed`, when known, as the person typed it): its
    /// help when asked for, the parse, a confirmation before a destructive one (`confirm` gets
    /// the question), the operation.
    /// `currentView`, when given, is the game as it stands, for not asking about what it
    /// already shows done; given only to a person at a terminal (from a pipe, the next line is
    /// the answer, asked or not, so the question always comes).
    static func runConsoleLine(_ words: [String], typed: String? = nil, context: AdminContext,
                               currentView: (() -> JSONValue?)? = nil, willPerform: (any AdminOperation) -> Void = { _ in },
                               confirm: (String) -> Bool) -> ConsoleLine {
        if let help = subcommandHelp(words) { return .output([help]) }
        let command: any ParsableCommand
        switch parseConsoleLine(words) {
        case .success(let parsed): command = parsed
        case .failure(let usage): return .usage(usage.message)
        }
        guard var operation = command as? any AdminOperation else { return .notAnOperation }
        operation.resolveIds(context)
        // The question repeats the line as typed when it is known, else quotes what had them.
        let asked = typed?.trimmingCharacters(in: .whitespaces)
            ?? words.map(quotedForTheConsole).joined(separator: " ")
        if operation.isDestructive {
            // Not asked about what the game shows cannot be done: the answer would not matter.
            if let view = currentView?(), let seen = operation.refusalFrom(view) {
                // Items are never removed, but one just added may not have reached the view yet,
                // and points just earned may not have either: what it lacks is asked of the
                // server; unanswered, the server decides.
                let lasting = seen.errorCode != .notFound && seen.errorCode != .insufficientPoints
                let refusal = lasting ? seen
                    : (try? context.client.request("state", [:], timeout: 2))?.result["state"].flatMap(operation.refusalFrom)
                if let refusal { return .refused(.refused(refusal)) }
            }
            if !confirm("\(asked): are you sure? [y/N] ") { return .cancelled }
        }
        willPerform(operation)
        do {
            return .output(try operation.perform(context))
        } catch {
            return .refused(error)
        }
    }
}

/// A signed-in admin connection and where to print.
struct AdminContext {
    let client: GameClient
    let terminal: Terminal
    /// The game signed in to (nil: the server's default). The public `characters` takes its own.
    let game: String?
    /// The version a change made, after its result: the organizer's console and one-shots match
    /// it with `log`; a player's screen has no use for it.
    var showsVersions = true
    /// The version the last change made here committed at: the organizer's `bq play` and the
    /// console hold their news until they know it.
    let lastCommit = LastCommit()
    /// The idempotency key of the change an operation makes, when its caller needs to know it:
    /// to hold news for it, or to print it for a run that ends without its answer.
    var changeKey: String?
    /// How long a change waits when the connection is down as it is made: a person at the
    /// game is not kept from typing for the whole timeout. Nil: the whole timeout.
    var offlineWait: Double?
    var style: Style { terminal.style }

    /// How long a request waits: `offlineWait` while the connection is down, when it is set.
    var requestTimeout: Double? {
        offlineWait.flatMap { client.isConnected ? nil : min($0, client.options.requestTimeout) }
    }

    /// The game as it stands: the subscribed view when this connection keeps one (it is what
    /// the person sees, and it is there while the server is away), else read from the server.
    func gameView() throws(ClientError) -> JSONValue {
        if let view = client.view { return view }
        return try client.fetchState(timeout: requestTimeout).view
    }

    /// The id of the member of `sections` that `typed` names in any case; as typed when none
    /// does. A character may be named by its name too (`unclaim Theo`).
    /// When the game cannot be read, the id goes as typed: the change then takes its usual
    /// path (sent, kept or answered late) rather than failing on a read it did not need.
    /// A name two characters share names neither.
    func id(_ typed: String, in sections: String...) -> String {
        guard let view = try? gameView() else { return typed }
        if let id = view.memberId(typed, in: sections) { return id }
        guard sections.contains("characters"), let characters = view["characters"]?.objectValue else { return typed }
        return characterId(typed, among: characters.map { (id: $0.key, name: $0.value["name"]?.stringValue) }) ?? typed
    }
}

/// A version written by the thread that runs an operation and read by it afterwards; a class
/// so that the context, a value, carries one for its operations to fill in.
final class LastCommit: @unchecked Sendable {
    private let lock = NSLock()
    private var committed: Int?  // Guarded by `lock`.

    var version: Int? { lock.withLock { committed } }

    func record(_ version: Int?) { lock.withLock { committed = version } }
}

/// An organizer operation: one-shot as a subcommand, or a line in `bq admin console`.
protocol AdminOperation: ParsableCommand {
    var connection: AdminConnectionOptions { get }
    /// Whether the console asks "are you sure?" first.
    var isDestructive: Bool { get }
    /// Does the operation and returns what to show.
    func perform(_ context: AdminContext) throws(ClientError) -> [String]
    /// The refusal the server would give because `view` shows the operation cannot be done (no
    /// such reward, or the reward already unlocked, say), if so: the console then says it
    /// without asking first.
    func refusalFrom(_ view: JSONValue) -> ServerRefusal?
    /// What the operation changes that its result lines tell: in the organizer's `bq play`,
    /// the same change is then not told again as news.
    var ownChange: OwnChange { get }
    /// Turns the ids given as typed (`C09`, `Theo`) into the game's own (`c09`, `theo`), before
    /// anything else looks at them: `refusalFrom` and `ownChange` match them with the view.
    mutating func resolveIds(_ context: AdminContext)
}

/// An operation that makes a change (not a screen such as `status`): one-shot, it may be given
/// the idempotency key to make it under.
protocol AdminChange: AdminOperation {
    var change: ChangeKeyOption { get }
}

/// `--idem`: a one-shot change made under a key of the caller's, so that a run whose answer
/// never came (exit 75) can be repeated without making the change twice.
struct ChangeKeyOption: ParsableArguments {
    @Option(help: ArgumentHelp("Make the change under this idempotency key (1 to 128 characters). A run left without an answer (exit 75) prints the key it used: the same command with it is made at most once.", valueName: "key"))
    var idem: String?

    func validate() throws { try validateIdempotencyKey(idem) }
}

extension AdminOperation {
    var isDestructive: Bool { false }
    func refusalFrom(_ view: JSONValue) -> ServerRefusal? { nil }
    var ownChange: OwnChange { OwnChange() }
    mutating func resolveIds(_ context: AdminContext) {}

    func run() throws {
        var operation = self
        // A one-shot change is made under a key it can print when its answer never comes.
        let key = (self as? any AdminChange).map { $0.change.idem ?? IdempotencyKey.make() }
        try connection.withContext { context in
            var context = context
            context.changeKey = key
            do throws(ClientError) {
                operation.resolveIds(context)
                for line in try operation.perform(context) { context.terminal.line(line) }
            } catch .unconfirmed(let op) {
                context.terminal.error(unknownOutcomeMessage(op, checkWith: "with `bq admin log --last 20`",
                                                             retry: key.map { "the same command with --idem \($0) added" }))
                throw ExitCode(Admin.exitUnconfirmed)
            } catch {
                context.terminal.error(error.description.terminalSafe)
                throw ExitCode(error.exitStatus)
            }
        }
    }
}

/// A word as it would be typed at the console: in double quotes, with `\` before a quote or a
/// backslash inside, when it has blanks or quotes (or is empty); else as it is.
func quotedForTheConsole(_ word: String) -> String {
    guard word.isEmpty || word.contains(where: { $0.isWhitespace || $0 == "\"" || $0 == "'" || $0 == "\\" }) else { return word }
    let escaped = word.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    return "\"" + escaped + "\""
}
