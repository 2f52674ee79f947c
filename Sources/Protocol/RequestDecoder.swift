import Domain
import JSON

/// Turns one line into a typed request, or a failure that names the bad field.
public enum RequestDecoder {
    /// Decodes one line of the wire. An object's members are read as a list, not a dictionary
    /// (`JSONParser.parseObjectMembers`); any other line is parsed again, to say what is wrong.
    public static func decode(line: [UInt8], maxDepth: Int) -> Result<Request, RequestFailure> {
        if let members = JSONParser.parseObjectMembers(line, maxDepth: maxDepth) {
            return decode(MemberList(list: members))
        }
        let json: JSONValue
        do {
            json = try JSONParser.parse(line, maxDepth: maxDepth)
        } catch {
            return .failure(RequestFailure(id: nil, error: ProtocolError(.badJSON, "Not a JSON object: \(error)")))
        }
        return decode(json)
    }

    /// Decodes one parsed line.
    public static func decode(_ json: JSONValue) -> Result<Request, RequestFailure> {
        guard case .object(let fields) = json else {
            return .failure(RequestFailure(id: nil, error: ProtocolError(.badJSON, "A request must be a JSON object")))
        }
        return decode(fields)
    }

    private static func decode<Members: RequestMembers>(_ fields: Members) -> Result<Request, RequestFailure> {
        let id: RequestID
        switch fields["id"] {
        case .int(let number)?: id = .int(number)
        case .double(let number)? where wholeNumber(number) != nil: id = .int(wholeNumber(number)!)
        case .double(let number)? where number.isFinite && number == number.rounded(.towardZero):
            return .failure(RequestFailure(id: nil, error: ProtocolError.field("id",
                "must be a string or an integer of at most 64 bits (at most 2^53 written with a fraction or an exponent)")))
        case .string(let text)?: id = .string(text)
        case nil, .null?:
            return .failure(RequestFailure(id: nil, error: ProtocolError.missing("id", "(a string or an integer)")))
        default:
            return .failure(RequestFailure(id: nil, error: ProtocolError.field("id", "must be a string or an integer (of at most 64 bits)")))
        }
        do {
            let request = try decode(fields, id: id)
            return .success(request)
        } catch {
            return .failure(RequestFailure(id: id, error: error))
        }
    }

    private static func decode<Members: RequestMembers>(_ fields: Members, id: RequestID) throws(ProtocolError) -> Request {
        let args = Arguments(fields: fields)
        guard let opValue = fields["op"] else { throw ProtocolError.missing("op") }
        guard case .string(let op) = opValue else { throw ProtocolError.field("op", "must be a string") }
        let operation = try self.operation(op, args)
        var idem: String?
        var expect: Int?
        if case .mutation = operation {
            idem = try args.optionalString("idem", Limits.idempotencyKey)
            expect = try args.optionalInt("expect", 0...Int.max)
        }
        // Only a keyed mutation is ever compared with an earlier request: skip the work otherwise.
        var canonical: [UInt8] = []
        if idem != nil {
            canonical.reserveCapacity(256)
            fields.writeCanonical(into: &canonical)
        }
        return Request(id: id, op: op, operation: operation, idem: idem, expect: expect, canonicalBytes: canonical)
    }

    private static func operation(_ op: String, _ args: Arguments<some RequestMembers>) throws(ProtocolError) -> Operation {
        switch op {
        case "ping": return .ping
        case "characters": return .characters(game: try args.optionalString("game", Limits.gameName))
        case "claim":
            return .claim(character: try args.string("character"), device: try args.string("device", Limits.device),
                          pin: try args.optionalString("pin", Limits.claimPIN), game: try args.optionalString("game", Limits.gameName))
        // Any string is a token to look up: one blank or mangled in a client's storage is a
        // session to claim again (`unauthenticated`), not a malformed request.
        case "auth": return .auth(token: try args.string("token", 0...Int.max))
        case "admin": return .admin(key: try args.string("key", Limits.adminKey), game: try args.optionalString("game", Limits.gameName))
        case "whoami": return .whoami
        case "state": return .state
        case "subscribe": return .subscribe(since: try args.optionalPosition("since"), sinceDigest: try args.viewDigest("since_digest"))
        case "unsubscribe": return .unsubscribe
        case "timeline":
            return .timeline(after: try args.optionalPosition("after") ?? 0, limit: try args.optionalInt("limit", Limits.timelinePage) ?? Limits.defaultPage)
        case "events":
            return .events(after: try args.optionalPosition("after") ?? 0, limit: try args.optionalInt("limit", Limits.eventsPage) ?? Limits.defaultPage)
        default:
            guard let command = try mutation(op, args) else { throw ProtocolError(.unknownOp, "Unknown op \"\(op)\"") }
            return .mutation(command)
        }
    }

