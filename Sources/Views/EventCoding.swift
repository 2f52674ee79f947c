import Domain
import JSON

/// How an event's change is written to the log: a flat JSON object with
/// snake_case fields, the event type in its own column. Hand-written rather
/// than Codable because it runs once per command on the loop thread, and
/// because the log is read by people (`bq log`) and other tools.
public enum EventCoding {
    /// The payload of `change` (its type is `Event.type`, in a column of its own).
    public static func encode(_ change: Change) -> JSONValue {
        switch change {
        case .gameSeeded(let content, let hash):
            return ["hash": .string(hash), "content": SeedWriter.json(content)]
        case .characterClaimed(let character, let device, let tokenHash, let takeover, let endsToken):
            // The device and the hashes are credentials: `EventRedaction` leaves them out of what
            // the organizer reads. A new credential field goes there too.
            var fields: [String: JSONValue] = ["character": .string(character), "device": .string(device),
                                               "token_hash": .string(tokenHash), "takeover": .bool(takeover)]
            // Only when it ends one: the payload of every other claim keeps the shape it always had.
            fields["ends_token_hash"] = endsToken.map { .string($0) }
            return .object(fields)
        case .characterUnclaimed(let character):
            return ["character": .string(character)]
        case .challengeCompleted(let challenge, let option, let proof, let forced, let points):
            return ["challenge": .string(challenge), "option": .string(option.rawValue), "proof": proof.map(proofView) ?? .null,
                    "forced": .bool(forced), "points": .int(points)]
        case .secretsDiscovered(let challenges):
            return ["challenges": .array(challenges.map { .string($0) })]
        case .rewardUnlocked(let reward, let cost, let forced):
            return ["reward": .string(reward), "cost": .int(cost), "forced": .bool(forced)]
        case .finalBadgeUnlocked(let forced):
            return ["forced": .bool(forced)]
        case .secretSaved(let challenge, let author, let title, let description, let points):
            return ["challenge": .string(challenge), "author": .string(author), "title": .string(title),
                    "description": .string(description), "points": .int(points)]
        case .secretDelivered(let challenge):
            return ["challenge": .string(challenge)]
        case .pointsAdjusted(let delta, let reason):
            return ["delta": .int(delta), "reason": .string(reason)]
        case .daySet(let day):
            return ["day": .int(day)]
        case .challengeSaved(let challenge, let fields, let created):
            var object = SeedWriter.fields(fields)
            object["challenge"] = .string(challenge)
            object["created"] = .bool(created)
            return .object(object)
        case .rewardSaved(let reward, let fields, let created):
            var object = SeedWriter.fields(fields)
            object["reward"] = .string(reward)
            object["created"] = .bool(created)
            return .object(object)
        }
    }

    /// The change a stored payload of `type` holds; the error names the type and the field.
    public static func decode(type: String, payload: JSONValue) throws(EventDecodingError) -> Change {
        let f = Fields(type: type, value: payload)
        switch type {
        case "game_seeded":
            guard let content = payload["content"] else { throw f.error("missing content") }
            let hash = try f.string("hash")
            let seed: SeedContent
            do {
                seed = try SeedParser.parse(content, file: "event", rules: .structure)
            } catch {
                throw f.error("bad content: \(error)")
            }
            return .gameSeeded(content: seed, hash: hash)
        case "character_claimed":
            return .characterClaimed(character: try f.string("character"), device: try f.string("device"),
                                     tokenHash: try f.string("token_hash"), takeover: try f.bool("takeover"),
                                     endsToken: try f.optionalString("ends_token_hash"))
        case "character_unclaimed": return .characterUnclaimed(character: try f.string("character"))
        case "challenge_completed":
            guard let option = ChallengeOption(rawValue: try f.string("option")) else { throw f.error("bad option") }
            return .challengeCompleted(challenge: try f.string("challenge"), option: option, proof: try f.proof(),
                                       forced: try f.bool("forced"), points: try f.int("points"))
        case "secrets_discovered":
            guard case .array(let items)? = payload["challenges"] else { throw f.error("missing challenges") }
            return .secretsDiscovered(challenges: try items.map { item throws(EventDecodingError) in
                guard case .string(let id) = item else { throw f.error("bad challenge id") }
                return id
            })
        case "reward_unlocked":
            return .rewardUnlocked(reward: try f.string("reward"), cost: try f.int("cost"), forced: try f.bool("forced"))
        case "final_badge_unlocked": return .finalBadgeUnlocked(forced: try f.bool("forced"))
        case "secret_saved":
            return .secretSaved(challenge: try f.string("challenge"), author: try f.string("author"), title: try f.string("title"),
                                description: try f.string("description"), points: try f.int("points"))
        case "secret_delivered": return .secretDelivered(challenge: try f.string("challenge"))
        case "points_adjusted": return .pointsAdjusted(delta: try f.int("delta"), reason: try f.string("reason"))
        case "day_set": return .daySet(day: try f.int("day"))
        case "challenge_saved":
            guard let difficulty = Difficulty(rawValue: try f.string("difficulty")),
                  let category = Category(rawValue: try f.string("category")) else { throw f.error("bad difficulty or category") }
            var optionB: OptionText?
            if case .object? = payload["option_b"] {
                let inner = Fields(type: type, value: payload["option_b"]!)
                optionB = OptionText(title: try inner.string("title"), description: try inner.string("description"))
            }
            let fields = ChallengeFields(title: try f.string("title"), description: try f.string("description"), optionB: optionB,
                                         points: try f.int("points"), difficulty: difficulty, category: category)
            return .challengeSaved(challenge: try f.string("challenge"), fields: fields, created: try f.bool("created"))
        case "reward_saved":
            guard let rewardType = RewardType(rawValue: try f.string("type")) else { throw f.error("bad type") }
            var content: RewardContent?
            if case .object? = payload["content"] {
                let inner = Fields(type: type, value: payload["content"]!)
                content = RewardContent(text: try inner.optionalString("text"), urls: try inner.strings("urls"))
            }
            let fields = RewardFields(from: try f.string("from"), fromCharacter: try f.optionalString("from_character"),
                                      title: try f.string("title"), teaser: try f.string("teaser"), type: rewardType,
                                      cost: try f.int("cost"), content: content)
            return .rewardSaved(reward: try f.string("reward"), fields: fields, created: try f.bool("created"))
        default:
            throw EventDecodingError(type: type, message: "unknown event type")
        }
    }
}

