import JSON
import Testing

@Suite struct JSONValueTests {
    @Test func literals() {
        let value: JSONValue = ["n": nil, "b": true, "i": 3, "d": 2.5, "s": "x", "a": [1, "two"], "o": ["k": false]]
        #expect(value == .object([
            "n": .null, "b": .bool(true), "i": .int(3), "d": .double(2.5), "s": .string("x"),
            "a": .array([.int(1), .string("two")]), "o": .object(["k": .bool(false)]),
        ]))
        let repeated: JSONValue = ["k": 1, "k": 2]
        #expect(repeated == ["k": 2])
    }

    @Test func accessors() {
        let value: JSONValue = ["name": "Alex", "points": 20, "ratio": 0.5, "whole": 2.0, "ok": true, "list": [10, 20], "none": nil]
        #expect(value["name"]?.stringValue == "Alex")
        #expect(value["points"]?.intValue == 20)
        #expect(value["points"]?.doubleValue == 20)
        #expect(value["ratio"]?.doubleValue == 0.5)
        #expect(value["whole"]?.intValue == nil)
        #expect(value["ok"]?.boolValue == true)
        #expect(value["list"]?[1] == .int(20))
        #expect(value["list"]?[2] == nil)
        #expect(value["list"]?[-1] == nil)
        #expect(value["list"]?.arrayValue == [10, 20])
        #expect(value["none"]?.isNull == true)
        #expect(value["missing"] == nil)
        #expect(value["name"]?["x"] == nil)
        #expect(value[0] == nil)
        #expect(value.objectValue?.count == 7)
        #expect(value["name"]?.intValue == nil)
        #expect(value["name"]?.boolValue == nil)
        #expect(value["name"]?.doubleValue == nil)
        #expect(value["name"]?.arrayValue == nil)
        #expect(value["name"]?.objectValue == nil)
        #expect(value.isNull == false)
    }

    /// Swift's `String` equality takes canonically equivalent spellings for one; JSON on the
    /// wire does not, and a diff that did would leave a client with other bytes than the server.
    @Test(arguments: [("Caf\u{E9}", "Cafe\u{301}"), ("\u{212B}", "\u{C5}"), ("a\u{301}\u{323}", "a\u{323}\u{301}"),
                      ("\u{D55C}", "\u{1112}\u{1161}\u{11AB}")])
    func twoSpellingsOfOneTextAreTwoStrings(first: String, second: String) throws {
        #expect(first == second, "Swift's own equality, which this must not inherit")
        #expect(JSONValue.string(first) != .string(second))
        #expect(JSONValue.object(["t": .string(first)]) != ["t": .string(second)])
        #expect(JSONValue.array([.string(first)]) != [.string(second)])
        #expect(JSONValue.string(first) == .string(String(decoding: Array(first.utf8), as: UTF8.self)), "the same bytes, stored apart")
        let ops = JSONPatch.diff(["t": .string(first), "n": 1], ["t": .string(second), "n": 2])
        #expect(ops.contains(.replace(path: "/t", value: .string(second))), "\(ops)")
        #expect(try JSONPatch.apply(ops, to: ["t": .string(first), "n": 1]).serialized(sortedKeys: true)
                == JSONValue.object(["t": .string(second), "n": 2]).serialized(sortedKeys: true))
        // Long strings, whose storage is not inline, compare by their bytes too.
        let long = String(repeating: "x", count: 100)
        #expect(JSONValue.string(long + first) != .string(long + second))
        #expect(JSONValue.string(long + first) == .string(String(decoding: Array((long + first).utf8), as: UTF8.self)))
        #expect(Set([JSONValue.string(first), .string(second)]).count == 2)
    }

    @Test func intAndDoubleAreDistinct() {
        #expect(JSONValue.int(1) != JSONValue.double(1))
        #expect(Set<JSONValue>([.int(1), .double(1), .int(1)]).count == 2)
    }
}
