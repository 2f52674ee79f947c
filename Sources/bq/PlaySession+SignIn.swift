import Client
import Foundation
import JSON

/// Signing in: the saved token, else a claim, with the picker and the PIN when they are needed.
extension PlaySession {
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
            // A token signs into the game it was claimed in, whatever this run asked for: a
            // device file named for one game and used for another would play in the first.
            if let landedRaw = reply.result["game"]?.stringValue, let wanted = game ?? client.serverDefaultGame, landedRaw != wanted {
                let landed = landedRaw.terminalSafe
                refused("\(file.path) holds a session in game \(landed), not \(wanted.terminalSafe) (the server's default game may have "
                    + "changed): to play \(landed), start with --game \(landed) --device-file \(file.path); to play \(wanted.terminalSafe), "
                    + "name another file with --device-file")
                return .refused
            }
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
                        // This game's ids, not an example from another game's seed.
                        let ids = ((try? client.characters(game: game)) ?? []).compactMap { $0["id"]?.stringValue }
                        let example = ids.first ?? "ID"
                        terminal.error("No saved session: pass --character ID (bq play --character \(example.terminalSafe) ...)"
                            + (ids.isEmpty ? "." : "; the characters: \(ids.joined(separator: ", ").terminalSafe)."))
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
            guard let answer = terminal.readSecretLine(asking: "PIN for \(id.terminalSafe) (empty to choose another): ") else { return .end(.refused) }
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
            if let number = Int(answer), number >= 1, offered.indices.contains(number - 1),
               let id = offered[number - 1]["id"]?.stringValue {
                return .character(id)
            }
            if let id = Self.character(answer, in: characters) { return .character(id) }
            terminal.line("No character \(answer): pick 1 to \(offered.count), or type an id.")
        }
    }
}
