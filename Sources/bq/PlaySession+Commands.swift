import Client
import Foundation
import JSON

/// The commands a player types, from the one-word screens to changes with their retries.
extension PlaySession {
    func execute(_ words: [String]) -> Outcome {
        guard let typed = words.first?.lowercased(), let view = current else { return .failed }
        let name = Self.aliases[typed] ?? typed
        // The same list a one-shot is checked against before it connects (`oneShotProblem`).
        guard Self.playerCommands.contains(name) || Self.organizerTools.contains(name) else {
            refused(mode == .oneShot ? Self.unknownOneShotMessage(name) : "Unknown command \(name). Type help for the list.")
            return .usage
        }
        let rest = Array(words.dropFirst())
        // The birthday person's `dare` is explained whatever its words (`dare`).
        if !(name == "dare" && view.myRole == "birthday"),
           let problem = PlayCommandSyntax.problem(name: name, rest: rest, isOrganizerTool: Self.organizerTools.contains(name)) {
            return usage(problem)
        }
        switch name {
        case "help": say(helpLines(role: view.myRole))
        case "home": showScreen(view.home(rows: Terminal.rows))
        case "board": showScreen(view.board())
        case "rewards": showScreen(view.myRole == "birthday" ? view.rewardsList() : view.rewardsList() + [""] + view.rewardsGiven())
        case "timeline": showScreen(view.timelineLines())
        case "whoami": showScreen([view.whoami(), view.pointsLine()])
        case "points": showScreen([view.pointsLine(), view.badgeLine()])
        case "show":
            let id = view.itemId(rest[0])
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
            let id = view.itemId(rest[0])
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

    /// Why a one-shot's words are no command, or nil when they are one: known before the
    /// server is asked anything, so that a typo (an unknown command, a word too many, an
    /// option misspelt) signs nobody in and claims nothing.
    static func oneShotProblem(_ words: [String]) -> String? {
        guard let typed = words.first else { return nil }
        let name = aliases[typed.lowercased()] ?? typed.lowercased()
        guard playerCommands.contains(name) || organizerTools.contains(name) else { return unknownOneShotMessage(name) }
        let rest = Array(words.dropFirst()), isOrganizerTool = organizerTools.contains(name)
        if let problem = PlayCommandSyntax.problem(name: name, rest: rest, isOrganizerTool: isOrganizerTool) {
            return "Usage: " + problem
        }
        return isOrganizerTool ? Admin.usageProblem([name] + rest) : nil
    }

    /// `bq play --bogus whoami`: an option bq play does not have reaches here as a word.
    private static func unknownOneShotMessage(_ name: String) -> String {
        name.hasPrefix("-") ? "Unknown option \(name) (bq play --help lists them)."
            : "Unknown command \(name) (bq play help lists the commands)."
    }

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
            let wait = mode == .interactive ? client.personsChangeWait : nil
            let reply = try client.request(op, args, timeout: wait?.timeout, offline: wait?.offline)
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

    /// How long a change a person makes waits for the connection while it is down (a restart
    /// is over by then).
    static let offlineWait = 3.0
    /// How long a change a person makes waits for its answer while connected, before it is
    /// kept for its answer to show later and the person may type again.
    static let answerPatience = 10.0

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
            refused(command.map { keptChangeMessage($0, connected: client.isConnected) } ?? error.description)
            return .failed
        }
        let retry = mode == .oneShot ? key.map { "bq play --idem \($0) with the same command" } : nil
        refused(unknownOutcomeMessage(command ?? op, checkWith: "the timeline", retry: retry))
        return .unconfirmed
    }

    private func complete(_ words: [String]) -> Outcome {
        guard let completion = PlayCommandSyntax.completion(words) else { return usage(PlayCommandSyntax.completeUsage) }
        let id = current?.itemId(completion.challenge) ?? completion.challenge
        var option = completion.option
        let proof = completion.proof
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
                // Another role's command, as a friend's `complete` is: refused (1), not misused (64).
                refused(explanation)
                return .failed
            }
            say([explanation])
            return .ok
        }
        switch PlayCommandSyntax.dareAction(words) {
        case .failure(let usage): return self.usage(usage.text)
        case .success(.status): say(view.dareStatus())
        case .success(.save(let title, let description, let points)):
            return mutate("save_secret", ["title": .string(title), "description": .string(description),
                                          "points": .int(points)]) { reply in
                ["Saved your dare \(reply.result["challenge"]?.stringValue?.terminalSafe ?? "") as a draft. Type dare deliver when it is ready."]
            }
        case .success(.deliver):
            return mutate("deliver_secret", [:]) { reply in
                ["Delivered your dare \(reply.result["challenge"]?.stringValue?.terminalSafe ?? ""): it hides behind the ??? now."]
            }
        }
        return .ok
    }

    private func helpLines(role: String) -> [String] {
        var rows: [(command: String, what: String)] = [
            ("board", "the challenges"), ("rewards", "the rewards"), ("show <id>", "a challenge or reward in full"),
            ("timeline", "everything that happened"), ("whoami, points, home", "")]
        if role == "birthday" {
            rows += [("complete <id> [photo URL | text \"...\" | done] [--option a|b]",
                      "the proof is done when none is given; a 2-in-1 asks which option"),
                     ("discover", "reveal the hidden dares (???)"), ("unlock <reward>", "spend points on a reward")]
        } else {
            rows += [("dare", "your secret dare and its status"), ("dare save \"title\" \"description\" <25|50|75|100>", ""),
                     ("dare deliver", "send it (no more edits after)")]
        }
        var lines = [style.bold("Commands")] + helpTable(rows, columns: Terminal.columns)
        if role == "organizer" { lines += organizerHelpLines() }
        lines.append("  quit")
        // Prose is broken between words to the terminal's width, not by the terminal mid-word.
        var notes = ["Quote text with spaces in \"double\" or 'single' quotes; inside double quotes or none, a "
            + "backslash makes the next character plain (\\\" for a quote, \\\\ for a backslash)."]
        if Terminal.editsLines {
            notes.append("Left, Right, Home, End, Backspace, Delete, Ctrl-W (a word) and Ctrl-U (all before the cursor) "
                + "edit what you type; Up and Down bring back earlier commands; Ctrl-D on an empty line leaves. "
                + "News never lands in the middle of your typing.")
        }
        lines += notes.flatMap { wrapped($0, indent: "", columns: Terminal.columns) }.map(style.dim)
        return lines
    }
}
