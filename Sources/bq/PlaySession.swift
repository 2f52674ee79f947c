import Client
import Foundation
import POSIXSupport
import JSON

/// One player's run of `bq play`: signing in, the screens, and the commands.
final class PlaySession: @unchecked Sendable {
    static let lastGiftLine = "🏅 That was the last gift: the final badge is unlocked!"

    let client: GameClient
    let terminal: Terminal
    let mode: PlayMode
    let json: Bool
    let game: String?
    /// Touched by the main thread, and by the reader thread only when the session is lost.
    let fileLock = NSLock()
    var file: PlayDeviceFile
    /// Whether the main thread is running a command: its own prompt follows the result, so a
    /// live update printed meanwhile must not put one before it. Guarded by `commandLock`.
    private let commandLock = NSLock()
    private var runningCommand = false
    /// What changed for this person since they were last told; live once the home screen is shown.
    private let news: LiveNews
    private let lastSeen: LastSeenFile
    /// Signed in with the saved token: the same game as the view last seen here (a fresh claim
    /// may be on a new game on the same port). Main thread only.
    var resumed = false

    /// `unconfirmed`: a change got no reply in time and may or may not have been made.
    /// `usage`: the command itself was wrong (unknown, or words missing or left over), so
    /// nothing was sent.
    enum Outcome { case ok, failed, usage, unconfirmed, quit }

    /// `--idem`: the key a one-shot's change is made under.
    let givenChangeKey: String?
    /// Whether a change was sent (under `--idem`'s key, when given). Main thread only.
    var givenChangeKeyUsed = false
    /// The line of a `--script` being run, from 1, named in its refusals. Main thread only.
    private var scriptLine: Int?

    init(client: GameClient, terminal: Terminal, mode: PlayMode, json: Bool, game: String?, file: PlayDeviceFile,
         changeKey: String? = nil) {
        givenChangeKey = changeKey
        self.client = client
        self.terminal = terminal
        self.mode = mode
        self.json = json
        self.game = game
        self.file = file
        lastSeen = LastSeenFile(devicePath: file.path)
        news = LiveNews(style: terminal.style, terminal: terminal) { [lastSeen] version, view, wentBack in
            lastSeen.save(version: version, view: view, replacingNewer: wentBack)
        }
    }

    var style: Style { terminal.style }
    var current: PlayView? { client.view.map { PlayView(json: $0, style: style) } }

    func say(_ lines: [String]) {
        guard !json else { return }
        for line in lines { terminal.line(line) }
    }

    func refused(_ message: String) {
        let message = message.terminalSafe
        if mode == .interactive && !json {
            terminal.line(style.red("✗ ") + forPeople(message))
        } else {
            // --json is for programs: the server's words as they are. A script's author is
            // told which of its lines.
            let place = scriptLine.map { "line \($0): " } ?? ""
            terminal.error(place + (json ? message : forPeople(message)))
        }
    }

    private var isRunningCommand: Bool {
        commandLock.lock()
        defer { commandLock.unlock() }
        return runningCommand
    }

    private func setRunningCommand(_ running: Bool) {
        commandLock.lock()
        runningCommand = running
        commandLock.unlock()
    }

    /// Holds news from before a change of the person's own is sent (the patch with it comes
    /// before the reply) until `settled` says what it committed; `key` names it.
    func willChange(_ change: OwnChange, key: String) { news.willChange(change, key: key) }

    func settled(_ key: String, committedAt version: Int?) { news.settled(key, committedAt: version) }

    func updateFile(_ change: (inout PlayDeviceFile) -> Void) {
        fileLock.lock()
        defer { fileLock.unlock() }
        change(&file)
        do {
            try file.save()
        } catch {
            // The session still works; only the next start would have to claim again.
            terminal.error("Could not save the session to \(file.path) (\(error)): "
                + "the next bq play here will have to claim again.")
        }
    }

    /// `command`: the line is a command, for Up to bring back.
    func readInput(_ question: String, command: Bool = false) -> String? {
        // Nobody reads the answers any more (`bq play --script ... | head -1`): the end.
        if command && TerminalIO.standardOutputIsClosed { return nil }
        return terminal.readLine(prompt: question, remembered: command)
    }

    // MARK: Running

    /// How subscribing ended: a `noReply` is the server's silence (exit 75), a `noAnswer` a
    /// connection that failed otherwise (exit 2, as at sign-in); neither is a refusal.
    enum Start { case started, refused, noReply, noAnswer }

