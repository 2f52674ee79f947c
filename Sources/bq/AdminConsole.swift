import ArgumentParser
import Client
import Foundation
import POSIXSupport
import JSON

struct AdminConsole: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "console",
        abstract: "An interactive console: the same operations, with confirmation before destructive ones.")
    @OptionGroup var connection: AdminConnectionOptions

    func run() throws {
        try connection.withContext(converse)
    }

    /// The operations, with what each does beside it, fitted to the screen: the console's own
    /// list, without the options that only make sense on a command line (where the server is,
    /// the key) or the screens it cannot run.
    static func consoleHelp(columns: Int?) -> String {
        let operations = Admin.configuration.subcommands.filter { $0 is any AdminOperation.Type }
        let rows = operations.map { (command: $0.configuration.commandName ?? "", what: $0.configuration.abstract) }
        let width = rows.map(\.command.terminalColumns).max() ?? 0
        let heading = wrapped("Commands (help <command> for its options; quit to leave):", indent: "", columns: columns)
        return (heading + helpTable(rows, columns: columns, column: width + 4)).joined(separator: "\n")
    }

    /// Where the console points an organizer to see whether a change was made.
    private static let checkTheLog = "the log (log --last 20)"

    private func converse(_ context: AdminContext) {
        let terminal = context.terminal
        let greeting = wrapped("Signed in as admin. Type help for the commands, quit to leave.", indent: "", columns: Terminal.columns)
        terminal.line(greeting.joined(separator: "\n"))
        let prompt = terminal.style.bold("admin> ")
        let turn = ConsoleTurn()
        terminal.whenInterrupted { [client = context.client] in
            _ = mayLeaveKeptChanges(of: client, terminal: terminal, asking: false, check: Self.checkTheLog)
        }
        let news = LiveNews(style: terminal.style, terminal: terminal)
        follow(context, news: news, turn: turn, prompt: prompt)
        while true {
            turn.waitForInput { if !Terminal.editsLines { terminal.prompt(prompt) } }
            // Nobody reads the answers any more (`... | bq admin console | head -1`): the end.
            guard !TerminalIO.standardOutputIsClosed,
                  let line = terminal.readLine(prompt: prompt, showPrompt: false, remembered: true) else {
                _ = mayLeaveKeptChanges(of: context.client, terminal: terminal, asking: false, check: Self.checkTheLog)
                return
            }
            turn.commandStarted()
            guard let words = splitCommandLine(line) else {
                terminal.line("A quote is not closed: nothing was sent.")
                continue
            }
            guard let first = words.first else { continue }
            switch first {
            case "quit", "exit":
                guard mayLeaveKeptChanges(of: context.client, terminal: terminal, asking: true, check: Self.checkTheLog) else { continue }
                return
            case "help":
                // `help adjust-points` is that command's help; `help` alone lists what works here.
                terminal.line(words.count > 1 ? Admin.subcommandHelp([words[1], "--help"]) ?? "Unknown command \(words[1])."
                                              : Self.consoleHelp(columns: Terminal.columns))
                continue
            default: break
            }
            let known = Admin.configuration.subcommands.compactMap { $0.configuration.commandName }
            guard known.contains(first) else {
                terminal.line("Unknown command \(first). Type help for the list.")
                continue
            }
            // The game as followed live (a quick look when it is not: a slow server is asked anyway).
            let currentView: (() -> JSONValue?)? = Terminal.stdinIsTerminal
                ? { context.client.view ?? (try? context.client.request("state", [:], timeout: 2))?.result["state"] } : nil
            let key = IdempotencyKey.make()
            var context = context
            context.changeKey = key
            context.lastCommit.record(nil)
            if Terminal.stdinIsTerminal { context.offlineWait = PlaySession.offlineWait }
            let outcome = Admin.runConsoleLine(words, typed: line, context: context, currentView: currentView,
                                               willPerform: { news.willChange($0.ownChange, key: key) }, confirm: terminal.confirm)
            switch outcome {
            case .output(let lines): for out in lines { terminal.line(out) }
            // Kept and sent again while the console stays open; a script ends at its last line,
            // so all it can be told is that the change may or may not have been made.
            case .refused(.unconfirmed(let op)):
                let typed = line.trimmingCharacters(in: .whitespaces)
                terminal.line(terminal.style.red("✗ ") + (Terminal.stdinIsTerminal ? keptChangeMessage(typed, connected: context.client.isConnected)
                                                          : unknownOutcomeMessage(typed.isEmpty ? op : typed, checkWith: Self.checkTheLog)))
            case .refused(let error): terminal.line(terminal.style.red("✗ ") + error.description.terminalSafe)
            case .usage(let message): terminal.line(message)
            case .cancelled: terminal.line("Cancelled.")
            case .notAnOperation: terminal.line("\(first) is not available inside the console.")
            }
            // After its result: what others did meanwhile comes next, less this change; a change
            // kept to be sent again holds the news until its late answer.
            if case .refused(.unconfirmed) = outcome, Terminal.stdinIsTerminal { continue }
            news.settled(key, committedAt: context.lastCommit.version)
        }
    }

    /// Prints what happens to the game while the organizer types: others' changes as news,
    /// late answers, the connection's comings and goings. Only at a terminal does the console
    /// subscribe: a script reads only the answers to its own lines, in order.
    private func follow(_ context: AdminContext, news: LiveNews, turn: ConsoleTurn, prompt: String) {
        let terminal = context.terminal
        context.client.onEvent { event in
            switch event {
            case .lateReply(let op, let args, let result):
                // The news of views that came before it first, in the order it happened.
                _ = news.caughtUp()
                terminal.line(lateReplyLine(op, args, result, style: terminal.style, showsVersion: true))
                if unlockBroughtFinalBadge(op, args, result, view: context.client.view) {
                    terminal.line(terminal.style.green("🏅 The final badge unlocked with it."))
                }
                if let key = args["idem"]?.stringValue { news.settled(key, committedAt: (try? result.get())?.version) }
            default:
                // Views and the connection's news; any other event ends a burst too (the news of
                // views that came before it first, in the order it happened).
                guard news.take(event) ?? news.caughtUp() else { return }
            }
            // Printed over the prompt the organizer was typing at: show it again (a command
            // that is running prints its result and then a prompt of its own).
            turn.whileWaiting { terminal.reprompt(prompt) }
        }
        guard Terminal.stdinIsTerminal else { return }
        do {
            try context.client.subscribe()
            let now = context.client.mirrorSnapshot
            news.goLive(version: now.version, view: now.view)
        } catch {
            terminal.line(terminal.style.dim("No live news (\(error.description.terminalSafe)): the game shows when asked."))
        }
    }
}

/// Whether the console waits for the organizer's input or runs a command, for what prints a
/// prompt: the flag and the prompt change together, under one lock, so a prompt is never
/// printed twice nor missed.
private final class ConsoleTurn: @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by `lock`.
    private var waiting = false

    func waitForInput(_ prompt: () -> Void) {
        lock.withLock {
            waiting = true
            prompt()
        }
    }

    func commandStarted() { lock.withLock { waiting = false } }

    func whileWaiting(_ body: () -> Void) {
        lock.withLock { if waiting { body() } }
    }
}
