import JSON
import Testing

private func parse(_ text: String, maxDepth: Int = 64) throws(JSONParseError) -> JSONValue {
    try JSONParser.parse(text, maxDepth: maxDepth)
}

private func parseError(_ bytes: [UInt8], maxDepth: Int = 64) -> JSONParseError? {
    do throws(JSONParseError) {
        _ = try JSONParser.parse(bytes, maxDepth: maxDepth)
        return nil
    } catch {
        return error
    }
}

private func parseError(_ text: String, maxDepth: Int = 64) -> JSONParseError? {
    parseError(Array(text.utf8), maxDepth: maxDepth)
}

@Suite struct JSONParserTests {
    @Test func scalars() throws {
        #expect(try parse("null") == .null)
        #expect(try parse("true") == .bool(true))
        #expect(try parse("false") == .bool(false))
        #expect(try parse("0") == .int(0))
        #expect(try parse("-12") == .int(-12))
        #expect(try parse("1.5") == .double(1.5))
        #expect(try parse("\"hi\"") == .string("hi"))
    }

    @Test func containersAndWhitespace() throws {
        let value = try parse(" \t\r\n{ \"a\" : [ 1 , 2.5 , { } , [ ] ] , \"b\" : null }\n ")
        #expect(value == ["a": [1, 2.5, [:], []], "b": nil])
        #expect(try parse("[]") == [])
        #expect(try parse("{}") == [:])
        #expect(try parse("[[[]]]") == [[[]]])
    }

    @Test func duplicateKeysLastWins() throws {
        #expect(try parse(#"{"a":1,"a":2,"b":3,"a":4}"#) == ["a": 4, "b": 3])
    }

    @Test func inputKinds() throws {
        let text = #"{"k":[1,"é"]}"#
        let expected: JSONValue = ["k": [1, "é"]]
        #expect(try JSONParser.parse(Array(text.utf8)) == expected)
        #expect(try JSONParser.parse(Array(text.utf8)[...]) == expected)
        #expect(try JSONParser.parse(text.utf8) == expected)
        // Not contiguous: exercises the generic fallback.
        #expect(try JSONParser.parse(Array(text.utf8).lazy.map { $0 }) == expected)
        let padded = Array("xx\(text)yy".utf8)
        #expect(try JSONParser.parse(padded[2..<(padded.count - 2)]) == expected)
    }

    // MARK: Numbers

    @Test func integerEdges() throws {
        #expect(try parse("9223372036854775807") == .int(Int.max))
        #expect(try parse("-9223372036854775808") == .int(Int.min))
        #expect(try parse("9223372036854775808") == .double(9223372036854775808.0))
        #expect(try parse("-9223372036854775809") == .double(-9223372036854775809.0))
        #expect(try parse("123456789012345678901234567890") == .double(1.2345678901234568e29))
        #expect(try parse("-0") == .int(0))
        #expect(try parse("-0.0") == .double(-0.0))
    }

    @Test func fractionsAndExponents() throws {
        #expect(try parse("1e2") == .double(100))
        #expect(try parse("1E+2") == .double(100))
        #expect(try parse("1e-2") == .double(0.01))
        #expect(try parse("0.1") == .double(0.1))
        #expect(try parse("-2.5e-3") == .double(-0.0025))
        #expect(try parse("1.7976931348623157e308") == .double(.greatestFiniteMagnitude))
        #expect(try parse("5e-324") == .double(.leastNonzeroMagnitude))
        // Underflow rounds to zero; documented.
        #expect(try parse("1e-400") == .double(0))
    }

    /// Decision: a number too large for a finite Double is refused, not turned into infinity,
    /// since infinity could not be written back as JSON.
    @Test func overflowingDoubleIsRefused() {
        #expect(parseError("1e400") == JSONParseError(kind: .numberOutOfRange, offset: 0, byte: UInt8(ascii: "1")))
        #expect(parseError("[-1e400]")?.kind == .numberOutOfRange)
        #expect(parseError("[-1e400]")?.offset == 1)
    }

    @Test(arguments: ["01", "-01", "00", "1.", "1.e3", ".5", "+1", "1e", "1e+", "-", "--1", "0x10", "1.5.2", "NaN", "Infinity", "-Infinity"])
    func malformedNumbers(_ text: String) {
        let error = parseError(text)
        #expect(error != nil, "\(text) should fail")
        #expect([.syntax, .unexpectedEnd, .trailingData].contains(error?.kind), "\(text): \(String(describing: error))")
    }

    // MARK: Strings