    /// Subscribes, shows the home screen and, interactively, starts printing live updates.
    func start() -> Start {
        // In place before the subscribe: a connection lost (and found again) in the moment
        // before the home screen is news like any other, and was told to no one.
        if mode == .interactive && !json { observe() }
        do {
            try client.subscribe()
        } catch {
            refused(error.description)
            if case .timedOut = error { return .noReply }
            return error.refusal == nil ? .noAnswer : .refused
        }
        guard mode == .interactive else { return .started }
        let home = client.mirrorSnapshot
        if let view = home.view { say(PlayView(json: view, style: style).home(rows: Terminal.rows)) }
        guard !json else { return .started }
        if resumed, let view = home.view, let character = view["me"]?["character"]?.stringValue,
           let seen = lastSeen.load(character: character), seen.version < home.version,
           Self.timeline(of: seen.view, begins: view) {
            news.goLive(sinceLastSeen: seen.version, view: seen.view)
        } else {
            news.goLive(version: home.version, view: home.view)
        }
        // What changed while the home screen was being printed would go untold (and, from
        // the view last seen here, what changed since then).
        let now = client.mirrorSnapshot
        if let view = now.view { _ = news.tell(version: now.version, view: view) }
        return .started
    }

    /// Whether `later`'s timeline goes on from `earlier`'s: the timeline only grows, so a view
    /// whose timeline does not is of another game.
    static func timeline(of earlier: JSONValue, begins later: JSONValue) -> Bool {
        let before = earlier["timeline"]?.arrayValue ?? [], after = later["timeline"]?.arrayValue ?? []
        return before.count <= after.count && zip(before, after).allSatisfy { $0 == $1 }
    }

    private func observe() {
        client.onEvent { [terminal, style, weak self] event in
            guard let self else { return }
            switch event {
            case .lateReply(let op, let args, let result):
                _ = news.caughtUp()
                terminal.line(lateReplyLine(op, args, result, style: style, showsVersion: false))
                // What an unlock shows when it goes through at once: the gift, and the badge when
                // this was the last one (kept out of the news as part of the change).
                if op == "unlock_reward", case .success = result, let id = args["reward"]?.stringValue,
                   let card = current?.show(id) {
                    terminal.lines(card)
                }
                if unlockBroughtFinalBadge(op, args, result, view: client.view) {
                    terminal.line(style.green(Self.lastGiftLine))
                }
                // The news held while it was on its way, less the change itself.
                if let key = args["idem"]?.stringValue {
                    news.settled(key, committedAt: (try? result.get())?.version)
                }
            case .sessionLost(let reason):
                // No prompt under this line: nothing typed there will be read.
                terminal.endInput()
                terminal.line(style.red("You were signed out: \(reason.terminalSafe). Start bq play again to choose a character."))
                updateFile { $0.token = nil; $0.sessionEnded = reason }
                // Nothing works without a session, and the main thread is blocked reading input.
                exit(3)
            default:
                // Views and the connection's news; nothing printed, nothing to prompt again for
                // (a prompt per unseen change piled up).
                guard news.take(event) == true else { return }
            }
            // The update printed over the prompt a person was typing at: show it again (unless a
            // command is running, whose result and then a prompt come next, or the home screen
            // and its first prompt are still to come).
            if news.isLive && !isRunningCommand { terminal.reprompt(style.bold("> ")) }
        }
    }

    /// Reads commands until quit or the end of input. In script mode: `failed` when any
    /// command failed, `unconfirmed` when any change's outcome is unknown (which says more).
    func readCommands() -> Outcome {
        var worst = Outcome.ok
        if mode == .interactive {
            terminal.whenInterrupted { [client, terminal] in
                _ = mayLeaveKeptChanges(of: client, terminal: terminal, asking: false, check: "the board, the points and the timeline")
            }
        }
        while let line = readInput(style.bold("> "), command: true) {
            if mode == .script { scriptLine = (scriptLine ?? 0) + 1 }
            guard let words = splitCommandLine(line) else {
                refused("A quote is not closed: nothing was sent.")
                if worst == .ok { worst = .failed }
                continue
            }
            if words.isEmpty { continue }
            setRunningCommand(true)
            let outcome = execute(words)
            setRunningCommand(false)
            switch outcome {
            case .quit:
                guard mayLeave() else { continue }
                return mode == .interactive ? .ok : worst
            case .failed, .usage: if worst == .ok { worst = .failed }
            case .unconfirmed: worst = .unconfirmed
            case .ok: break
            }
        }
        if mode == .interactive { _ = mayLeave(asking: false) }
        return mode == .interactive ? .ok : worst
    }

    /// A one-shot or a script has said what it left unconfirmed already.
    private func mayLeave(asking: Bool = true) -> Bool {
        mode != .interactive || mayLeaveKeptChanges(of: client, terminal: terminal, asking: asking, check: "the board, the points and the timeline")
    }
}