public struct EventDecodingError: Error, Sendable, CustomStringConvertible {
    public let type: String
    public let message: String

    public var description: String { "\(type): \(message)" }
}

private struct Fields {
    let type: String
    let value: JSONValue

    func error(_ message: String) -> EventDecodingError { EventDecodingError(type: type, message: message) }

    func string(_ key: String) throws(EventDecodingError) -> String {
        guard case .string(let text)? = value[key] else { throw error("missing string \(key)") }
        return text
    }

    func optionalString(_ key: String) throws(EventDecodingError) -> String? {
        switch value[key] {
        case nil, .null?: return nil
        case .string(let text)?: return text
        default: throw error("\(key) must be a string or null")
        }
    }

    func strings(_ key: String) throws(EventDecodingError) -> [String] {
        guard case .array(let items)? = value[key] else { throw error("missing array \(key)") }
        return try items.map { item throws(EventDecodingError) in
            guard case .string(let text) = item else { throw error("\(key) must hold strings") }
            return text
        }
    }

    func int(_ key: String) throws(EventDecodingError) -> Int {
        guard case .int(let number)? = value[key] else { throw error("missing integer \(key)") }
        return number
    }

    func bool(_ key: String) throws(EventDecodingError) -> Bool {
        guard case .bool(let flag)? = value[key] else { throw error("missing boolean \(key)") }
        return flag
    }

    func proof() throws(EventDecodingError) -> Proof? {
        guard case .object(let proof)? = value["proof"] else { return nil }
        let inner = Fields(type: type, value: .object(proof))
        switch proof["kind"] {
        case .string("photo")?: return .photo(url: try inner.string("url"))
        case .string("text")?: return .text(try inner.string("text"))
        case .string("done")?: return .done
        default: throw error("bad proof kind")
        }
    }
}

/// Seed content back to the seed file format, so the seed event reads like the seed file.
public enum SeedWriter {
    public static func json(_ content: SeedContent) -> JSONValue {
        .object([
            "format": .int(1),
            "game": .object(["title": .string(content.title), "day": .int(content.day)]),
            "characters": .array(content.characters.map { character in
                var object: [String: JSONValue] = [
                    "id": .string(character.id), "name": .string(character.name), "role": .string(character.role.rawValue),
                    "tagline": .string(character.tagline), "fun_facts": .array(character.funFacts.map { .string($0) }),
                ]
                // A credential, like a claim's device: `EventRedaction` leaves it out.
                if let pin = character.pin { object["pin"] = .string(pin) }
                return .object(object)
            }),
            "challenges": .array(content.challenges.map { challenge in
                var object = fields(challenge.fields)
                object["id"] = .string(challenge.id)
                return .object(object)
            }),
            "rewards": .array(content.rewards.map { reward in
                var object = fields(reward.fields)
                object["id"] = .string(reward.id)
                return .object(object)
            }),
        ])
    }

    static func fields(_ fields: ChallengeFields) -> [String: JSONValue] {
        [
            "title": .string(fields.title), "description": .string(fields.description),
            "option_b": fields.optionB.map { .object(["title": .string($0.title), "description": .string($0.description)]) } ?? .null,
            "points": .int(fields.points), "difficulty": .string(fields.difficulty.rawValue), "category": .string(fields.category.rawValue),
        ]
    }

    static func fields(_ fields: RewardFields) -> [String: JSONValue] {
        [
            "from": .string(fields.from), "from_character": fields.fromCharacter.map { .string($0) } ?? .null,
            "title": .string(fields.title), "teaser": .string(fields.teaser), "type": .string(fields.type.rawValue),
            "cost": .int(fields.cost),
            "content": fields.content.map { .object(["text": $0.text.map { .string($0) } ?? .null, "urls": .array($0.urls.map { .string($0) })]) } ?? .null,
        ]
    }
}