    /// The ops that change the game: the ones `mutation` decodes. A client keys each of them,
    /// so that one re-sent after a reconnect is applied once (ProtocolTests hold the two together).
    public static let mutationOps: Set<String> = [
        "complete_challenge", "discover_secrets", "unlock_reward", "save_secret", "deliver_secret",
        "force_complete", "force_unlock", "trigger_final_badge", "unclaim", "adjust_points",
        "set_day", "save_challenge", "save_reward",
    ]

    static func mutation(_ op: String, _ args: Arguments<some RequestMembers>) throws(ProtocolError) -> Command? {
        switch op {
        case "complete_challenge":
            return .completeChallenge(challenge: try args.string("challenge"), proof: try args.proof(),
                                      option: try args.optionalEnum("option", ChallengeOption.self))
        case "discover_secrets": return .discoverSecrets
        case "unlock_reward": return .unlockReward(reward: try args.string("reward"))
        case "save_secret":
            return .saveSecret(title: try args.text("title", Limits.title), description: try args.text("description", Limits.description),
                               points: try args.int("points", Limits.secretPoints.min()!...Limits.secretPoints.max()!, allowed: Limits.secretPoints))
        case "deliver_secret": return .deliverSecret
        case "force_complete": return .forceComplete(challenge: try args.string("challenge"))
        case "force_unlock": return .forceUnlock(reward: try args.string("reward"), deduct: try args.bool("deduct"))
        case "trigger_final_badge": return .triggerFinalBadge
        case "unclaim": return .unclaim(character: try args.string("character"))
        case "adjust_points":
            let delta = try args.int("delta", -Limits.maxAdjustment...Limits.maxAdjustment)
            if delta == 0 { throw ProtocolError.field("delta", "must not be 0") }
            return .adjustPoints(delta: delta, reason: try args.text("reason", Limits.reason))
        case "set_day": return .setDay(try args.int("day", Limits.day))
        case "save_challenge":
            let fields = ChallengeFields(
                title: try args.text("title", Limits.title), description: try args.text("description", Limits.description),
                optionB: try args.optionB(), points: try args.int("points", Limits.challengePoints),
                difficulty: try args.enumValue("difficulty", Difficulty.self), category: try args.enumValue("category", Category.self))
            return .saveChallenge(id: try args.optionalString("challenge"), fields)
        case "save_reward":
            let fields = RewardFields(
                from: try args.text("from", Limits.name), fromCharacter: try args.optionalString("from_character"),
                title: try args.text("title", Limits.title), teaser: try args.text("teaser", Limits.teaser),
                type: try args.enumValue("type", RewardType.self), cost: try args.optionalInt("cost", Limits.rewardCost),
                content: try args.content())
            return .saveReward(id: try args.optionalString("reward"), fields)
        default: return nil
        }
    }
}

/// `value` with each whole number written with a fraction or an exponent turned into the integer
/// it stands for; nil when there is none (the usual case: nothing is copied).
func wholeNumbersAsIntegers(_ value: JSONValue) -> JSONValue? {
    switch value {
    case .double(let number):
        return wholeNumber(number).map(JSONValue.int)
    case .array(let items):
        var result: [JSONValue]?
        for (index, item) in items.enumerated() {
            guard let spelled = wholeNumbersAsIntegers(item) else { continue }
            if result == nil { result = items }
            result![index] = spelled
        }
        return result.map(JSONValue.array)
    case .object(let members):
        var result: [String: JSONValue]?
        for (key, member) in members {
            guard let spelled = wholeNumbersAsIntegers(member) else { continue }
            if result == nil { result = members }
            result![key] = spelled
        }
        return result.map(JSONValue.object)
    default:
        return nil
    }
}