    @Test func escapes() throws {
        #expect(try parse(#""\"\\\/\b\f\n\r\t""#) == .string("\"\\/\u{08}\u{0C}\n\r\t"))
        #expect(try parse(#""\u0041\u00e9\u20AC\u0000""#) == .string("Aé€\u{0}"))
        #expect(try parse(#""\uD83D\uDE00""#) == .string("😀"))
        #expect(try parse(#""\udbff\udfff""#) == .string("\u{10FFFF}"))
        #expect(try parse(#""a\u00e9b😀c""#) == .string("aéb😀c"))
        #expect(try parse("\"raw é € 😀\"") == .string("raw é € 😀"))
    }

    @Test(arguments: [#""\uD83D""#, #""\uDE00""#, #""\uD83D\u0041""#, #""\uD83Dx""#, #""\uD83D\n""#, #""\uDE00\uD83D""#])
    func loneSurrogates(_ text: String) {
        #expect(parseError(text)?.kind == .loneSurrogate, "\(text)")
    }

    @Test(arguments: [#""\x""#, #""\U0041""#, #""\u00G0""#, #""\u12""#, #""\'""#])
    func invalidEscapes(_ text: String) {
        #expect(parseError(text)?.kind == .invalidEscape, "\(text)")
    }

    @Test func controlCharactersMustBeEscaped() {
        for byte in UInt8(0)..<0x20 {
            let error = parseError([0x22, 0x61, byte, 0x22])
            #expect(error == JSONParseError(kind: .controlCharacter, offset: 2, byte: byte))
        }
        // After an escape the slow path must check too.
        #expect(parseError([0x22, 0x5C, 0x6E, 0x0A, 0x22])?.kind == .controlCharacter)
        // DEL is not a control character for JSON.
        #expect((try? JSONParser.parse([0x22, 0x7F, 0x22])) == .string("\u{7F}"))
    }

    // MARK: UTF-8

    @Test(arguments: [
        [0xC0, 0x80],             // overlong NUL
        [0xC1, 0xBF],             // overlong
        [0xE0, 0x80, 0xAF],       // overlong '/'
        [0xF0, 0x80, 0x80, 0xAF], // overlong '/'
        [0xED, 0xA0, 0x80],       // U+D800 encoded
        [0xED, 0xBF, 0xBF],       // U+DFFF encoded
        [0xF4, 0x90, 0x80, 0x80], // above U+10FFFF
        [0xF5, 0x80, 0x80, 0x80],
        [0xFF],
        [0x80],                   // lone continuation
        [0xC3],                   // truncated
        [0xE2, 0x82],             // truncated
        [0xF0, 0x9F, 0x98],       // truncated
        [0xE2, 0x28, 0xA1],       // bad continuation
    ] as [[UInt8]])
    func invalidUTF8InStrings(_ sequence: [UInt8]) {
        let inString = [0x22, 0x61] + sequence + [0x22]
        #expect(parseError(inString) == JSONParseError(kind: .invalidUTF8, offset: 2, byte: sequence[0]))
        // After an escape, i.e. on the slow path.
        let afterEscape = [0x22, 0x5C, 0x6E] + sequence + [0x22]
        #expect(parseError(afterEscape)?.kind == .invalidUTF8)
        // Truncated at the very end of input.
        #expect(parseError([0x22] + sequence)?.kind == .invalidUTF8)
        // Outside strings, in any position.
        #expect(parseError(sequence)?.kind == .invalidUTF8)
        #expect(parseError([0x5B] + sequence + [0x5D])?.kind == .invalidUTF8)
        #expect(parseError(Array(#"{"a":1}"#.utf8) + sequence)?.kind == .invalidUTF8)
        #expect(parseError([0x22, 0x5C, 0x75, 0x30] + sequence)?.kind == .invalidUTF8)
    }

    @Test func validMultibyteBoundaries() throws {
        for scalar: Unicode.Scalar in ["\u{80}", "\u{7FF}", "\u{800}", "\u{D7FF}", "\u{E000}", "\u{FFFF}", "\u{10000}", "\u{10FFFF}"] {
            let text = "\"\(scalar)\""
            #expect(try parse(text) == .string(String(scalar)))
        }
    }

    @Test func validUTF8OutsideStringIsSyntax() {
        #expect(parseError("é") == JSONParseError(kind: .syntax, offset: 0, byte: 0xC3))
    }

    // MARK: Structure errors

    @Test(arguments: ["", " ", "\n\r\t "])
    func empty(_ text: String) {
        #expect(parseError(text) == JSONParseError(kind: .empty, offset: text.utf8.count))
    }

    @Test(arguments: ["[", "[1", "[1,", "{", "{\"a\"", "{\"a\":", "{\"a\":1", "\"abc", "\"a\\", "\"\\u00", "tru", "nul", "-", "1.", "1e"])
    func unexpectedEnd(_ text: String) {
        #expect(parseError(text) == JSONParseError(kind: .unexpectedEnd, offset: text.utf8.count), "\(text)")
    }

    @Test func syntaxErrorsPointAtTheByte() {
        #expect(parseError("[1,]") == JSONParseError(kind: .syntax, offset: 3, byte: UInt8(ascii: "]")))
        #expect(parseError("[1 2]") == JSONParseError(kind: .syntax, offset: 3, byte: UInt8(ascii: "2")))
        #expect(parseError("{\"a\" 1}") == JSONParseError(kind: .syntax, offset: 5, byte: UInt8(ascii: "1")))
        #expect(parseError("{a:1}") == JSONParseError(kind: .syntax, offset: 1, byte: UInt8(ascii: "a")))
        #expect(parseError("{\"a\":1,}") == JSONParseError(kind: .syntax, offset: 7, byte: UInt8(ascii: "}")))
        #expect(parseError("[1}") == JSONParseError(kind: .syntax, offset: 2, byte: UInt8(ascii: "}")))
        #expect(parseError("{\"a\":1]") == JSONParseError(kind: .syntax, offset: 6, byte: UInt8(ascii: "]")))
        #expect(parseError("trux") == JSONParseError(kind: .syntax, offset: 3, byte: UInt8(ascii: "x")))
        #expect(parseError("x") == JSONParseError(kind: .syntax, offset: 0, byte: UInt8(ascii: "x")))
        #expect(parseError("\u{FEFF}{}")?.kind == .syntax)
        #expect(parseError("[\u{0B}]")?.kind == .syntax)
    }

    @Test func trailingData() {
        #expect(parseError("{} x") == JSONParseError(kind: .trailingData, offset: 3, byte: UInt8(ascii: "x")))
        #expect(parseError("1 2") == JSONParseError(kind: .trailingData, offset: 2, byte: UInt8(ascii: "2")))
        #expect(parseError("[]]")?.kind == .trailingData)
        #expect(parseError("null\0")?.kind == .trailingData)
    }

    @Test func descriptions() {
        #expect(parseError("[1,\n  x]")?.description == "unexpected character 'x' at byte 6")
        #expect(parseError("[1,\u{01}]")?.description == "unexpected byte 0x01 at byte 3")
        #expect(parseError("")?.description == "empty input: no JSON value")
        #expect(parseError("[")?.description == "unexpected end of input at byte 1")
        #expect(parseError([0x22, 0xFF, 0x22])?.description == "invalid UTF-8 at byte 1")
        #expect(parseError("{}}")?.description == "unexpected character '}' after the JSON value at byte 2")
        #expect(parseError("[[1]]", maxDepth: 1)?.description == "nesting too deep at byte 1")
    }

    // MARK: Depth

    @Test func depthLimitCountsOpenContainers() throws {
        #expect(try parse("[[]]", maxDepth: 2) == [[]])
        #expect(parseError("[[]]", maxDepth: 1) == JSONParseError(kind: .tooDeep, offset: 1, byte: UInt8(ascii: "[")))
        #expect(try parse(#"{"a":{"b":1}}"#, maxDepth: 2) == ["a": ["b": 1]])
        #expect(parseError(#"{"a":{"b":{}}}"#, maxDepth: 2)?.kind == .tooDeep)
        #expect(try parse("7", maxDepth: 0) == 7)
        #expect(parseError("[]", maxDepth: 0)?.kind == .tooDeep)
        let sixtyFour = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(try parse(sixtyFour).arrayValue != nil)
        let sixtyFive = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(parseError(sixtyFive) == JSONParseError(kind: .tooDeep, offset: 64, byte: UInt8(ascii: "[")))
    }

    @Test func hostileNestingFailsWithoutRecursion() {
        let brackets = [UInt8](repeating: UInt8(ascii: "["), count: 100_000)
        #expect(parseError(brackets)?.kind == .tooDeep)
        let braces = [UInt8](repeating: 0, count: 100_000).indices.flatMap { _ in Array(#"{"a":"#.utf8) }
        #expect(parseError(braces)?.kind == .tooDeep)
    }

    @Test func deepNestingWithinAGenerousLimitIsIterative() throws {
        // Far deeper than a recursive parser's stack would survive in a debug build.
        let depth = 100_000
        let text = [UInt8](repeating: UInt8(ascii: "["), count: depth) + [UInt8](repeating: UInt8(ascii: "]"), count: depth)
        var value = try JSONParser.parse(text, maxDepth: depth)
        var levels = 0
        // Unwrap level by level so the value is also torn down iteratively.
        while case .array(let inner) = value, let first = inner.first {
            levels += 1
            value = first
        }
        #expect(levels == depth - 1)
        #expect(parseError(text, maxDepth: depth - 1)?.kind == .tooDeep)
    }
}
