import Domain
import JSON

/// A seed file that cannot be used, with every problem found (file, field path, what is wrong).
public struct SeedError: Error, Sendable, CustomStringConvertible {
    public var file: String
    public var problems: [SeedProblem]

    public init(file: String, problems: [SeedProblem]) {
        self.file = file
        self.problems = problems
    }

    public var description: String { problems.map { "\(file): \($0)" }.joined(separator: "\n") }
}

/// Reads the seed format of docs/seed.md. Unknown fields are errors: in a file
/// a person wrote by hand, a misspelt field is a mistake, not an extension.
public enum SeedParser {
    /// `rules: .structure` reads content that met the rules when it was logged: a replay must
    /// read a log as it was written, not judge its seed by bounds tightened since (an older
    /// log would then stop a start-up), while a seed that is no game at all is still refused.
    /// The fields' types are checked either way.
    public static func parse(_ json: JSONValue, file: String, rules: SeedRules = .all) throws(SeedError) -> SeedContent {
        var reader = SeedReader()
        let content = reader.content(json)
        var problems = reader.problems
        if problems.isEmpty, let content { problems = content.problems(rules) }
        guard problems.isEmpty, let content else { throw SeedError(file: file, problems: problems) }
        return content
    }
}

private struct SeedReader {
    var problems: [SeedProblem] = []

    mutating func problem(_ path: String, _ message: String) {
        problems.append(SeedProblem(path: path, message: message))
    }

    mutating func object(_ value: JSONValue?, _ path: String, allowed: Set<String>) -> [String: JSONValue]? {
        guard let value else { problem(path, "is required"); return nil }
        guard case .object(let fields) = value else { problem(path, "must be an object, got \(typeName(value))"); return nil }
        for key in fields.keys.sorted() where !allowed.contains(key) {
            problem(path.isEmpty ? key : "\(path).\(key)", "unknown field")
        }
        return fields
    }

    mutating func string(_ fields: [String: JSONValue], _ key: String, _ path: String, optional: Bool = false) -> String? {
        let fieldPath = path.isEmpty ? key : "\(path).\(key)"
        switch fields[key] {
        case .string(let text)?: return text
        case nil, .null?:
            if !optional { problem(fieldPath, "is required") }
            return nil
        case let other?: problem(fieldPath, "must be a string, got \(typeName(other))"); return nil
        }
    }

    mutating func int(_ fields: [String: JSONValue], _ key: String, _ path: String, optional: Bool = false, positive: Bool = false) -> Int? {
        let fieldPath = path.isEmpty ? key : "\(path).\(key)"
        switch fields[key] {
        case .int(let number)?:
            if positive && number <= 0 { problem(fieldPath, "must be a positive integer, got \(number)"); return nil }
            return number
        case nil, .null?:
            if !optional { problem(fieldPath, "is required") }
            return nil
        case let other?: problem(fieldPath, "must be \(positive ? "a positive integer" : "an integer"), got \(describe(other))"); return nil
        }
    }

    mutating func enumValue<E: RawRepresentable<String> & CaseIterable>(_ fields: [String: JSONValue], _ key: String, _ path: String, as: E.Type) -> E? {
        guard let raw = string(fields, key, path) else { return nil }
        // Written by hand: `Easy` is meant as `easy`, as the console takes it.
        guard let value = E(rawValue: raw) ?? E(rawValue: raw.lowercased()) else {
            problem("\(path).\(key)", "must be one of \(E.allCases.map(\.rawValue).joined(separator: ", ")), got \"\(raw)\"")
            return nil
        }
        return value
    }

    mutating func array(_ fields: [String: JSONValue], _ key: String, _ path: String) -> [JSONValue]? {
        let fieldPath = path.isEmpty ? key : "\(path).\(key)"
        switch fields[key] {
        case .array(let items)?: return items
        case nil: problem(fieldPath, "is required"); return nil
        case let other?: problem(fieldPath, "must be an array, got \(typeName(other))"); return nil
        }
    }

    mutating func content(_ json: JSONValue) -> SeedContent? {
        guard let root = object(json, "", allowed: ["format", "game", "characters", "challenges", "rewards"]) else { return nil }
        if let format = int(root, "format", ""), format != 1 { problem("format", "must be 1, got \(format)") }
        let game = object(root["game"], "game", allowed: ["title", "day"])
        let title = game.flatMap { string($0, "title", "game") }
        let day = game.flatMap { int($0, "day", "game", optional: true) } ?? 1
        let characters = (array(root, "characters", "") ?? []).enumerated().compactMap { character($1, "characters[\($0)]") }
        let challenges = (array(root, "challenges", "") ?? []).enumerated().compactMap { challenge($1, "challenges[\($0)]") }
        let rewards = (array(root, "rewards", "") ?? []).enumerated().compactMap { reward($1, "rewards[\($0)]") }
        guard let title else { return nil }
        return SeedContent(title: title, day: day, characters: characters, challenges: challenges, rewards: rewards)
    }