/// The integer a number written with a fraction or an exponent (`2.0`, `2e0`) stands for. Only
/// up to 2^53, where a double still holds every integer: a bigger one may not be what was written
/// (the parser keeps no more than a double of a number that is not a plain 64-bit integer).
func wholeNumber(_ number: Double) -> Int? {
    guard number.magnitude <= 0x1p53, number == number.rounded(.towardZero) else { return nil }
    return Int(number)
}

/// 2^53, the largest a whole number written with a fraction or an exponent may be.
let wholeNumberLimit = 1 << 53

/// Typed access to a request's fields; every error names the field and what it must be.
struct Arguments<Members: RequestMembers> {
    let fields: Members
    /// Where these fields sit in the request, for messages: `proof.` for the proof's own.
    var prefix = ""

    /// Text for people (a title, a reason, a proof): a string in `length` that shows something.
    func text(_ key: String, _ length: ClosedRange<Int>) throws(ProtocolError) -> String {
        let value = try string(key, length)
        if value.isBlank { throw ProtocolError.field("\(prefix)\(key)", "must not be blank") }
        return value
    }

    func string(_ key: String, _ length: ClosedRange<Int> = 1...128) throws(ProtocolError) -> String {
        guard let value = try optionalString(key, length) else { throw ProtocolError.missing("\(prefix)\(key)") }
        return value
    }

    func optionalString(_ key: String, _ length: ClosedRange<Int> = 1...128) throws(ProtocolError) -> String? {
        switch fields[key] {
        case nil, .null?: return nil
        case .string(let text)?:
            let count = text.codePointCount
            guard length.contains(count) else {
                throw ProtocolError.field("\(prefix)\(key)", "must be \(length.lowerBound) to \(length.upperBound) characters, got \(count)")
            }
            return text
        default: throw ProtocolError.field("\(prefix)\(key)", "must be a string")
        }
    }

    func int(_ key: String, _ range: ClosedRange<Int>, allowed: [Int]? = nil) throws(ProtocolError) -> Int {
        guard let value = try optionalInt(key, range, allowed: allowed) else { throw ProtocolError.missing("\(prefix)\(key)") }
        return value
    }

    /// JSON has numbers, not integers: `2.0` and `2e0` are the integer 2, as a client's library
    /// may write it. A bigger whole number than `wholeNumber` takes is out of every range here,
    /// and said so (not called the wrong type).
    func optionalInt(_ key: String, _ range: ClosedRange<Int>, allowed: [Int]? = nil) throws(ProtocolError) -> Int? {
        var value = fields[key]
        if case .double(let number)? = value, number.isFinite, number == number.rounded(.towardZero) {
            guard let exact = wholeNumber(number) else {
                // Past 2^53 a double may not be the number written (the parser holds a plain
                // integer past 64 bits as one too): out of a small range either way; for a range
                // that reaches that far, say what is exact.
                if range.lowerBound >= -wholeNumberLimit && range.upperBound <= wholeNumberLimit {
                    throw ProtocolError.field("\(prefix)\(key)", "must be \(range.lowerBound) to \(range.upperBound), got \(number)")
                }
                throw ProtocolError.field("\(prefix)\(key)", "must be an integer of at most 64 bits "
                    + "(at most 2^53 written with a fraction or an exponent), got \(number)")
            }
            value = .int(exact)
        }
        switch value {
        case nil, .null?: return nil
        case .int(let number)?:
            if let allowed, !allowed.contains(number) {
                throw ProtocolError.field("\(prefix)\(key)", "must be one of \(allowed.map(String.init).joined(separator: ", ")), got \(number)")
            }
            guard range.contains(number) else {
                throw ProtocolError.field("\(prefix)\(key)", "must be \(range.lowerBound) to \(range.upperBound), got \(number)")
            }
            return number
        default: throw ProtocolError.field("\(prefix)\(key)", "must be an integer")
        }
    }

    /// A place in a game's history (a version, a timeline `seq`), 0 or more. A number from 2^63
    /// up, or one from 2^53 up written with a fraction or an exponent, is past every place
    /// there is (the parser holds either as a double, which may not be the number written):
    /// `Int.max` means the same.
    func optionalPosition(_ key: String) throws(ProtocolError) -> Int? {
        if case .double(let number)? = fields[key], number >= 0x1p53 { return Int.max }
        return try optionalInt(key, 0...Int.max)
    }

