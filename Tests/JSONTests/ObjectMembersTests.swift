import JSON
import SeededRandom
import Testing

/// `parseObjectMembers` is `parse` for the requests of the wire, without a dictionary at the top:
/// it must give members exactly when `parse` gives an object of at most `maxMembers` names, and
/// the same ones.
@Suite struct ObjectMembersTests {
    /// True when both agree on `bytes`, at this depth limit.
    private func agrees(_ bytes: [UInt8], maxDepth: Int = 64) -> Bool {
        let members = JSONParser.parseObjectMembers(bytes, maxDepth: maxDepth)
        guard case .object(let object)? = try? JSONParser.parse(bytes, maxDepth: maxDepth) else { return members == nil }
        guard let members else { return false }  // the random objects here have at most 6 names
        let keys = members.map(\.key)
        return Set(keys).count == keys.count && object == Dictionary(uniqueKeysWithValues: members.map { ($0.key, $0.value) })
    }

    private func agrees(_ text: String, maxDepth: Int = 64) -> Bool { agrees(Array(text.utf8), maxDepth: maxDepth) }

    @Test func readsTheMembersInTheOrderWritten() throws {
        let text = #" { "id" : 7 , "op":"ping","a":true,"b":false,"c":null,"d":-0,"e":"\u00e9\n\"","f":[1,{"g":2.5}] } "#
        let members = try #require(JSONParser.parseObjectMembers(Array(text.utf8)))
        #expect(members.map(\.key) == ["id", "op", "a", "b", "c", "d", "e", "f"])
        #expect(members.map(\.value) == [7, "ping", true, false, nil, 0, "é\n\"", [1, ["g": 2.5]]])
        #expect(try #require(JSONParser.parseObjectMembers(Array("{}".utf8))).isEmpty)
        #expect(agrees(text))
    }

    /// Past `maxMembers` names the list gives way to `parse`: a hostile line of thousands of
    /// names must not cost their square on the loop thread.
    @Test func manyNamesAreLeftToParse() {
        let names = (0..<40).map { "\"k\($0)\":\($0)" }
        let line = Array(("{" + names.joined(separator: ",") + "}").utf8)
        #expect(JSONParser.parseObjectMembers(line, maxMembers: 40)?.count == 40)
        #expect(JSONParser.parseObjectMembers(line, maxMembers: 39) == nil)
        #expect(JSONParser.parseObjectMembers(line) == nil, "more than the default 32")
        let repeated = Array(("{" + Array(repeating: #""a":1"#, count: 100).joined(separator: ",") + "}").utf8)
        #expect(JSONParser.parseObjectMembers(repeated)?.count == 1, "one name, however often")
    }

    @Test func memberNamesListsARepeatedNameEachTimeItIsWritten() {
        #expect(JSONParser.memberNames(Array(#"{"a": 1, "b": {"a": 2}, "a": 3}"#.utf8)) == ["a", "b", "a"])
        #expect(JSONParser.memberNames(Array("{}".utf8)) == [])
        #expect(JSONParser.memberNames(Array("[1]".utf8)) == nil)
        #expect(JSONParser.memberNames(Array(#"{"a": 1"#.utf8)) == nil)
    }

    @Test func aRepeatedNameKeepsItsLastValueAsParseDoes() throws {
        let members = try #require(JSONParser.parseObjectMembers(Array(#"{"a":1,"b":2,"a":{"c":3}}"#.utf8)))
        #expect(members.map(\.key) == ["a", "b"])
        #expect(members.map(\.value) == [["c": 3], 2])
        #expect(agrees(#"{"a":1,"b":2,"a":{"c":3}}"#))
    }

    /// The object is the first level of the depth limit, as in `parse`.
    @Test func keepsTheDepthLimitOfParse() {
        #expect(JSONParser.parseObjectMembers(Array(#"{"a":[[1]]}"#.utf8), maxDepth: 3) != nil)
        #expect(JSONParser.parseObjectMembers(Array(#"{"a":[[1]]}"#.utf8), maxDepth: 2) == nil)
        #expect(JSONParser.parseObjectMembers(Array("{}".utf8), maxDepth: 0) == nil)
        for depth in 0...4 { #expect(agrees(#"{"a":[[1]],"b":{}}"#, maxDepth: depth)) }
    }

    /// Anything but a valid object is left to `parse`, which says what is wrong.
    @Test(arguments: [
        #"[1]"#, #""a""#, "1", "null", "", " ", "{", #"{"a"}"#, #"{"a":}"#, #"{"a":1,}"#, #"{"a":1}x"#, #"{"a":1}{}"#,
        #"{"a":01}"#, #"{"a":-}"#, #"{"a":tru}"#, #"{"a":"b}"#, "{\"a\":\"\u{01}\"}", #"{a:1}"#, #"{"a":1 "b":2}"#,
        #"{"a":"\x"}"#, #"{"a":"\ud800"}"#, #"{"a":1}}"#, #"{"a":1e400}"#, #"{"a":[1,]}"#, "{\"a\":1}\u{0B}",
    ])
    func leavesWhatIsNotAnObjectToParse(text: String) {
        #expect(JSONParser.parseObjectMembers(Array(text.utf8)) == nil)
        #expect(agrees(text))
    }

    @Test func leavesInvalidUTF8ToParse() {
        for bytes: [UInt8] in [[0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xC3, 0x22, 0x7D], [0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D],
                               [0xEF, 0xBB, 0xBF, 0x7B, 0x7D]] {
            #expect(JSONParser.parseObjectMembers(bytes) == nil)
        }
    }

    /// Random objects, nested and flat, with random white space and repeated names, and the same
    /// texts with one byte changed: both agree on every one.
    @Test func agreesWithParseOnRandomTexts() {
        var rng = SplitMix64(seed: 0xF1A7)
        var objects = 0
        for _ in 0..<20_000 {
            let names = ["id", "op", "idem", "a", "é", "a\"b", ""]
            var text = rng.pick(["", " ", "\n"]) + "{"
            for index in 0..<rng.int(0...6) {
                if index > 0 { text += rng.pick([",", " ,", ", ", "\t,\r\n"]) }
                var name: [UInt8] = []
                JSONValue.writeQuotedString(rng.pick(names), into: &name)
                let value: JSONValue = rng.chance(20) ? RandomJSON.value(&rng, depth: 3) : RandomJSON.scalar(&rng)
                text += String(decoding: name, as: UTF8.self) + rng.pick([":", " : "]) + value.serialized()
            }
            text += "}" + rng.pick(["", " ", "\r\n"])
            var bytes = Array(text.utf8)
            if rng.chance(20), !bytes.isEmpty {
                bytes[rng.below(bytes.count)] = rng.pick([0x22, 0x5C, 0x2C, 0x7D, 0x7B, 0x5B, 0x31, 0x2E, 0x00, 0x80, 0xC3, 0x20])
            }
            let maxDepth = rng.pick([1, 2, 3, 64])
            #expect(agrees(bytes, maxDepth: maxDepth), "\(String(decoding: bytes, as: UTF8.self)) at depth \(maxDepth)")
            if JSONParser.parseObjectMembers(bytes, maxDepth: maxDepth) != nil { objects += 1 }
        }
        #expect(objects > 10_000)
    }
}
