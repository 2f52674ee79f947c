import Client
import JSON

/// The organizer plays from `bq play` like everyone else, and runs the game from there too: the
/// server lets the organizer's character do every organizer operation, so the operations of
/// `bq admin` work here with the player's own session, no admin key needed.
extension PlaySession {
    /// The `bq admin` subcommands that are operations on the game (not its screens).
    static let organizerTools = ["force-complete", "force-unlock", "final-badge", "unclaim", "adjust-points",
                                 "set-day", "add-challenge", "edit-challenge", "add-reward", "edit-reward", "log"]

    /// Runs an organizer tool; nil when `words` names none.
    func organizerTool(_ words: [String]) -> Outcome? {
        guard let name = words.first?.lowercased(), Self.organizerTools.contains(name) else { return nil }
        // The game as this session shows it: subscribed, it needs no request.
        let currentView: (() -> JSONValue?)? = mode == .interactive && Terminal.stdinIsTerminal
            ? { [client] in client.view } : nil
        // `log` makes no change: the key counts as used once an operation that makes one goes ahead.
        let key = newChangeKey(sending: false)
        var context = AdminContext(client: client, terminal: terminal, game: game, showsVersions: false)
        context.changeKey = key
        if mode == .interactive { context.offlineWait = Self.offlineWait }
        let outcome = Admin.runConsoleLine([name] + words.dropFirst(), context: context, currentView: currentView,
                                           willPerform: { operation in
                                               if operation is any AdminChange { markChangeKeyUsed() }
                                               willChange(operation.ownChange, key: key)
                                           }) {
            // A one-shot or a script means what it says; a person at the game is asked.
            mode != .interactive || terminal.confirm($0)
        }
        // After its result: what others did meanwhile comes next, less this change; a change
        // kept to be sent again holds the news until its late answer.
        defer {
            if case .refused(.unconfirmed) = outcome, mode == .interactive {} else {
                settled(key, committedAt: context.lastCommit.version)
            }
        }
        switch outcome {
        case .output(let lines):
            say(lines)
            return .ok
        case .refused(let error): return failure(error, command: words.map(quotedForTheConsole).joined(separator: " "), key: key)
        case .usage(let message):
            refused(message)
            return .usage
        case .cancelled:
            say(["Cancelled."])
            return .ok
        case .notAnOperation: return nil
        }
    }

    func organizerHelpLines() -> [String] {
        [style.bold("Organizer")] + helpTable([
            ("force-complete <challenge>, force-unlock <reward> [--no-deduct], final-badge", ""),
            ("adjust-points <delta> --reason \"...\", set-day <day>, unclaim <character>", ""),
            ("add-challenge, edit-challenge, add-reward, edit-reward (<command> --help for their options)", ""),
            ("log", "the event log")], columns: Terminal.columns)
    }
}
