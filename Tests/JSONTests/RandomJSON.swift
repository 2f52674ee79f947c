import JSON
import SeededRandom

/// Generators of random documents for property tests.
enum RandomJSON {
    /// Strings that exercise escapes, multi-byte UTF-8 and astral scalars.
    static func string(_ rng: inout SplitMix64) -> String {
        let alphabet: [Unicode.Scalar] = [
            "a", "b", "z", "0", " ", "\"", "\\", "/", "~", "\n", "\r", "\t", "\u{08}", "\u{0C}", "\u{00}",
            "\u{1F}", "\u{7F}", "é", "ß", "€", "\u{2028}", "\u{FFFD}", "\u{FEFF}", "😀", "\u{10FFFF}",
        ]
        let length = Int.random(in: 0...12, using: &rng)
        var result = ""
        for _ in 0..<length { result.unicodeScalars.append(alphabet.randomElement(using: &rng)!) }
        return result
    }

    static func scalar(_ rng: inout SplitMix64) -> JSONValue {
        switch Int.random(in: 0..<8, using: &rng) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &rng))
        case 2: return .int(Int.random(in: -1000...1000, using: &rng))
        case 3: return .int([Int.max, Int.min, 0, -1, Int(Int32.max) + 1].randomElement(using: &rng)!)
        case 4: return .double(Double.random(in: -1e6...1e6, using: &rng))
        case 5:
            // Bit patterns cover subnormals and huge exponents; non-finite values are skipped
            // because JSON cannot carry them.
            let bits = Double(bitPattern: rng.next())
            return .double(bits.isFinite ? bits : 0.5)
        default: return .string(string(&rng))
        }
    }

    /// Any JSON value, nested at most `depth` levels.
    static func value(_ rng: inout SplitMix64, depth: Int) -> JSONValue {
        if depth == 0 || Int.random(in: 0..<3, using: &rng) == 0 { return scalar(&rng) }
        let count = Int.random(in: 0...5, using: &rng)
        if Bool.random(using: &rng) {
            return .array((0..<count).map { _ in value(&rng, depth: depth - 1) })
        }
        var members: [String: JSONValue] = [:]
        for _ in 0..<count { members[string(&rng)] = value(&rng, depth: depth - 1) }
        return .object(members)
    }

    /// A view-shaped document: objects of objects with scalars and a growing "timeline" array.
    static func viewLike(_ rng: inout SplitMix64) -> JSONValue {
        var root: [String: JSONValue] = [:]
        for index in 0..<Int.random(in: 1...4, using: &rng) {
            var section: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0...4, using: &rng) {
                section[pick(&rng)] = Bool.random(using: &rng) ? scalar(&rng) : ["x": scalar(&rng)]
            }
            root["s\(index)/\(pick(&rng))"] = .object(section)
        }
        root["timeline"] = .array((0..<Int.random(in: 0...3, using: &rng)).map { .int($0) })
        return .object(root)
    }

    /// A successor of `view`: members added, removed and changed, the timeline extended.
    static func evolve(_ view: JSONValue, _ rng: inout SplitMix64) -> JSONValue {
        guard case .object(var root) = view else { return view }
        for key in root.keys.sorted() where key != "timeline" {
            switch Int.random(in: 0..<5, using: &rng) {
            case 0: root[key] = nil
            case 1: root[key] = scalar(&rng)
            case 2:
                if case .object(var section) = root[key] {
                    section[pick(&rng)] = scalar(&rng)
                    if let victim = section.keys.sorted().first, Bool.random(using: &rng) { section[victim] = nil }
                    root[key] = .object(section)
                }
            default: break
            }
        }
        if Bool.random(using: &rng) { root["new~\(pick(&rng))"] = ["a": 1] }
        if case .array(var timeline) = root["timeline"] {
            for _ in 0..<Int.random(in: 0...3, using: &rng) { timeline.append(["seq": .int(timeline.count)]) }
            root["timeline"] = .array(timeline)
        }
        return .object(root)
    }

    private static func pick(_ rng: inout SplitMix64) -> String {
        ["a", "b", "c", "d", "~", "/", "a/b", "~1", "é", ""].randomElement(using: &rng)!
    }
}
