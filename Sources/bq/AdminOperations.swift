import ArgumentParser
import Client
import Domain
import Foundation
import JSON

/// The result line of a mutation: what changed and the version it committed.
extension AdminContext {
    /// Makes a change, under the context's key when it has one (so that a late answer can be
    /// matched with what was held for it); a person at the game (`offlineWait` set) waits only
    /// as long as `personsChangeWait` says, then the change is kept for its answer to show later.
    func change(_ op: String, _ args: [String: JSONValue] = [:]) throws(ClientError) -> Reply {
        var args = args
        if let changeKey { args["idem"] = .string(changeKey) }
        let wait = offlineWait == nil ? nil : client.personsChangeWait
        return try client.request(op, args, timeout: wait?.timeout, offline: wait?.offline)
    }

    /// What a change that was made says. A replay is the answer to an earlier send of this very
    /// request (after a lost connection), not a second change.
    /// `text` may name ids the server gave (a character found by its name, say): escaped as
    /// any text from the server.
    func done(_ text: String, _ reply: Reply) -> [String] {
        lastCommit.record(reply.version)
        return [text.terminalSafe + (reply.replayed ? " (applied once, by an earlier send of this request)" : "")
            + (showsVersions ? " [version \(reply.version ?? 0)]" : "")]
    }
}

struct AdminForceComplete: AdminChange {
    static let configuration = CommandConfiguration(commandName: "force-complete",
                                                    abstract: "Complete a challenge without proof (marked forced).")
    @OptionGroup var connection: AdminConnectionOptions
    @OptionGroup var change: ChangeKeyOption
    @Argument(help: "Challenge id, e.g. c07.") var challenge: String
    var isDestructive: Bool { true }
    // Marking an undiscovered dare done also brings it out.
    var ownChange: OwnChange {
        OwnChange(entries: [("challenge_completed", challenge), ("secret_discovered", challenge)], tellsPoints: true)
    }

    mutating func resolveIds(_ context: AdminContext) { challenge = context.id(challenge, in: "challenges") }

    func refusalFrom(_ view: JSONValue) -> ServerRefusal? {
        guard let found = view["challenges"]?[challenge] else {
            return ServerRefusal(op: "force_complete", code: "not_found", message: "No challenge \"\(challenge)\"")
        }
        guard found["status"] == "completed" else { return nil }
        return ServerRefusal(op: "force_complete", code: "already_completed",
                             message: "\"\(found["title"]?.stringValue ?? challenge)\" is already completed")
    }

    func perform(_ context: AdminContext) throws(ClientError) -> [String] {
        let reply = try context.change("force_complete", ["challenge": .string(challenge)])
        return context.done("Completed \(challenge). Points: \(reply.result["points"]?.intValue ?? 0) ✦.", reply)
    }
}

struct AdminForceUnlock: AdminChange {
    static let configuration = CommandConfiguration(commandName: "force-unlock",
                                                    abstract: "Unlock a reward, deducting its cost unless --no-deduct.")
    @OptionGroup var connection: AdminConnectionOptions
    @OptionGroup var change: ChangeKeyOption
    @Argument(help: "Reward id, e.g. r03.") var reward: String
    @Flag(name: .customLong("no-deduct"), help: "Unlock for free.") var noDeduct = false
    var isDestructive: Bool { true }
    var ownChange: OwnChange { OwnChange(entries: [("reward_unlocked", reward), ("final_badge", nil)], tellsPoints: true) }

    mutating func resolveIds(_ context: AdminContext) { reward = context.id(reward, in: "rewards") }

    func refusalFrom(_ view: JSONValue) -> ServerRefusal? {
        guard let found = view["rewards"]?[reward] else {
            return ServerRefusal(op: "force_unlock", code: "not_found", message: "No reward \"\(reward)\"")
        }
        guard found["unlocked"] == true else { return nil }
        return ServerRefusal(op: "force_unlock", code: "already_unlocked",
                             message: "\"\(found["title"]?.stringValue ?? reward)\" is already unlocked")
    }

