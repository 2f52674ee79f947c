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

    @Test func intAndDoubleAreDistinct() {
        #expect(JSONValue.int(1) != JSONValue.double(1))
        #expect(Set<JSONValue>([.int(1), .double(1), .int(1)]).count == 2)
    }
}
