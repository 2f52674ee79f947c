import JSON
import SeededRandom
import Testing
@testable import Protocol

/// A line is decoded from its members as a list (`JSONParser.parseObjectMembers`), not from a
/// parsed tree: the request, its fingerprint and every refusal must be exactly what the tree gives.
@Suite struct MemberListTests {
    private static let maxDepth = 32

    /// The road every line took before the shortcut.
    private func throughTheTree(_ line: [UInt8]) -> Result<Request, RequestFailure> {
        do {
            return RequestDecoder.decode(try JSONParser.parse(line, maxDepth: Self.maxDepth))
        } catch {
            return .failure(RequestFailure(id: nil, error: ProtocolError(.badJSON, "Not a JSON object: \(error)")))
        }
    }

    /// The requests of a game decode as through the tree.
    @Test(arguments: [
        #"{"id":1,"op":"adjust_points","delta":1,"reason":"bench","idem":"k1"}"#,
        #"{"id":"a","op":"save_secret","title":"Dare","description":"Sing","points":50,"idem":"k2","expect":4}"#,
        #"{"id":3,"op":"unlock_reward","reward":"r1","idem":"k3"}"#,
        #"{"id":4,"op":"complete_challenge","challenge":"c01","proof":{"kind":"text","text":"x"},"idem":"k4","option":"b"}"#,
        #"{"id":5.0,"op":"save_reward","from":"Mia","title":"T","teaser":"t","type":"text","cost":3e1,"content":{"urls":[]},"idem":"k5"}"#,
        #"{"id":4,"op":"state"}"#,
        "{\"id\":8,\"op\":\"adjust_points\",\"delta\":2,\"reason\":\"many\",\"idem\":\"k8\","
            + (0..<40).map { "\"x\($0)\":\($0)" }.joined(separator: ",") + "}", #"{"id":5,"op":"subscribe","since":12}"#, #"{"id":6,"op":"auth","token":"t"}"#,
    ])
    func requestsDecodeAsThroughTheTree(line: String) throws {
        let bytes = Array(line.utf8)
        let request = try RequestDecoder.decode(line: bytes, maxDepth: Self.maxDepth).get()
        #expect(request == (try throughTheTree(bytes).get()))
    }

    /// Random request lines over every op, with right and wrong members, ids of every kind,
    /// repeated names, numbers spelled with fractions, nested members and damaged bytes.
    @Test func decodesRandomLinesAsTheTreeDoes() {
        var rng = SplitMix64(seed: 0x5EED_F1A7)
        var successes = 0
        for _ in 0..<30_000 {
            let line = Self.randomLine(&rng)
            let result = RequestDecoder.decode(line: line, maxDepth: Self.maxDepth)
            #expect(result == throughTheTree(line), "\(String(decoding: line, as: UTF8.self))")
            if case .success = result { successes += 1 }
        }
        #expect(successes > 8_000)
    }

    private static let names = ["id", "op", "idem", "expect", "delta", "reason", "title", "description", "points", "challenge",
                                "reward", "character", "device", "pin", "day", "deduct", "token", "key", "game", "since",
                                "after", "limit", "option", "proof", "option_b", "difficulty", "category", "type", "from",
                                "teaser", "cost", "content", "from_character", "extra"]

    private static func randomValue(for name: String, _ rng: inout SplitMix64) -> String {
        switch rng.below(12) {
        case 0: return rng.pick(["null", "true", "false", "0", "-1", "1.0", "2e0", "9223372036854775807", "1e400", "{}", "[]"])
        case 1: return #"{"kind":"done"}"#
        case 2: return #"{"title":"B","description":"b"}"#
        case 3: return String(rng.int(-600...600))
        case 4: return rng.pick([#""easy""#, #""hard""#, #""b""#, #""gift""#, #""c01""#, #""r1""#, #""mia""#])
        case 5: return rng.pick([#""\u0041\n\"""#, #""   ""#, #""é😀""#, #""""#, #""\/""#])
        case 6: return "\"" + String(repeating: "x", count: rng.int(1...300)) + "\""
        default:
            if name == "op" { return "\"" + rng.pick(MutationOpsTests.allOps + ["nope"]) + "\"" }
            return "\"" + name.prefix(3) + String(rng.int(0...99)) + "\""
        }
    }

    /// Members that make a valid request of each op (most of the lines decode).
    private static func validMembers(of op: String, _ rng: inout SplitMix64) -> [String] {
        let text = { (rng: inout SplitMix64) in rng.pick([#""Sing""#, #""a \"b\"\n""#, #""é😀""#, #""\u0041""#]) }
        switch op {
        case "adjust_points": return [#""delta":\#(rng.pick([-5, 1, 100]))"#, #""reason":"# + text(&rng)]
        case "save_secret": return [#""title":"# + text(&rng), #""description":"# + text(&rng), #""points":\#(rng.pick([25, 50, 100]))"#]
        case "unlock_reward", "force_unlock": return [#""reward":"r\#(rng.int(1...9))""#, #""deduct":\#(rng.chance(50))"#]
        case "complete_challenge", "force_complete": return [#""challenge":"c01""#, #""option":"b""#, #""proof":{"kind":"done"}"#]
        case "set_day": return [#""day":\#(rng.int(1...3))"#]
        case "unclaim", "claim": return [#""character":"mia""#, #""device":"d1""#, #""pin":"1234""#]
        case "subscribe": return [#""since":\#(rng.int(0...9))"#]
        case "timeline", "events": return [#""after":\#(rng.int(0...9))"#, #""limit":\#(rng.int(1...50))"#]
        case "auth": return [#""token":"t""#]
        case "admin": return [#""key":"k""#]
        default: return []
        }
    }

    private static func randomLine(_ rng: inout SplitMix64) -> [UInt8] {
        let op = rng.pick(MutationOpsTests.allOps)
        var members = [#""id":"# + rng.pick(["7", #""x""#, "3.0", "null", "true", "-0", "1.5", "42"]), #""op":"\#(op)""#]
        members += validMembers(of: op, &rng).filter { _ in rng.chance(90) }
        if rng.chance(30) {
            for _ in 0..<rng.int(1...3) {
                let name = rng.pick(names)
                members.append("\"\(name)\":" + randomValue(for: name, &rng))
            }
        }
        if rng.chance(80) { members.append(#""idem":"k\#(rng.int(0...9))""#) }
        if rng.chance(30) { members.append(#""expect":"# + rng.pick(["3", "0", "null", "2.0", "-1"])) }
        if rng.chance(5) { members.removeFirst() }
        members.shuffle(using: &rng)
        let separator = rng.pick([",", ", ", " ,\n"])
        var bytes = Array(("{" + members.joined(separator: separator) + "}").utf8)
        if rng.chance(5), !bytes.isEmpty {
            bytes[rng.below(bytes.count)] = rng.pick([0x22, 0x5C, 0x2C, 0x7D, 0x3A, 0x31, 0x80, 0x20])
        }
        return bytes
    }
}