    func perform(_ context: AdminContext) throws(ClientError) -> [String] {
        // The reply says whether the badge is unlocked, not whether this unlock did it: an
        // organizer who triggered it earlier must not read that the last gift just did.
        let badgeBefore = try context.gameView()["game"]?["final_badge"]?.boolValue == true
        let reply: Reply
        do {
            reply = try context.change("force_unlock", ["reward": .string(reward), "deduct": .bool(!noDeduct)])
        } catch .refused(let refusal) where refusal.errorCode == .insufficientPoints && !noDeduct {
            throw .refused(ServerRefusal(op: refusal.op, code: refusal.code,
                                         message: refusal.message + " (force-unlock \(reward) --no-deduct unlocks it for free)"))
        }
        let badge = !badgeBefore && reply.result["final_badge"]?.boolValue == true ? " The final badge unlocked with it." : ""
        return context.done("Unlocked \(reward)\(noDeduct ? " for free" : ""). Points: \(reply.result["points"]?.intValue ?? 0) ✦.\(badge)", reply)
    }
}

struct AdminFinalBadge: AdminChange {
    static let configuration = CommandConfiguration(commandName: "final-badge", abstract: "Trigger the final badge now.")
    @OptionGroup var connection: AdminConnectionOptions
    @OptionGroup var change: ChangeKeyOption
    var isDestructive: Bool { true }
    var ownChange: OwnChange { OwnChange(entries: [("final_badge", nil)]) }

    func refusalFrom(_ view: JSONValue) -> ServerRefusal? {
        guard view["game"]?["final_badge"] == true else { return nil }
        return ServerRefusal(op: "trigger_final_badge", code: "already_unlocked", message: "The final badge is already unlocked")
    }

    func perform(_ context: AdminContext) throws(ClientError) -> [String] {
        context.done("The final badge is unlocked.", try context.change("trigger_final_badge"))
    }
}

struct AdminUnclaim: AdminChange {
    static let configuration = CommandConfiguration(commandName: "unclaim",
                                                    abstract: "Free a character: its device is signed out at once.")
    @OptionGroup var connection: AdminConnectionOptions
    @OptionGroup var change: ChangeKeyOption
    @Argument(help: "Character id, e.g. theo.") var character: String
    var isDestructive: Bool { true }
    var ownChange: OwnChange { OwnChange(unclaims: character) }

    mutating func resolveIds(_ context: AdminContext) { character = context.id(character, in: "characters") }

    func refusalFrom(_ view: JSONValue) -> ServerRefusal? {
        guard view["characters"]?[character] == nil else { return nil }
        return ServerRefusal(op: "unclaim", code: "not_found", message: "No character \"\(character)\"")
    }

    func perform(_ context: AdminContext) throws(ClientError) -> [String] {
        let wasClaimed = (try? context.gameView())?["characters"]?[character]?["claimed"]?.boolValue
        let reply = try context.change("unclaim", ["character": .string(character)])
        // Unclaiming a free character changes nothing: said so, not as if it freed someone. A
        // replay answers an earlier send, which may be what freed it.
        let freedNow = wasClaimed != false || reply.replayed
        return context.done(freedNow ? "\(character) is free to claim again." : "\(character) was not claimed: nothing changed.", reply)
    }
}

struct AdminAdjustPoints: AdminChange {
    static let configuration = CommandConfiguration(commandName: "adjust-points",
                                                    abstract: "Add (or, negative, take away) points, with a reason.")
    @OptionGroup var connection: AdminConnectionOptions
    @OptionGroup var change: ChangeKeyOption
    // Free text and numbers take the next word whatever it starts with: "-5 for cheating" is
    // a reason, and -5 is a value to refuse with the rule's own words, not a missing one.
    @Option(parsing: .unconditional, help: "Why, for the audit trail.") var reason: String
    // Captured raw so a negative amount ("-50") is not mistaken for an option.
    @Argument(parsing: .allUnrecognized, help: "The change, e.g. 50 or -20.") var amount: [String] = []