    mutating func character(_ json: JSONValue, _ path: String) -> SeedCharacter? {
        guard let fields = object(json, path, allowed: ["id", "name", "role", "tagline", "fun_facts", "pin"]) else { return nil }
        let id = string(fields, "id", path)
        let name = string(fields, "name", path)
        let role = enumValue(fields, "role", path, as: Role.self)
        let tagline = string(fields, "tagline", path)
        let pin = string(fields, "pin", path, optional: true)
        var facts: [String] = []
        if let items = array(fields, "fun_facts", path) {
            for (index, item) in items.enumerated() {
                if case .string(let fact) = item { facts.append(fact) } else { problem("\(path).fun_facts[\(index)]", "must be a string, got \(typeName(item))") }
            }
        }
        guard let id, let name, let role, let tagline else { return nil }
        return SeedCharacter(id: id, name: name, role: role, tagline: tagline, funFacts: facts, pin: pin)
    }

    mutating func challenge(_ json: JSONValue, _ path: String) -> SeedChallenge? {
        guard let fields = object(json, path, allowed: ["id", "title", "description", "option_b", "points", "difficulty", "category"]) else { return nil }
        let id = string(fields, "id", path)
        let title = string(fields, "title", path)
        let description = string(fields, "description", path)
        let points = int(fields, "points", path, positive: true)
        let difficulty = enumValue(fields, "difficulty", path, as: Difficulty.self)
        let category = enumValue(fields, "category", path, as: Category.self)
        var optionB: OptionText?
        if let raw = fields["option_b"], raw != .null, let option = object(raw, "\(path).option_b", allowed: ["title", "description"]) {
            let optionTitle = string(option, "title", "\(path).option_b")
            let optionDescription = string(option, "description", "\(path).option_b")
            if let optionTitle, let optionDescription { optionB = OptionText(title: optionTitle, description: optionDescription) }
        }
        guard let id, let title, let description, let points, let difficulty, let category else { return nil }
        return SeedChallenge(id: id, fields: ChallengeFields(title: title, description: description, optionB: optionB,
                                                              points: points, difficulty: difficulty, category: category))
    }

    mutating func reward(_ json: JSONValue, _ path: String) -> SeedReward? {
        guard let fields = object(json, path, allowed: ["id", "from", "from_character", "title", "teaser", "type", "cost", "content"]) else { return nil }
        let id = string(fields, "id", path)
        let from = string(fields, "from", path)
        let fromCharacter = string(fields, "from_character", path, optional: true)
        let title = string(fields, "title", path)
        let teaser = string(fields, "teaser", path)
        let type = enumValue(fields, "type", path, as: RewardType.self)
        let cost = int(fields, "cost", path, optional: true)
        var content: RewardContent?
        if let raw = fields["content"], raw != .null, let body = object(raw, "\(path).content", allowed: ["text", "urls"]) {
            let text = string(body, "text", "\(path).content", optional: true)
            var urls: [String] = []
            if body["urls"] != nil, let items = array(body, "urls", "\(path).content") {
                for (index, item) in items.enumerated() {
                    if case .string(let url) = item { urls.append(url) } else { problem("\(path).content.urls[\(index)]", "must be a string, got \(typeName(item))") }
                }
            }
            content = RewardContent(text: text, urls: urls)
        }
        guard let id, let from, let title, let teaser, let type else { return nil }
        return SeedReward(id: id, fields: RewardFields(from: from, fromCharacter: fromCharacter, title: title, teaser: teaser,
                                                      type: type, cost: cost, content: content ?? RewardContent(text: nil, urls: [])))
    }
}

func typeName(_ value: JSONValue) -> String {
    switch value {
    case .null: return "null"
    case .bool: return "a boolean"
    case .int, .double: return "a number"
    case .string: return "a string"
    case .array: return "an array"
    case .object: return "an object"
    }
}

func describe(_ value: JSONValue) -> String {
    switch value {
    case .double(let number): return "\(number)"
    // A number in quotes is text to JSON: said, since it looks like the number it is not.
    case .string(let text): return "a string, \"\(text)\""
    default: return typeName(value)
    }
}
