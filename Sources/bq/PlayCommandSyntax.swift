import JSON

/// What a player's command says, read from its words alone, with no game and no server: the
/// shapes `PlaySession.execute` runs, and what a one-shot is checked against before it
/// connects, so that a mistyped option signs nobody in and claims nothing.
enum PlayCommandSyntax {
    struct Completion {
        /// As typed: the game turns `C2` into `c02`.
        let challenge: String
        let option: String?
        let proof: JSONValue
    }

    enum DareAction {
        case status
        case save(title: String, description: String, points: Int)
        case deliver
    }

    static let completeUsage = "complete <challenge> [photo URL | text \"...\" | done] [--option a|b]"
    private static let dareUsage = "dare | dare save \"title\" \"description\" <points> | dare deliver"

    /// The commands that take no words after their name.
    private static let wordlessCommands: Set = ["help", "home", "board", "rewards", "timeline", "whoami", "points", "discover", "quit"]

    /// Why `rest`, the words after the command `name` (its one name, not an alias), do not fit
    /// it, as the text after "Usage: "; nil when they do, or when `name` is an organizer's tool
    /// (which `Admin`'s parser reads).
    static func problem(name: String, rest: [String], isOrganizerTool: Bool) -> String? {
        // Among a player's words it would become part of a proof's text, or a usage error that
        // does not say where it goes (the organizer's tools say so themselves).
        if !isOrganizerTool, rest.contains(where: { $0 == "--idem" || value(of: ["--idem"], in: $0) != nil }) {
            return "--idem goes before the command, in a one-shot: bq play --idem KEY \(name) ..."
        }
        // A word too many is a mistake to point out, not to drop: `unlock r09 r10` must not
        // quietly spend points on r09 alone.
        if wordlessCommands.contains(name), !rest.isEmpty {
            return "\(name) takes no arguments (got \(rest.joined(separator: " ")))"
        }
        switch name {
        case "show" where rest.count != 1: return "show <challenge or reward id>"
        case "unlock" where rest.count != 1: return "unlock <reward id> (one at a time)"
        case "complete" where completion(rest) == nil: return completeUsage
        case "dare":
            if case .failure(let usage) = dareAction(rest) { return usage.text }
            return nil
        default: return nil
        }
    }

    /// `complete`'s words: the challenge, then a proof and `--option` in any order.
    static func completion(_ words: [String]) -> Completion? {
        guard let challenge = words.first else { return nil }
        var option: String?
        var proofWords: [String] = []
        var index = 1
        while index < words.count {
            if words[index] == "--option" || words[index] == "-o" {
                guard index + 1 < words.count else { return nil }
                option = words[index + 1].lowercased()
                index += 2
            } else if let value = value(of: ["--option", "-o"], in: words[index]) {
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
            guard proofWords.count == 1 else { return nil }
            proof = ["kind": "done"]
        case "photo":
            guard proofWords.count == 2 else { return nil }
            proof = ["kind": "photo", "url": .string(proofWords[1])]
        case "text":
            guard proofWords.count >= 2 else { return nil }
            proof = ["kind": "text", "text": .string(proofWords.dropFirst().joined(separator: " "))]
        default: return nil
        }
        return Completion(challenge: challenge, option: option, proof: proof)
    }

    struct Usage: Error {
        let text: String
    }

    /// A friend's `dare` words.
    static func dareAction(_ words: [String]) -> Result<DareAction, Usage> {
        switch words.first?.lowercased() {
        case nil, "status":
            return words.count <= 1 ? .success(.status) : .failure(Usage(text: dareUsage))
        case "save":
            guard words.count == 4, let points = Int(words[3]) else {
                return .failure(Usage(text: "dare save \"title\" \"description\" <25|50|75|100>"))
            }
            return .success(.save(title: words[1], description: words[2], points: points))
        case "deliver":
            return words.count == 1 ? .success(.deliver) : .failure(Usage(text: "dare deliver (no more words)"))
        default: return .failure(Usage(text: dareUsage))
        }
    }

    /// The value of `--flag=value` when `word` is one of `flags` written that way.
    static func value(of flags: [String], in word: String) -> String? {
        for flag in flags where word.hasPrefix(flag + "=") { return String(word.dropFirst(flag.count + 1)) }
        return nil
    }
}