    /// The words given for the amount; a "--" that ends the options is not one of them.
    private var words: [String] { amount.filter { $0 != "--" } }
    var delta: Int? { words.count == 1 ? Int(words[0]) : nil }
    var isDestructive: Bool { (delta ?? 0) < 0 }
    var ownChange: OwnChange { OwnChange(adjustment: delta, tellsPoints: true) }

    func validate() throws {
        // `--reason karaoke bonus`: the reason's second word lands beside the amount.
        let others = words.filter { Int($0) == nil }
        if words.count > 1, others.count == words.count - 1 {
            let rest = others.joined(separator: " ")
            throw ValidationError("\"\(rest)\" is not an amount: a reason of several words needs quotes, "
                + "e.g. --reason \"\(reason) \(rest)\"")
        }
        guard let delta, delta != 0 else { throw ValidationError("give one non-zero whole number, e.g. 50 or -20") }
    }

    func refusalFrom(_ view: JSONValue) -> ServerRefusal? {
        // `magnitude`: a typed -2^63, or a faulty server's balance, must not trap.
        guard let delta, delta < 0, let points = view["game"]?["points"]?.intValue, points < delta.magnitude else {
            return nil
        }
        return ServerRefusal(op: "adjust_points", code: "insufficient_points", message: "Not enough points: have \(points), cannot take \(delta.magnitude)")
    }

    func perform(_ context: AdminContext) throws(ClientError) -> [String] {
        let reply = try context.change("adjust_points", ["delta": .int(delta ?? 0), "reason": .string(reason)])
        return context.done("Points: \(reply.result["points"]?.intValue ?? 0) ✦.", reply)
    }
}

struct AdminSetDay: AdminChange {
    static let configuration = CommandConfiguration(commandName: "set-day", abstract: "Set the current day of the weekend.")
    @OptionGroup var connection: AdminConnectionOptions
    @OptionGroup var change: ChangeKeyOption
    // Captured raw, as adjust-points' amount: "-1" is a day to refuse, not an option.
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("Day number, from 1.", valueName: "day")) var words: [String] = []

    var day: Int? { words.count == 1 ? Int(words[0]) : nil }
    var ownChange: OwnChange { OwnChange(day: day) }

    func validate() throws {
        guard day != nil else { throw ValidationError("give the day as one whole number, e.g. 2") }
    }

    func perform(_ context: AdminContext) throws(ClientError) -> [String] {
        let day = day ?? 0
        return context.done("It is now day \(day).", try context.change("set_day", ["day": .int(day)]))
    }
}

/// Each flag must be given to `command`; the error names all those that were not.
private func requireAll(_ flags: [(name: String, value: String?)], for command: String) throws {
    let missing = flags.filter { $0.value == nil }.map(\.name)
    guard missing.isEmpty else {
        throw ValidationError("\(command) needs \(flags.map(\.name).joined(separator: ", ")); missing: \(missing.joined(separator: ", "))")
    }
}

/// `value`, when given, must be one of `Word`'s values.
private func checkWord<Word: RawRepresentable<String> & CaseIterable>(_ value: String?, _ flag: String, _: Word.Type) throws {
    guard let value, Word(rawValue: value) == nil else { return }
    throw ValidationError("\(flag) must be one of \(Word.allCases.map(\.rawValue).joined(separator: ", ")), got \(value)")
}

/// Reads and merges an edit may need before the game holds still long enough to save it.
private let editAttempts = 5

/// The fields of `save_challenge` or `save_reward`: an add sends the ones given, an edit the
/// ones given over the item's current ones.
protocol SavedItemOptions: ParsableArguments {
    /// "challenge" or "reward": the op is `save_<kind>`, the view lists them under `<kind>s`.
    static var kind: String { get }
    /// The request's arguments; `base` is the current item for an edit, nil for an add.
    func arguments(base: JSONValue?) -> [String: JSONValue]
    /// What is wrong with the options given, said in their terms, before anything is sent.
    func problem(base: JSONValue?) -> String?
    /// What the organizer should know about the item just added.
    func notes(afterAdding id: String) -> [String]
}

