import Client
import Foundation
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
    private let fileLock = NSLock()
    private var file: PlayDeviceFile
    /// Whether the main thread is running a command: its own prompt follows the result, so a
    /// live update printed meanwhile must not put one before it. Guarded by `commandLock`.
    private let commandLock = NSLock()
    private var runningCommand = false
    /// What changed for this person since they were last told; live once the home screen is shown.
    private let news: LiveNews
    private let lastSeen: LastSeenFile
    /// Signed in with the saved token: the same game as the view last seen here (a fresh claim
    /// may be on a new game on the same port). Main thread only.
    private var resumed = false

    /// `unconfirmed`: a change got no reply in time and may or may not have been made.
    /// `usage`: the command itself was wrong (unknown, or words missing or left over), so
    /// nothing was sent.
    enum Outcome { case ok, failed, usage, unconfirmed, quit }

    /// `--idem`: the key a one-shot's change is made under.
    private let givenChangeKey: String?

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
        news = LiveNews(style: terminal.style, terminal: terminal) { [lastSeen] version, view in
            lastSeen.save(version: version, view: view)
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
            // --json is for programs: the server's words as they are.
            terminal.error(json ? message : forPeople(message))
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

    private func updateFile(_ change: (inout PlayDeviceFile) -> Void) {
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

    func readInput(_ question: String) -> String? {
        terminal.readLine(prompt: question)
    }

    // MARK: Signing in

    /// How signing in ended: `refused` by the server (or by the person), or `noAnswer` from it.
    /// `left`: the person chose to leave at the picker (typed quit).
    enum SignIn { case signedIn, refused, noAnswer, left }

    /// Resumes with the saved token, else claims `character` (or asks which one, interactively).
    func signIn(character: String?, pin: String?) -> SignIn {
        tellEndedSession()
        // Under the lock: the reader thread rewrites the file when the server ends the session.
        fileLock.lock()
        let saved = file.token
        let savedCharacter = file.character
        fileLock.unlock()
        // Another character named while this file's session still stands: a switch.
        // `--character Mia` names the saved mia, as the picker takes it.
        let namesSaved = character?.lowercased() == savedCharacter?.lowercased()
        if let saved, character == nil || namesSaved, let resumed = resume(token: saved) { return resumed }
        let switchingFrom = saved != nil && character != nil && !namesSaved ? savedCharacter : nil
        return claim(character, pin: pin, savedCharacter: savedCharacter, switchingFrom: switchingFrom)
    }

    /// A session the server ended while this device was away (an unclaim, a takeover), said
    /// once to the person; a script's output is its commands' results.
    private func tellEndedSession() {
        fileLock.lock()
        let ended = mode == .interactive && !json ? file.sessionEnded.map { (reason: $0, character: file.character) } : nil
        fileLock.unlock()
        guard let ended else { return }
        let who = ended.character.map { " as \($0.terminalSafe)" } ?? ""
        say([style.yellow("Your last session\(who) was ended by the server: \(ended.reason.terminalSafe).")])
        updateFile { $0.sessionEnded = nil; $0.character = nil }
    }

    /// Signs in with the saved token; nil when the server no longer knows it, and a character
    /// must be claimed again.
    private func resume(token: String) -> SignIn? {
        do {
            let reply = try client.auth(token: token)
            // A greeting for a person; a script's output is its commands' results.
            if mode == .interactive { say([style.dim("Welcome back, \(greetingName(reply.result["character"]?.stringValue).terminalSafe).")]) }
            resumed = true
            return .signedIn
        } catch {
            // Only a refused token is a lost session: a server that does not answer, or is
            // full, may take it tomorrow.
            guard error.refusal?.errorCode == .unauthenticated else {
                refused(error.description)
                return error.refusal == nil ? .noAnswer : .refused
            }
            if mode == .interactive {
                say([style.yellow("Your saved session no longer works (\(error.description.terminalSafe)); choose again.")])
                updateFile { $0.token = nil; $0.character = nil }
            } else {
                refused(error.description)
                // The character stays named, so that the next one-shot still says which to claim.
                updateFile { $0.token = nil }
            }
            return nil
        }
    }

    /// Claims `character`, or the one picked at the terminal; a person is asked for a PIN, or to
    /// pick again, until a claim goes through or they leave.
    private func claim(_ character: String?, pin: String?, savedCharacter: String?, switchingFrom: String?) -> SignIn {
        fileLock.lock()
        let device = file.device
        fileLock.unlock()
        var choice = character
        var pinToTry = pin
        while true {
            if choice == nil {
                guard mode == .interactive else {
                    // The character this device last played, if its session has ended: the one
                    // to name (a script run as Sam was told to pass "--character mia").
                    if let last = savedCharacter {
                        terminal.error("The session as \(last.terminalSafe) saved here no longer works: "
                            + "claim again with --character \(last.terminalSafe) (bq play --character \(last.terminalSafe) ...).")
                    } else {
                        terminal.error("No saved session: pass --character ID (bq play --character mia ...).")
                    }
                    return .refused
                }
                switch pickCharacter() {
                case .character(let picked): choice = picked
                case .left: return .left
                case .failed: return .refused
                }
            }
            guard let id = choice else { return .refused }
            let error: ClientError
            do {
                let reply = try client.claim(character: id, device: device, pin: pinToTry, game: game)
                let token = reply.result["token"]?.stringValue
                updateFile { $0.token = token; $0.character = id }
                say([style.green("You are now \(greetingName(id).terminalSafe) (\(reply.result["role"]?.stringValue?.terminalSafe ?? "?")).")])
                if let last = switchingFrom, last != id {
                    // One device file holds one session: the next plain `bq play` resumes this one.
                    say([style.yellow("This device's file held \(last.terminalSafe)'s session and now holds \(id.terminalSafe)'s; "
                        + "bq play --character \(last.terminalSafe) switches back (this device still holds \(last.terminalSafe)).")])
                }
                return .signedIn
            } catch let refusal {
                error = refusal
            }
            switch nextStep(after: error, claiming: id, pin: pinToTry) {
            case .claim(let other, let pin):
                choice = other
                pinToTry = pin
            case .end(let outcome): return outcome
            }
        }
    }

    private enum ClaimStep {
        /// Try again: this character (nil: pick one) with this PIN.
        case claim(String?, pin: String?)
        case end(SignIn)
    }

    /// What follows a claim that did not go through: the id a name stands for, a PIN asked for
    /// at the terminal, another pick; or the end, with advice for a one-shot or a script.
    private func nextStep(after error: ClientError, claiming id: String, pin: String?) -> ClaimStep {
        // `--character Mia`: the name, or the id in capitals, of a character that exists.
        if error.refusal?.errorCode == .notFound, let characters = try? client.characters(game: game) {
            if let found = Self.character(id, in: characters), found != id { return .claim(found, pin: pin) }
            let sharing = characterIds(named: id, among: Self.idsAndNames(characters))
            if sharing.count > 1 {
                refused("\(sharing.count) characters are called \(id) (\(sharing.joined(separator: ", "))): "
                    + "name one by its id (--character \(sharing[0])).")
                return mode == .interactive ? .claim(nil, pin: nil) : .end(.refused)
            }
        }
        refused(error.description)
        guard let code = error.refusal?.errorCode else {
            if case .timedOut = error {
                // The claim may have been made: this device then holds the character.
                refused("The claim may have been made meanwhile; running the same command again from this device "
                    + "is safe (the device that holds a character claims it again, no PIN needed).")
            }
            return .end(.noAnswer)
        }
        if code == .alreadyClaimed {
            for other in PlayDeviceFile.others(besides: file.path, game: game) {
                refused("If \(id) is yours from an earlier start at another address or port, this device may be "
                    + "saved for it in \(other): start with --device-file \(other)")
            }
        }
        guard mode == .interactive else {
            if code == .alreadyClaimed {
                refused("To take \(id) over from the device that holds it, give its PIN with --pin, if the game gave it one; "
                    + "or the organizer can unclaim it.")
            } else if code == .forbidden, pin == nil {
                // A server with `claims_need_pin`.
                refused("Give \(greetingName(id).terminalSafe)'s PIN with --pin (the organizer has it).")
            }
            return .end(.refused)
        }
        if code == .alreadyClaimed || code == .forbidden {
            guard let answer = terminal.readSecretLine(asking: "PIN for \(id) (empty to choose another): ") else { return .end(.refused) }
            if !answer.isEmpty { return .claim(id, pin: answer) }
        }
        return .claim(nil, pin: nil)
    }

    /// The character's name, for a person ("Mia", not the id mia); the id when the list of
    /// characters cannot be had.
    private func greetingName(_ id: String?) -> String {
        guard let id else { return "player" }
        let characters = (try? client.characters(game: game)) ?? []
        return characters.first { $0["id"]?.stringValue == id }?["name"]?.stringValue ?? id
    }

    /// The id of the character `typed` names in the `characters` op's list (`characterId`).
    static func character(_ typed: String, in characters: [JSONValue]) -> String? {
        characterId(typed, among: idsAndNames(characters))
    }

    private static func idsAndNames(_ characters: [JSONValue]) -> [(id: String, name: String?)] {
        characters.compactMap { character in character["id"]?.stringValue.map { (id: $0, name: character["name"]?.stringValue) } }
    }

    private enum Pick { case character(String), left, failed }

    private func pickCharacter() -> Pick {
        let characters: [JSONValue]
        do {
            characters = try client.characters(game: game).map(\.terminalSafe)
        } catch {
            refused(error.description)
            return .failed
        }
        let free = characters.filter { $0["claimed"]?.boolValue != true }
        let offered = free.isEmpty ? characters : free
        terminal.line(style.bold(free.isEmpty ? "Every character is claimed; you can take one over with its PIN:" : "Who are you?"))
        for (index, character) in offered.enumerated() {
            let id = character["id"]?.stringValue ?? "?"
            let name = character["name"]?.stringValue ?? id
            terminal.line("  \(index + 1)) \(style.cyan(id)) \(name) (\(character["role"]?.stringValue ?? "?"))")
        }
        // A player whose character another device holds would otherwise not find it at all.
        let claimed = characters.filter { $0["claimed"]?.boolValue == true }.compactMap { $0["id"]?.stringValue }
        if !free.isEmpty, !claimed.isEmpty {
            terminal.line(style.dim("  Claimed on other devices: \(claimed.joined(separator: ", ")) (type its id to take it over with its PIN)"))
        }
        while true {
            // The end of the input is no choice: a script piped in without --character failed.
            guard let answer = readInput("Your pick (number or id, or quit): ")?.trimmingCharacters(in: .whitespaces) else { return .failed }
            if answer.isEmpty { continue }
            if ["quit", "q", "exit"].contains(answer.lowercased()) { return .left }
            if let number = Int(answer), offered.indices.contains(number - 1), let id = offered[number - 1]["id"]?.stringValue {
                return .character(id)
            }
            if let id = Self.character(answer, in: characters) { return .character(id) }
            terminal.line("No character \(answer): pick 1 to \(offered.count), or type an id.")
        }
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
        if let view = home.view { say(PlayView(json: view, style: style).home()) }
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
        let notices = ConnectionNotices()
        client.onEvent { [terminal, style, weak self] event in
            guard let self else { return }
            switch event {
            case .patch(_, let version, _, _, let view), .snapshot(let version, let view):
                // Nothing printed, nothing to prompt again for: a prompt per unseen change piled up.
                guard news.tell(version: version, view: view) else { return }
            case .bye, .disconnected, .reconnectRefused, .reconnected:
                if case .reconnected = event { news.reconnected() }
                guard let line = notices.line(for: event, style: style) else { return }
                terminal.line(line)
            case .lateReply(let op, let args, let result):
                terminal.line(lateReplyLine(op, args, result, style: style, showsVersion: false))
                // What an unlock shows when it goes through at once: the gift, and the badge when
                // this was the last one (kept out of the news as part of the change).
                if op == "unlock_reward", case .success = result, let id = args["reward"]?.stringValue,
                   let card = current?.show(id) {
                    for line in card { terminal.line(line) }
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
                terminal.line(style.red("You were signed out: \(reason). Start bq play again to choose a character."))
                updateFile { $0.token = nil; $0.sessionEnded = reason }
                // Nothing works without a session, and the main thread is blocked reading input.
                exit(3)
            default:
                return
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
        while let line = readInput(style.bold("> ")) {
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

    // MARK: Commands

    func execute(_ words: [String]) -> Outcome {
        guard let typed = words.first?.lowercased(), let view = current else { return .failed }
        let name = Self.aliases[typed] ?? typed
        // The same list a one-shot is checked against before it connects (`unknownOneShotCommand`).
        guard Self.playerCommands.contains(name) || Self.organizerTools.contains(name) else {
            refused(mode == .oneShot ? Self.unknownOneShotMessage(name) : "Unknown command \(name). Type help for the list.")
            return .usage
        }
        let rest = Array(words.dropFirst())
        // Among a player's words it would become part of a proof's text, or a usage error that
        // does not say where it goes (the organizer's tools say so themselves).
        if rest.contains(where: { $0 == "--idem" || Self.value(of: ["--idem"], in: $0) != nil }), !Self.organizerTools.contains(name) {
            return usage("--idem goes before the command, in a one-shot: bq play --idem KEY \(name) ...")
        }
        // A word too many is a mistake to point out, not to drop: `unlock r09 r10` must not
        // quietly spend points on r09 alone.
        if Self.wordlessCommands.contains(name), !rest.isEmpty {
            return usage("\(name) takes no arguments (got \(rest.joined(separator: " ")))")
        }
        switch name {
        case "help": say(helpLines(role: view.myRole))
        case "home": showScreen(view.home())
        case "board": showScreen(view.board())
        case "rewards": showScreen(view.myRole == "birthday" ? view.rewardsList() : view.rewardsList() + [""] + view.rewardsGiven())
        case "timeline": showScreen(view.timelineLines())
        case "whoami": showScreen([view.whoami(), view.pointsLine()])
        case "points": showScreen([view.pointsLine(), view.badgeLine()])
        case "show":
            guard rest.count == 1, let id = rest.first.map(view.itemId) else { return usage("show <challenge or reward id>") }
            guard let card = view.show(id) else {
                refused("Nothing called \(id) on your board or in the rewards.")
                return .failed
            }
            showScreen(card)
        case "complete": return complete(rest)
        case "discover":
            return mutate("discover_secrets", [:]) { reply in
                let found = reply.result["found"]?.intValue ?? 0
                return [found == 0 ? "No hidden dares right now." : "You found \(found) dare\(found == 1 ? "" : "s")! Type board to see."]
            }
        case "unlock":
            guard rest.count == 1, let id = rest.first.map(view.itemId) else { return usage("unlock <reward id> (one at a time)") }
            // The reply says so when this unlock brings the final badge: after the gift, not as
            // news before it.
            let badgeBefore = view.game["final_badge"]?.boolValue == true
            let own = OwnChange(entries: [("reward_unlocked", id)] + (badgeBefore ? [] : [("final_badge", nil)]), tellsPoints: true)
            return mutate("unlock_reward", ["reward": .string(id)], changing: own) { reply in
                let after = self.current ?? view
                var lines = ["Unlocked \(id)! Points: \(reply.result["points"]?.intValue ?? after.points) ✦"]
                if let card = after.show(id) { lines += card }
                if !badgeBefore, reply.result["final_badge"]?.boolValue == true {
                    lines.append(style.green(Self.lastGiftLine))
                }
                return lines
            }
        case "dare": return dare(rest, view: view)
        case "quit": return .quit
        default:
            // An organizer's tool (every other name has its case above).
            if view.myRole == "organizer", let outcome = organizerTool(words) { return outcome }
            // The server would refuse it; saying so beats "Unknown command" for a command
            // docs/playing.md lists.
            refused("\(name) is the organizer's: it works in their bq play, or in bq admin.")
            return .failed
        }
        return .ok
    }

    /// Shows a screen of the game. One shown while the connection is down is the game as it was
    /// last seen: it says so, so that nobody takes an old balance for today's.
    private func showScreen(_ lines: [String]) {
        say(lines)
        guard !client.isConnected else { return }
        say([style.yellow("Offline: this is the game as last seen (version \(client.version)); it catches up once reconnected.")])
    }

    /// Short and other names of the commands, each to its one name.
    private static let aliases = ["?": "help", "look": "home", "b": "board", "r": "rewards", "t": "timeline",
                                  "c": "complete", "u": "unlock", "exit": "quit", "q": "quit"]

    /// Every command a player may type, by its one name (the organizer's tools aside): what
    /// `execute` takes, and what a one-shot is checked against before it connects.
    private static let playerCommands: Set = ["help", "home", "board", "rewards", "timeline", "whoami", "points", "show",
                                              "complete", "discover", "unlock", "dare", "quit"]

    /// Why a one-shot's first word is no command, or nil when it is one: known before the
    /// server is asked anything, so that a typo signs nobody in (and claims nothing).
    static func unknownOneShotCommand(_ typed: String) -> String? {
        let name = aliases[typed.lowercased()] ?? typed.lowercased()
        guard !playerCommands.contains(name), !organizerTools.contains(name) else { return nil }
        return unknownOneShotMessage(name)
    }

    /// `bq play --bogus whoami`: an option bq play does not have reaches here as a word.
    private static func unknownOneShotMessage(_ name: String) -> String {
        name.hasPrefix("-") ? "Unknown option \(name) (bq play --help lists them)."
            : "Unknown command \(name) (bq play help lists the commands)."
    }

    /// The commands that take no words after their name.
    private static let wordlessCommands: Set = ["help", "home", "board", "rewards", "timeline", "whoami", "points",
                                                "discover", "quit"]

    private func usage(_ text: String) -> Outcome {
        refused("Usage: \(text)")
        return .usage
    }

    private func mutate(_ op: String, _ args: [String: JSONValue], changing own: OwnChange = OwnChange(),
                        success: (Reply) -> [String]) -> Outcome {
        // The key is made here to name the change for the news held until its answer, which
        // may come late (`lateReply`), after a reconnect.
        let key = newChangeKey()
        var args = args
        args["idem"] = .string(key)
        willChange(own, key: key)
        do {
            // Offline, a person is not kept from typing for the whole timeout: a quick reconnect
            // (a restart) still answers in that time; else the change is kept and sent later.
            let offline = mode == .interactive && !client.isConnected
            let reply = try client.request(op, args, timeout: offline ? min(Self.offlineWait, client.options.requestTimeout) : nil)
            var lines = success(reply)
            // Run again under `--idem`, a one-shot gets the first run's answer back.
            if reply.replayed, !lines.isEmpty { lines[0] += " (applied once, by an earlier send of this request)" }
            say(lines)
            // What others did meanwhile comes after the answer, with the balance as it is now.
            settled(key, committedAt: reply.version)
            return .ok
        } catch {
            // Kept to be sent again: the news waits for its late answer.
            if case .unconfirmed = error, mode == .interactive {} else { settled(key, committedAt: nil) }
            return failure(error, command: commandWords(op, args), key: key)
        }
    }

    /// The key of the next change: `--idem`'s for a one-shot given one. `sending`: the change
    /// goes now (false while it is not yet known to be a change: see `markChangeKeyUsed`).
    func newChangeKey(sending: Bool = true) -> String {
        if sending { markChangeKeyUsed() }
        return givenChangeKey ?? IdempotencyKey.make()
    }

    func markChangeKeyUsed() { givenChangeKeyUsed = true }

    /// Whether a change was sent (under `--idem`'s key, when given). Main thread only.
    private(set) var givenChangeKeyUsed = false

    /// How long a change sent while offline waits for the connection to come back.
    static let offlineWait = 3.0

    /// Shows why a command did not go through. A change with no reply is kept and re-sent while
    /// the game stays open, and its answer shows later; a one-shot or a script ends first, so
    /// then all that is known is that it may or may not have been made.
    /// `command`: the change as typed, for the message about a change with no answer; `key`:
    /// the key it was sent under, which a one-shot can be run again with.
    func failure(_ error: ClientError, command: String? = nil, key: String? = nil) -> Outcome {
        guard case .unconfirmed(let op) = error else {
            refused(error.description)
            return .failed
        }
        guard mode != .interactive else {
            refused(command.map(keptChangeMessage) ?? error.description)
            return .failed
        }
        let retry = mode == .oneShot ? key.map { "bq play --idem \($0) with the same command" } : nil
        refused(unknownOutcomeMessage(command ?? op, checkWith: "the timeline", retry: retry))
        return .unconfirmed
    }

    /// The value of `--flag=value` when `word` is one of `flags` written that way.
    private static func value(of flags: [String], in word: String) -> String? {
        for flag in flags where word.hasPrefix(flag + "=") { return String(word.dropFirst(flag.count + 1)) }
        return nil
    }

    private func complete(_ words: [String]) -> Outcome {
        let syntax = "complete <challenge> [photo URL | text \"...\" | done] [--option a|b]"
        guard let id = words.first.map({ current?.itemId($0) ?? $0 }) else { return usage(syntax) }
        var option: String?
        var proofWords: [String] = []
        var index = 1
        while index < words.count {
            if words[index] == "--option" || words[index] == "-o" {
                guard index + 1 < words.count else { return usage(syntax) }
                option = words[index + 1].lowercased()
                index += 2
            } else if let value = Self.value(of: ["--option", "-o"], in: words[index]) {
                // `--option=b`: a completion cannot be undone, so option A with "--option=b" in its
                // proof would be for good.
                option = value.lowercased()
                index += 1
            } else {
                proofWords.append(words[index])
                index += 1
            }
        }
        let proof: JSONValue
        switch proofWords.first?.lowercased() {
        case nil: proof = ["kind": "done"]
        case "done":
            guard proofWords.count == 1 else { return usage(syntax) }
            proof = ["kind": "done"]
        case "photo":
            guard proofWords.count == 2 else { return usage(syntax) }
            proof = ["kind": "photo", "url": .string(proofWords[1])]
        case "text":
            guard proofWords.count >= 2 else { return usage(syntax) }
            proof = ["kind": "text", "text": .string(proofWords.dropFirst().joined(separator: " "))]
        default: return usage(syntax)
        }
        // A completion cannot be undone: a person at a terminal says which option of a 2-in-1
        // they did rather than have option A recorded for them (a script or a one-shot gets A).
        if option == nil, mode == .interactive, Terminal.stdinIsTerminal, let challenge = current?.json["challenges"]?[id],
           challenge["status"] == "open", let titleB = challenge.optionB?["title"]?.stringValue {
            let titleA = challenge["title"]?.stringValue ?? id
            var question = "\(id) is 2-in-1: did you do a) “\(titleA)” or b) “\(titleB)”? [a/b] "
            // Another answer asks again: the person meant to answer, and a `b` typed next would
            // otherwise run as a command of its own.
            while true {
                let answer = readInput(question)?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
                if answer == "a" || answer == "b" {
                    option = answer
                    break
                }
                guard !answer.isEmpty else {
                    say(["Nothing completed: answer a or b (or add --option a or --option b)."])
                    return .ok
                }
                question = "Answer a or b (Enter completes nothing): [a/b] "
            }
        }
        var args: [String: JSONValue] = ["challenge": .string(id), "proof": proof]
        if let option { args["option"] = .string(option) }
        let own = OwnChange(entries: [("challenge_completed", id)], tellsPoints: true)
        return mutate("complete_challenge", args, changing: own) { reply in
            // The title of the option done: option B has its own.
            let challenge = self.current?.json["challenges"]?[id]
            let title = (option == "b" ? challenge?.optionB?["title"] : challenge?["title"])?.stringValue ?? id
            // A script or a one-shot that named no option of a 2-in-1 gets A: said outright,
            // since it cannot be undone.
            let chosenForThem = option == nil && challenge?.optionB != nil
                ? " as option A (no --option b was given)" : ""
            return ["Completed “\(title)”\(chosenForThem). Points: \(reply.result["points"]?.intValue ?? 0) ✦"]
        }
    }

    private func dare(_ words: [String], view: PlayView) -> Outcome {
        if view.myRole == "birthday" {
            let explanation = "Secret dares are written by your friends, for you: type discover to reveal the delivered ones."
            guard words.isEmpty else {
                refused(explanation)
                return .usage
            }
            say([explanation])
            return .ok
        }
        switch words.first?.lowercased() {
        case nil, "status":
            guard words.count <= 1 else { return usage("dare | dare save \"title\" \"description\" <points> | dare deliver") }
            say(view.dareStatus())
        case "save":
            guard words.count == 4, let points = Int(words[3]) else {
                return usage("dare save \"title\" \"description\" <25|50|75|100>")
            }
            return mutate("save_secret", ["title": .string(words[1]), "description": .string(words[2]),
                                          "points": .int(points)]) { reply in
                ["Saved your dare \(reply.result["challenge"]?.stringValue ?? "") as a draft. Type dare deliver when it is ready."]
            }
        case "deliver":
            guard words.count == 1 else { return usage("dare deliver (no more words)") }
            return mutate("deliver_secret", [:]) { reply in
                ["Delivered your dare \(reply.result["challenge"]?.stringValue ?? ""): it hides behind the ??? now."]
            }
        default: return usage("dare | dare save \"title\" \"description\" <points> | dare deliver")
        }
        return .ok
    }

    private func helpLines(role: String) -> [String] {
        var lines = [style.bold("Commands"),
                     "  board                      the challenges",
                     "  rewards                    the rewards",
                     "  show <id>                  a challenge or reward in full",
                     "  timeline                   everything that happened",
                     "  whoami, points, home"]
        if role == "birthday" {
            lines += ["  complete <id> [photo URL | text \"...\" | done] [--option a|b]"]
            lines += wrapped("the proof is done when none is given; a 2-in-1 asks which option",
                             indent: String(repeating: " ", count: 29), columns: Terminal.columns)
            lines += ["  discover                   reveal the hidden dares (???)",
                      "  unlock <reward>            spend points on a reward"]
        } else {
            lines += ["  dare                       your secret dare and its status",
                      "  dare save \"title\" \"description\" <25|50|75|100>",
                      "  dare deliver               send it (no more edits after)"]
        }
        if role == "organizer" { lines += organizerHelpLines() }
        lines.append("  quit")
        // Prose is broken between words to the terminal's width, not by the terminal mid-word.
        var notes = ["Quote text with spaces in \"double\" or 'single' quotes; inside double quotes or none, a "
            + "backslash makes the next character plain (\\\" for a quote, \\\\ for a backslash)."]
        if Terminal.editsLines {
            notes.append("Backspace, Ctrl-U (the line) and Ctrl-W (a word) edit what you type; Ctrl-D on an "
                + "empty line leaves. News never lands in the middle of your typing.")
        }
        lines += notes.flatMap { wrapped($0, indent: "", columns: Terminal.columns) }.map(style.dim)
        return lines
    }
}