    /// A `ViewDigest`, lowercased: 64 hex digits.
    func viewDigest(_ key: String) throws(ProtocolError) -> String? {
        guard let text = try optionalString(key, 0...Int.max) else { return nil }
        guard let digest = ViewDigest.normalized(text) else {
            throw ProtocolError.field("\(prefix)\(key)", "must be 64 hex digits (the SHA-256 of the view at since), got \(JSONValue.string(text).excerpt(40))")
        }
        return digest
    }

    func bool(_ key: String) throws(ProtocolError) -> Bool {
        switch fields[key] {
        case .bool(let flag)?: return flag
        case nil, .null?: throw ProtocolError.missing("\(prefix)\(key)", "(true or false)")
        default: throw ProtocolError.field("\(prefix)\(key)", "must be true or false")
        }
    }

    func enumValue<E: RawRepresentable<String> & CaseIterable>(_ key: String, _ type: E.Type) throws(ProtocolError) -> E {
        guard let value = try optionalEnum(key, type) else { throw ProtocolError.missing("\(prefix)\(key)") }
        return value
    }

    func optionalEnum<E: RawRepresentable<String> & CaseIterable>(_ key: String, _ type: E.Type) throws(ProtocolError) -> E? {
        guard let raw = try optionalString(key, 1...32) else { return nil }
        guard let value = E(rawValue: raw) else {
            throw ProtocolError.field("\(prefix)\(key)", "must be one of \(E.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))")
        }
        return value
    }

    func proof() throws(ProtocolError) -> Proof {
        guard case .object(let proof)? = fields["proof"] else {
            throw ProtocolError.field("proof", "must be an object: {\"kind\": \"photo\", \"url\"}, {\"kind\": \"text\", \"text\"} or {\"kind\": \"done\"}")
        }
        let inner = Arguments<[String: JSONValue]>(fields: proof, prefix: "proof.")
        switch proof["kind"] {
        case .string("photo")?:
            let url = try inner.string("url", Limits.proofURL)
            guard url.isWebLink else {
                throw ProtocolError.field("proof.url", "must be \(String.webLinkRule)")
            }
            return .photo(url: url)
        case .string("text")?: return .text(try inner.text("text", Limits.proofText))
        case .string("done")?: return .done
        default: throw ProtocolError.field("proof.kind", "must be \"photo\", \"text\" or \"done\"")
        }
    }

    func optionB() throws(ProtocolError) -> OptionText? {
        switch fields["option_b"] {
        case nil, .null?: return nil
        case .object(let option)?:
            let inner = Arguments<[String: JSONValue]>(fields: option, prefix: "option_b.")
            return OptionText(title: try inner.text("title", Limits.title), description: try inner.text("description", Limits.description))
        default: throw ProtocolError.field("option_b", "must be null or an object {\"title\", \"description\"}")
        }
    }

    func content() throws(ProtocolError) -> RewardContent? {
        switch fields["content"] {
        case nil, .null?: return nil
        case .object(let content)?:
            let text = try Arguments<[String: JSONValue]>(fields: content, prefix: "content.").optionalString("text", Limits.contentText)
            var urls: [String] = []
            switch content["urls"] {
            case nil, .null?: break
            case .array(let items)?:
                guard Limits.contentURLs.contains(items.count) else {
                    throw ProtocolError.field("content.urls", "may hold at most \(Limits.contentURLs.upperBound) links")
                }
                for (index, item) in items.enumerated() {
                    guard case .string(let url) = item, url.isWebLink, Limits.contentURL.contains(url.codePointCount) else {
                        throw ProtocolError.field("content.urls", "must hold links, each \(String.webLinkRule), of at most "
                            + "\(Limits.contentURL.upperBound) characters; link \(index + 1) is not: \(item.excerpt(60))")
                    }
                    urls.append(url)
                }
            default: throw ProtocolError.field("content.urls", "must be an array of links")
            }
            return RewardContent(text: text, urls: urls)
        default: throw ProtocolError.field("content", "must be an object {\"text\", \"urls\"}")
        }
    }
}
