import JSON
import Testing

@Suite struct JSONSerializerTests {
    @Test func compactOutput() {
        #expect(JSONValue.null.serialized() == "null")
        #expect(JSONValue.bool(false).serialized() == "false")
        #expect(JSONValue.int(Int.min).serialized() == "-9223372036854775808")
        #expect(JSONValue.int(Int.max).serialized() == "9223372036854775807")
        #expect(JSONValue.int(0).serialized() == "0")
        #expect(JSONValue.int(-7).serialized() == "-7")
        #expect(([1, [2, []], [:]] as JSONValue).serialized() == "[1,[2,[]],{}]")
        #expect((["b": 1, "a": ["d": nil, "c": true]] as JSONValue).serialized(sortedKeys: true) == #"{"a":{"c":true,"d":null},"b":1}"#)
    }

    @Test func doubles() {
        #expect(JSONValue.double(0.1).serialized() == "0.1")
        #expect(JSONValue.double(2).serialized() == "2.0")
        #expect(JSONValue.double(-0.0).serialized() == "-0.0")
        #expect(JSONValue.double(1e300).serialized() == "1e+300")
        #expect(JSONValue.double(.nan).serialized() == "null")
        #expect(JSONValue.double(.infinity).serialized() == "null")
        #expect(JSONValue.double(-.infinity).serialized() == "null")
    }

    @Test func escaping() {
        #expect(JSONValue.string("a\"b\\c/d").serialized() == #""a\"b\\c/d""#)
        #expect(JSONValue.string("\n\r\t\u{08}\u{0C}").serialized() == #""\n\r\t\b\f""#)
        #expect(JSONValue.string("\u{00}\u{01}\u{1F}\u{7F}").serialized() == "\"\\u0000\\u0001\\u001f\u{7F}\"")
        #expect(JSONValue.string("é€😀\u{2028}").serialized() == "\"é€😀\u{2028}\"")
        #expect((["k\n": "v"] as JSONValue).serialized() == #"{"k\n":"v"}"#)
    }

    @Test func escapeHelpers() throws {
        var buffer = Array(#"{"name":"#.utf8)
        JSONValue.writeQuotedString("A \"b\"", into: &buffer)
        buffer.append(UInt8(ascii: ","))
        buffer += #""n":"#.utf8
        JSONValue.writeInt(-42, into: &buffer)
        buffer += #","raw":""#.utf8
        JSONValue.escapeString("x\ty", into: &buffer)
        buffer += "\"}".utf8
        #expect(String(decoding: buffer, as: UTF8.self) == #"{"name":"A \"b\"","n":-42,"raw":"x\ty"}"#)
        #expect(try JSONParser.parse(buffer) == ["name": "A \"b\"", "n": -42, "raw": "x\ty"])
    }

    @Test func bridgedAndSubstringBackedStringsEscapeToo() {
        // A string whose UTF-8 is not contiguous storage goes through the copying path.
        let original = "line1\nline2 é"
        var buffer: [UInt8] = []
        JSONValue.escapeString(String(original.utf16.map { Character(Unicode.Scalar($0)!) }), into: &buffer)
        #expect(String(decoding: buffer, as: UTF8.self) == #"line1\nline2 é"#)
    }

    @Test func writeAppends() {
        var buffer = Array("prefix:".utf8)
        (["a": [1, 2]] as JSONValue).write(to: &buffer)
        #expect(String(decoding: buffer, as: UTF8.self) == #"prefix:{"a":[1,2]}"#)
    }
}