extension SavedItemOptions {
    func problem(base: JSONValue?) -> String? { nil }
    func notes(afterAdding id: String) -> [String] { [] }

    func add(_ context: AdminContext) throws(ClientError) -> [String] {
        try check(base: nil)
        let reply = try context.change("save_\(Self.kind)", arguments(base: nil))
        // The server names the new item: shown as any text it sends, escaped.
        let id = reply.result[Self.kind]?.stringValue?.terminalSafe ?? "?"
        return context.done("Added \(Self.kind) \(id).", reply) + notes(afterAdding: id)
    }

    /// An edit sends the whole item, the current fields filling in what was not given (an item
    /// that does not exist would come back as a missing field instead of a missing item). It
    /// expects the version it read them at: if the game moved on meanwhile (another organizer
    /// edited the same item, say), what it read is not written back over the change; it reads
    /// again and merges the fields given over the fresh item.
    func edit(_ typed: String, _ context: AdminContext) throws(ClientError) -> [String] {
        let op = "save_\(Self.kind)"
        var versionsRead = Set<Int>()
        for attempt in 0..<editAttempts {
            // `state` shows the game as it is on disk; a change decided but not yet written moves
            // the version `expect` is checked against, so a retry gives it a moment to land.
            if attempt > 0 { Thread.sleep(forTimeInterval: 0.02 * Double(1 << attempt)) }
            let (version, view) = try read(typed, context)
            versionsRead.insert(version)
            let id = view.memberId(typed, in: ["\(Self.kind)s"]) ?? typed
            guard let current = view["\(Self.kind)s"]?[id] else {
                throw .refused(ServerRefusal(op: op, code: "not_found", message: "No \(Self.kind) \(id)"))
            }
            try check(base: current)
            var args = arguments(base: current)
            // An edit that changes nothing would still be an event in the log: say so instead.
            if args.allSatisfy({ current[$0.key] == $0.value }) {
                return ["Nothing to change: \(Self.kind) \(id) already has these values."]
            }
            args[Self.kind] = .string(id)
            args["expect"] = .int(version)
            do {
                return context.done("Saved \(Self.kind) \(id).", try context.change(op, args))
            } catch .refused(let refusal) where refusal.errorCode == .versionConflict {
                continue
            }
        }
        // Every read found the game at one version: nothing landed meanwhile, so what moved the
        // version is a change still on its way to disk (a slow or locked disk), not others' edits.
        let why = versionsRead.count == 1 ? "A change made before this one is still being written to disk (is the disk slow, or "
            + "the log locked by another program?)" : "The game kept changing while \(Self.kind) \(typed) was saved"
        throw .refused(ServerRefusal(op: op, code: "version_conflict", message: why + "; nothing was saved. Try again in a moment"))
    }

    /// The game as the server holds it now, for an edit to start from. With the server away,
    /// a person at the game waits `offlineWait`, not the whole timeout, and the edit is not
    /// kept to be sent later: what it would write over may change before then.
    private func read(_ id: String, _ context: AdminContext) throws(ClientError) -> (version: Int, view: JSONValue) {
        do {
            return try context.client.fetchState(timeout: context.requestTimeout)
        } catch .timedOut where !context.client.isConnected {
            throw .refused(ServerRefusal(op: "save_\(Self.kind)", code: "unavailable",
                                         message: "The server cannot be reached, so \(Self.kind) \(id) could not be read as it "
                                             + "stands, and nothing was saved. Try again once it is back"))
        }
    }

    private func check(base: JSONValue?) throws(ClientError) {
        if let problem = problem(base: base) {
            throw .refused(ServerRefusal(op: "save_\(Self.kind)", code: "bad_request", message: problem))
        }
    }
}

/// Each given field, or else the one of the same name in `base`; a field in neither is left out.
private func merge(_ given: [String: JSONValue?], over base: JSONValue?) -> [String: JSONValue] {
    var merged: [String: JSONValue] = [:]
    for (key, value) in given { merged[key] = value ?? base?[key] }
    return merged
}

