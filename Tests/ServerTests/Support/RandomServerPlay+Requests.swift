import JSON
import SeededRandom

// The random requests of `RandomServerPlay`: which op, from whom, with which arguments.
extension RandomServerPlay {
    enum Kind {
        case complete, discover, unlock, saveSecret, deliverSecret, forceComplete, forceUnlock, adjust, setDay, saveReward,
             saveChallenge, triggerBadge
    }

    static let weights: [(Int, Kind)] = [
        (18, .complete), (5, .discover), (18, .unlock), (6, .saveSecret), (4, .deliverSecret), (4, .forceComplete),
        (6, .forceUnlock), (16, .adjust), (3, .setDay), (6, .saveReward), (3, .saveChallenge), (1, .triggerBadge),
    ]

    /// A mutation, mostly from someone who may make it (sometimes from anyone, so that roles
    /// are checked too), mostly about things that exist and can still change.
    func randomMutation(_ step: Int) -> (identity: String, op: String, arguments: [String: JSONValue]) {
        let kind = rng.weighted(Self.weights)
        let (rightful, op, arguments) = request(kind, step: step)
        let identity = rng.chance(8) ? rng.pick(Self.identities) : rng.pick(rightful)
        return (identity, op, arguments)
    }

    private func request(_ kind: Kind, step: Int) -> ([String], String, [String: JSONValue]) {
        switch kind {
        case .complete:
            let id = challengeID(preferring: { $0["status"] == "open" })
            var arguments: [String: JSONValue] = ["challenge": .string(id), "proof": proof(step)]
            let hasOptionB = adminView["challenges"]?[id]?["option_b"].map { $0 != .null } ?? false
            // Option b where there is one; now and then where there is none, a `bad_request`.
            if rng.chance(hasOptionB ? 50 : 3) { arguments["option"] = "b" } else if rng.chance(10) { arguments["option"] = "a" }
            return (["mia"], "complete_challenge", arguments)
        case .discover:
            return (["mia"], "discover_secrets", [:])
        case .unlock:
            return (["mia"], "unlock_reward", ["reward": .string(rewardID(preferring: { $0["unlocked"] == false }))])
        case .saveSecret:
            // Few distinct texts, so that a save sometimes leaves a draft as it stands; one of
            // them in two spellings (a precomposed and a combining accent), other bytes on the wire.
            return (Self.authors, "save_secret", ["title": .string(rng.pick(["Sing", "Dance", "Juggle", "Caf\u{E9}", "Cafe\u{301}"])),
                                                   "description": .string(rng.pick(["In the lake", "On the table"])),
                                                   "points": .int(rng.pick([25, 50, 75, 100]))])
        case .deliverSecret:
            return (Self.authors, "deliver_secret", [:])
        case .forceComplete:
            return (Self.organizers, "force_complete", ["challenge": .string(challengeID(preferring: { $0["status"] != "completed" }))])
        case .forceUnlock:
            return (Self.organizers, "force_unlock", ["reward": .string(rewardID(preferring: { $0["unlocked"] == false })),
                                                      "deduct": .bool(rng.chance(70))])
        case .adjust:
            // Pulled toward an empty balance, where the rules matter: exactly to zero, just
            // past it, far past it, or a small move either way.
            let points = adminView["game"]?["points"]?.intValue ?? 0
            var delta = rng.weighted([(8, rng.int(-120...150)), (4, -points), (3, -(points + rng.int(1...30))), (1, -rng.int(500...5_000))])
            if delta == 0 { delta = rng.int(1...40) }
            return (Self.organizers, "adjust_points", ["delta": .int(delta), "reason": .string("step \(step)")])
        case .setDay:
            return (Self.organizers, "set_day", ["day": .int(rng.int(1...4))])
        case .saveReward:
            var arguments: [String: JSONValue] = [
                "from": .string("Giver \(step)"), "title": .string("Gift \(step)"), "teaser": "Something small",
                "type": .string(rng.pick(["text", "image", "audio", "video"])),
            ]
            if rng.chance(30) { arguments["reward"] = .string(rewardID(preferring: { _ in true })) }
            if let giver = rng.weighted([(5, nil), (2, "sam"), (2, "priya"), (1, "theo")] as [(Int, String?)]) {
                arguments["from_character"] = .string(giver)
            }
            if rng.chance(50) { arguments["cost"] = .int(rng.int(0...150)) }
            if rng.chance(70) { arguments["content"] = ["text": .string("gift \(step)"), "urls": [.string("https://gifts.example/\(step)")]] }
            return (Self.organizers, "save_reward", arguments)
        case .saveChallenge:
            var arguments: [String: JSONValue] = [
                "title": .string("Challenge \(step)"), "description": .string("Do it \(step)"), "points": .int(rng.int(10...100)),
                "difficulty": .string(rng.pick(["easy", "medium", "hard"])),
                "category": .string(rng.pick(["physical", "social", "creative", "sentimental", "adventure"])),
            ]
            if rng.chance(40) { arguments["challenge"] = .string(challengeID(preferring: { $0["secret"] == false })) }
            if rng.chance(30) { arguments["option_b"] = ["title": "Or this", "description": .string("Another way \(step)")] }
            return (Self.organizers, "save_challenge", arguments)
        case .triggerBadge:
            return (Self.organizers, "trigger_final_badge", [:])
        }
    }

    /// A challenge id from the admin console's view, mostly one that `preferred` accepts,
    /// sometimes any (a completed one, a draft dare), now and then one that does not exist.
    private func challengeID(preferring preferred: (JSONValue) -> Bool) -> String {
        id(in: adminView["challenges"], missing: "c99", preferring: preferred)
    }

    private func rewardID(preferring preferred: (JSONValue) -> Bool) -> String {
        id(in: adminView["rewards"], missing: "r99", preferring: preferred)
    }

    private func id(in members: JSONValue?, missing: String, preferring preferred: (JSONValue) -> Bool) -> String {
        let all = (members?.objectValue ?? [:]).sorted { $0.key < $1.key }
        let liked = all.filter { preferred($0.value) }.map(\.key)
        if rng.chance(4) || all.isEmpty { return missing }
        return rng.chance(70) && !liked.isEmpty ? rng.pick(liked) : rng.pick(all.map(\.key))
    }

    private func proof(_ step: Int) -> JSONValue {
        rng.weighted([(4, ["kind": "done"]), (3, ["kind": "text", "text": .string("did it \(step)")]),
                      (3, ["kind": "photo", "url": .string("https://photos.example/\(step).jpg")])])
    }

    /// The same request with something else changed, still well-formed (a malformed one would
    /// be a `bad_request` before the key is looked at): a real argument where there is an
    /// obvious one, else a field the op does not know, which counts too.
    func changedArguments(_ request: SentRequest) -> [String: JSONValue] {
        var arguments = request.arguments
        guard rng.chance(60) else {
            arguments["note"] = "sent again, differently"
            return arguments
        }
        switch request.op {
        case "adjust_points":
            arguments["reason"] = .string((arguments["reason"]?.stringValue ?? "") + " (again)")
        case "set_day":
            arguments["day"] = .int((arguments["day"]?.intValue ?? 1) % 4 + 1)
        case "complete_challenge":
            arguments["proof"] = arguments["proof"] == ["kind": "done"] ? ["kind": "text", "text": "changed"] : ["kind": "done"]
        case "force_unlock":
            arguments["deduct"] = .bool(arguments["deduct"] != true)
        default:
            arguments["note"] = "sent again, differently"
        }
        return arguments
    }
}