struct ChallengeOptions: SavedItemOptions {
    static let kind = "challenge"
    @Option(parsing: .unconditional) var title: String?
    @Option(parsing: .unconditional) var description: String?
    @Option(parsing: .unconditional) var points: Int?
    // In any case, as ids and names are: the server's words are lower case.
    @Option(help: "easy, medium or hard.", transform: { $0.lowercased() }) var difficulty: String?
    @Option(help: "physical, social, creative, sentimental or adventure.", transform: { $0.lowercased() }) var category: String?
    @Option(name: .customLong("option-b-title"), parsing: .unconditional, help: "2-in-1: the second option's title.") var optionBTitle: String?
    @Option(name: .customLong("option-b-description"), parsing: .unconditional) var optionBDescription: String?
    @Flag(name: .customLong("no-option-b"), help: "Editing: remove option B (a new challenge has none unless given).") var noOptionB = false

    /// A word outside the list is a value not of its type, like `--points ten`: a usage error
    /// (exit 64) said here, not a refusal from the server.
    func validate() throws {
        try checkWord(difficulty, "--difficulty", Difficulty.self)
        try checkWord(category, "--category", Category.self)
    }

    func problem(base: JSONValue?) -> String? {
        // Said here: the request would be refused for the dare's missing difficulty first.
        if base?["secret"]?.boolValue == true {
            return "That is a secret dare: only its author edits it (with dare save, while it is a draft)"
        }
        let hasB = base?.optionB != nil
        if !noOptionB, !hasB, (optionBTitle == nil) != (optionBDescription == nil) {
            return "A new option B needs both --option-b-title and --option-b-description"
        }
        return nil
    }

    func arguments(base: JSONValue?) -> [String: JSONValue] {
        var args = merge(["title": title.map(JSONValue.string), "description": description.map(JSONValue.string),
                          "points": points.map(JSONValue.int), "difficulty": difficulty.map(JSONValue.string),
                          "category": category.map(JSONValue.string)], over: base)
        let oldB = base?["option_b"]
        if noOptionB {
            args["option_b"] = .null
        } else if optionBTitle != nil || optionBDescription != nil {
            args["option_b"] = ["title": optionBTitle.map(JSONValue.string) ?? oldB?["title"] ?? "",
                                "description": optionBDescription.map(JSONValue.string) ?? oldB?["description"] ?? ""]
        } else if let oldB {
            args["option_b"] = oldB
        }
        return args
    }
}

struct AdminAddChallenge: AdminChange {
    static let configuration = CommandConfiguration(commandName: "add-challenge", abstract: "Add a challenge to the board.")
    @OptionGroup var connection: AdminConnectionOptions
    @OptionGroup var change: ChangeKeyOption
    @OptionGroup var fields: ChallengeOptions
    var ownChange: OwnChange { OwnChange(addsChallenge: true) }

    /// Words missing: exit 64 before anything is sent, naming every flag left out at once.
    func validate() throws {
        try requireAll([("--title", fields.title), ("--description", fields.description), ("--points", fields.points.map(String.init)),
                        ("--difficulty", fields.difficulty), ("--category", fields.category)], for: "add-challenge")
    }

    func perform(_ context: AdminContext) throws(ClientError) -> [String] { try fields.add(context) }
}

struct AdminEditChallenge: AdminChange {
    static let configuration = CommandConfiguration(commandName: "edit-challenge",
                                                    abstract: "Edit a challenge; fields not given keep their value, even one changed meanwhile.")
    @OptionGroup var connection: AdminConnectionOptions
    @OptionGroup var change: ChangeKeyOption
    @Argument var challenge: String
    @OptionGroup var fields: ChallengeOptions
    var ownChange: OwnChange { OwnChange(edits: challenge) }

    // Without a read of its own: the edit reads the game anyway, and names the item from that.
    mutating func resolveIds(_ context: AdminContext) {
        challenge = context.client.view?.memberId(challenge, in: ["challenges"]) ?? challenge
    }

    func perform(_ context: AdminContext) throws(ClientError) -> [String] { try fields.edit(challenge, context) }
}

struct RewardOptions: SavedItemOptions {
    static let kind = "reward"
    @Option(parsing: .unconditional, help: "Who it is from, as shown (e.g. \"Grandma Rosa\").") var from: String?
    @Option(name: .customLong("from-character"), help: "The giver's character id, if they play.") var fromCharacter: String?
    @Flag(name: .customLong("no-from-character"), help: "Editing: the giver does not play, and the character is forgotten (a new reward has none unless given).")
    var noFromCharacter = false
    @Option(parsing: .unconditional) var title: String?
    @Option(parsing: .unconditional) var teaser: String?
    @Option(help: "text, image, audio or video.", transform: { $0.lowercased() }) var type: String?
    @Option(parsing: .unconditional, help: "Cost in points (default by type).") var cost: Int?
    @Option(parsing: .unconditional, help: "The gift's text.") var text: String?
    @Option(help: "A link to the gift's media (repeatable).") var url: [String] = []

    /// A gift without content can be unlocked, and paid for, as it is: the organizer may mean
    /// to fill it in later, and should know that it is empty until then.
    func notes(afterAdding id: String) -> [String] {
        guard text == nil, url.isEmpty else { return [] }
        return ["Note: \(id) has no content yet, and can be unlocked (and paid for) as it is: "
                + "add it with edit-reward \(id) --text \"...\" or --url LINK."]
    }

    func validate() throws {
        if fromCharacter != nil && noFromCharacter {
            throw ValidationError("give --from-character or --no-from-character, not both")
        }
        try checkWord(type, "--type", RewardType.self)
    }

    func arguments(base: JSONValue?) -> [String: JSONValue] {
        var args = merge(["from": from.map(JSONValue.string), "title": title.map(JSONValue.string),
                          "teaser": teaser.map(JSONValue.string), "type": type.map(JSONValue.string),
                          "cost": cost.map(JSONValue.int)], over: base)
        if noFromCharacter {
            args["from_character"] = .null
        } else if let character = fromCharacter.map(JSONValue.string) ?? base?["from_character"], !character.isNull {
            args["from_character"] = character
        }
        if text != nil || !url.isEmpty {
            args["content"] = ["text": .string(text ?? base?["content"]?["text"]?.stringValue ?? ""),
                               "urls": url.isEmpty ? (base?["content"]?["urls"] ?? []) : .array(url.map(JSONValue.string))]
        } else if let content = base?["content"] {
            args["content"] = content
        }
        return args
    }
}

struct AdminAddReward: AdminChange {
    static let configuration = CommandConfiguration(commandName: "add-reward", abstract: "Add a reward.")
    @OptionGroup var connection: AdminConnectionOptions
    @OptionGroup var change: ChangeKeyOption
    @OptionGroup var fields: RewardOptions
    var ownChange: OwnChange { OwnChange(addsReward: true) }

    /// Words missing: exit 64 before anything is sent (the cost has a default by type).
    func validate() throws {
        try requireAll([("--from", fields.from), ("--title", fields.title), ("--teaser", fields.teaser), ("--type", fields.type)],
                       for: "add-reward")
    }

    func perform(_ context: AdminContext) throws(ClientError) -> [String] { try fields.add(context) }
}

struct AdminEditReward: AdminChange {
    static let configuration = CommandConfiguration(commandName: "edit-reward",
                                                    abstract: "Edit a reward; fields not given keep their value, even one changed meanwhile.")
    @OptionGroup var connection: AdminConnectionOptions
    @OptionGroup var change: ChangeKeyOption
    @Argument var reward: String
    @OptionGroup var fields: RewardOptions
    var ownChange: OwnChange { OwnChange(edits: reward) }

    // Without a read of its own: the edit reads the game anyway, and names the item from that.
    mutating func resolveIds(_ context: AdminContext) {
        reward = context.client.view?.memberId(reward, in: ["rewards"]) ?? reward
    }

    func perform(_ context: AdminContext) throws(ClientError) -> [String] { try fields.edit(reward, context) }
}
