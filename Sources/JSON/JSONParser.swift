/// Strict RFC 8259 parser.
///
/// - Every byte is checked: invalid UTF-8 anywhere is `invalidUTF8`, unescaped control
///   characters in strings are refused, `\u` surrogates must come in pairs.
/// - Integer literals that fit `Int` become `.int`; a fraction, an exponent or an integer
///   overflow gives `.double`. A number beyond the finite `Double` range (`1e400`) is refused
///   as `numberOutOfRange` rather than becoming infinity, because infinity cannot be written
///   back as JSON. Underflow (`1e-400`) rounds to zero as usual.
/// - Duplicate object keys: the last one wins.
/// - Nesting: at most `maxDepth` open arrays/objects (`[[]]` has depth 2; scalars have depth 0).
///   The parser keeps its own stack instead of recursing, so hostile nesting fails fast with
///   `tooDeep` and never exhausts the thread's stack.
public enum JSONParser {
    /// Parses one JSON text; whitespace around the value is allowed, anything else is an error.
    public static func parse(_ bytes: some Collection<UInt8>, maxDepth: Int = 64) throws(JSONParseError) -> JSONValue {
        try parse(Array(bytes), maxDepth: maxDepth)
    }

    /// The framer's output and the log's payloads: parsed in place, no copy.
    public static func parse(_ bytes: [UInt8], maxDepth: Int = 64) throws(JSONParseError) -> JSONValue {
        var parser = Parser(bytes: bytes, maxDepth: maxDepth)
        return try parser.parseDocument()
    }

    /// Convenience for text already in memory as a `String`.
    public static func parse(_ text: String, maxDepth: Int = 64) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8), maxDepth: maxDepth)
    }

    /// The members of the object `bytes` holds, in the order written (a repeated name keeps its
    /// last value, in its first place); `nil` when `bytes` is not an object or not valid JSON,
    /// which `parse` then says why, and when it has more than `maxMembers` distinct names,
    /// which `parse` reads (each name is looked for among those before it: a line of thousands
    /// would cost their square). Cheaper than `parse` for the requests of the wire: the top
    /// level becomes no dictionary, whose names would all be hashed to be read a few times.
    /// Where it gives members, `parse` gives an object with the same ones.
    public static func parseObjectMembers(_ bytes: [UInt8], maxDepth: Int = 64,
                                          maxMembers: Int = 32) -> [(key: String, value: JSONValue)]? {
        guard maxDepth >= 1 else { return nil }
        // The object itself is the first level; its values may open the rest.
        var parser = Parser(bytes: bytes, maxDepth: maxDepth - 1)
        return parser.parseObjectMembers(maxMembers: maxMembers)
    }

    /// The names of the object `bytes` holds, in the order written, a repeated one as often as it
    /// is written (JSON allows it; a config file where the last would win without a word does
    /// not); `nil` when `bytes` is not an object or not valid JSON.
    public static func memberNames(_ bytes: [UInt8], maxDepth: Int = 64) -> [String]? {
        guard maxDepth >= 1 else { return nil }
        var parser = Parser(bytes: bytes, maxDepth: maxDepth - 1)
        return parser.parseObjectMembers(maxMembers: .max, keepingRepeats: true)?.map(\.key)
    }
}

private enum ASCII {
    static let quote: UInt8 = 0x22
    static let backslash: UInt8 = 0x5C
    static let slash: UInt8 = 0x2F
    static let comma: UInt8 = 0x2C
    static let colon: UInt8 = 0x3A
    static let openBracket: UInt8 = 0x5B
    static let closeBracket: UInt8 = 0x5D
    static let openBrace: UInt8 = 0x7B
    static let closeBrace: UInt8 = 0x7D
    static let minus: UInt8 = 0x2D
    static let plus: UInt8 = 0x2B
    static let dot: UInt8 = 0x2E
    static let zero: UInt8 = 0x30
    static let nine: UInt8 = 0x39
    static let lowerE: UInt8 = 0x65
    static let upperE: UInt8 = 0x45
}

/// Single-use parsing state over one text.
private struct Parser {
    let bytes: [UInt8]
    let maxDepth: Int
    var pos = 0
    /// Reused for strings that contain escapes.
    var scratch: [UInt8] = []

    init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        guard pos < bytes.count else { throw JSONParseError(kind: .empty, offset: pos) }
        let value = try parseNested()
        skipWhitespace()
        if pos < bytes.count {
            if bytes[pos] >= 0x80, let error = utf8Error(at: pos) { throw error }
            throw JSONParseError(kind: .trailingData, offset: pos, byte: bytes[pos])
        }
        return value
    }

    mutating func parseObjectMembers(maxMembers: Int, keepingRepeats: Bool = false) -> [(key: String, value: JSONValue)]? {
        do throws(JSONParseError) {
            skipWhitespace()
            guard pos < bytes.count, bytes[pos] == ASCII.openBrace else { return nil }
            pos += 1
            var members: [(key: String, value: JSONValue)] = []
            skipWhitespace()
            if try current() == ASCII.closeBrace {
                pos += 1
            } else {
                members.reserveCapacity(8)
                while true {
                    let key = try parseMemberName()
                    let value = try parseNested()
                    if !keepingRepeats, let earlier = members.firstIndex(where: { $0.key == key }) {
                        members[earlier].value = value
                    } else {
                        guard members.count < maxMembers else { return nil }
                        members.append((key, value))
                    }
                    skipWhitespace()
                    let separator = try current()
                    pos += 1
                    if separator == ASCII.closeBrace { break }
                    guard separator == ASCII.comma else { return nil }
                }
            }
            skipWhitespace()
            return pos == bytes.count ? members : nil
        } catch {
            return nil
        }
    }

    /// An open array or object: where its elements (and, for objects, member names) start on
    /// the shared stacks.
    private struct Frame {
        var isObject: Bool
        var valueStart: Int
        var keyStart: Int
    }

    /// Parses one value of any depth with explicit stacks instead of recursion. Completed
    /// elements of every open container sit on one shared `values` stack (member names on
    /// `keys`); a container is built only when it closes, so each array and dictionary is
    /// allocated once at its final size instead of growing.
    private mutating func parseNested() throws(JSONParseError) -> JSONValue {
        var values: [JSONValue] = []
        var keys: [String] = []
        var frames: [Frame] = []

        nextValue: while true {
            skipWhitespace()
            var value: JSONValue
            let byte = try current()
            switch byte {
            case ASCII.openBrace, ASCII.openBracket:
                guard frames.count < maxDepth else { throw JSONParseError(kind: .tooDeep, offset: pos, byte: byte) }
                let isObject = byte == ASCII.openBrace
                pos += 1
                skipWhitespace()
                if try current() == (isObject ? ASCII.closeBrace : ASCII.closeBracket) {
                    pos += 1
                    value = isObject ? .object([:]) : .array([])
                } else {
                    if frames.isEmpty {
                        values.reserveCapacity(16)
                        keys.reserveCapacity(8)
                        frames.reserveCapacity(4)
                    }
                    frames.append(Frame(isObject: isObject, valueStart: values.count, keyStart: keys.count))
                    if isObject { keys.append(try parseMemberName()) }
                    continue nextValue
                }
            case ASCII.quote:
                pos += 1
                value = .string(try parseString())
            case UInt8(ascii: "t"):
                try expectLiteral("true")
                value = .bool(true)
            case UInt8(ascii: "f"):
                try expectLiteral("false")
                value = .bool(false)
            case UInt8(ascii: "n"):
                try expectLiteral("null")
                value = .null
            case ASCII.minus, ASCII.zero...ASCII.nine:
                value = try parseNumber()
            default:
                throw unexpected(at: pos)
            }

            // `value` is complete: hand it to the enclosing container, closing as many as end here.
            while let frame = frames.last {
                values.append(value)
                skipWhitespace()
                let separator = try current()
                if separator == ASCII.comma {
                    pos += 1
                    if frame.isObject { keys.append(try parseMemberName()) }
                    continue nextValue
                }
                guard separator == (frame.isObject ? ASCII.closeBrace : ASCII.closeBracket) else {
                    throw unexpected(at: pos)
                }
                pos += 1
                frames.removeLast()
                if frame.isObject {
                    let count = values.count - frame.valueStart
                    var members = [String: JSONValue](minimumCapacity: count)
                    for offset in 0..<count {
                        // Assignment, not uniqueKeysWithValues: a repeated name keeps its last value.
                        members[keys[frame.keyStart + offset]] = values[frame.valueStart + offset]
                    }
                    keys.removeSubrange(frame.keyStart...)
                    value = .object(members)
                } else {
                    value = .array(Array(values[frame.valueStart...]))
                }
                values.removeSubrange(frame.valueStart...)
            }
            return value
        }
    }

    // MARK: Tokens

    @inline(__always)
    private mutating func skipWhitespace() {
        while pos < bytes.count {
            switch bytes[pos] {
            case 0x20, 0x09, 0x0A, 0x0D: pos += 1
            default: return
            }
        }
    }

    /// The byte at `pos`; running out of input here is always `unexpectedEnd`.
    @inline(__always)
    private func current() throws(JSONParseError) -> UInt8 {
        guard pos < bytes.count else { throw JSONParseError(kind: .unexpectedEnd, offset: pos) }
        return bytes[pos]
    }

    /// The error for a byte the grammar does not allow: ill-formed UTF-8 is reported as such even
    /// outside strings, so that "not UTF-8" is always distinguishable from "not JSON".
    private func unexpected(at offset: Int) -> JSONParseError {
        guard offset < bytes.count else { return JSONParseError(kind: .unexpectedEnd, offset: offset) }
        if bytes[offset] >= 0x80, let error = utf8Error(at: offset) { return error }
        return JSONParseError(kind: .syntax, offset: offset, byte: bytes[offset])
    }

    private func utf8Error(at offset: Int) -> JSONParseError? {
        var probe = offset
        do throws(JSONParseError) {
            try UTF8Validation.skipSequence(in: bytes, at: &probe)
            return nil
        } catch {
            return error
        }
    }

    private mutating func expectLiteral(_ literal: String) throws(JSONParseError) {
        for expected in literal.utf8 {
            guard pos < bytes.count else { throw JSONParseError(kind: .unexpectedEnd, offset: pos) }
            guard bytes[pos] == expected else { throw unexpected(at: pos) }
            pos += 1
        }
    }

    /// `"name"` then `:`, with the whitespace the grammar allows.
    private mutating func parseMemberName() throws(JSONParseError) -> String {
        skipWhitespace()
        guard try current() == ASCII.quote else { throw unexpected(at: pos) }
        pos += 1
        let name = try parseString()
        skipWhitespace()
        guard try current() == ASCII.colon else { throw unexpected(at: pos) }
        pos += 1
        return name
    }

    // MARK: Strings

    /// Parses the rest of a string whose opening quote is already consumed.
    private mutating func parseString() throws(JSONParseError) -> String {
        let start = pos
        // Fast path: no escapes, so the string is a slice of the input.
        while pos < bytes.count {
            let byte = bytes[pos]
            if byte == ASCII.quote {
                let text = String(decoding: bytes[start..<pos], as: UTF8.self)
                pos += 1
                return text
            }
            if byte == ASCII.backslash { break }
            if byte < 0x20 { throw JSONParseError(kind: .controlCharacter, offset: pos, byte: byte) }
            if byte < 0x80 {
                pos += 1
            } else {
                try UTF8Validation.skipSequence(in: bytes, at: &pos)
            }
        }
        guard pos < bytes.count else { throw JSONParseError(kind: .unexpectedEnd, offset: pos) }

        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: bytes[start..<pos])
        while pos < bytes.count {
            let byte = bytes[pos]
            if byte == ASCII.quote {
                pos += 1
                return String(decoding: scratch, as: UTF8.self)
            }
            if byte == ASCII.backslash {
                try parseEscape()
            } else if byte < 0x20 {
                throw JSONParseError(kind: .controlCharacter, offset: pos, byte: byte)
            } else if byte < 0x80 {
                scratch.append(byte)
                pos += 1
            } else {
                let sequenceStart = pos
                try UTF8Validation.skipSequence(in: bytes, at: &pos)
                scratch.append(contentsOf: bytes[sequenceStart..<pos])
            }
        }
        throw JSONParseError(kind: .unexpectedEnd, offset: pos)
    }

    /// Decodes the escape at `pos` (a backslash) into `scratch`.
    private mutating func parseEscape() throws(JSONParseError) {
        let escapeStart = pos
        pos += 1
        let code = try current()
        pos += 1
        switch code {
        case ASCII.quote: scratch.append(ASCII.quote)
        case ASCII.backslash: scratch.append(ASCII.backslash)
        case ASCII.slash: scratch.append(ASCII.slash)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            let unit = try parseHex4()
            var scalar = UInt32(unit)
            if (0xDC00...0xDFFF).contains(unit) {
                throw JSONParseError(kind: .loneSurrogate, offset: escapeStart, byte: ASCII.backslash)
            }
            if (0xD800...0xDBFF).contains(unit) {
                // A high surrogate is only valid immediately followed by an escaped low surrogate.
                guard pos + 1 < bytes.count, bytes[pos] == ASCII.backslash, bytes[pos + 1] == UInt8(ascii: "u") else {
                    throw JSONParseError(kind: .loneSurrogate, offset: escapeStart, byte: ASCII.backslash)
                }
                pos += 2
                let low = try parseHex4()
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw JSONParseError(kind: .loneSurrogate, offset: escapeStart, byte: ASCII.backslash)
                }
                scalar = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
            }
            appendUTF8(scalar)
        default:
            throw JSONParseError(kind: .invalidEscape, offset: escapeStart, byte: code)
        }
    }

    private mutating func parseHex4() throws(JSONParseError) -> UInt16 {
        var unit: UInt16 = 0
        for _ in 0..<4 {
            let byte = try current()
            let digit: UInt8
            switch byte {
            case ASCII.zero...ASCII.nine: digit = byte - ASCII.zero
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default:
                if byte >= 0x80, let error = utf8Error(at: pos) { throw error }
                throw JSONParseError(kind: .invalidEscape, offset: pos, byte: byte)
            }
            unit = unit << 4 | UInt16(digit)
            pos += 1
        }
        return unit
    }

    private mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case ..<0x80:
            scratch.append(UInt8(scalar))
        case ..<0x800:
            scratch.append(0xC0 | UInt8(scalar >> 6))
            scratch.append(0x80 | UInt8(scalar & 0x3F))
        case ..<0x10000:
            scratch.append(0xE0 | UInt8(scalar >> 12))
            scratch.append(0x80 | UInt8((scalar >> 6) & 0x3F))
            scratch.append(0x80 | UInt8(scalar & 0x3F))
        default:
            scratch.append(0xF0 | UInt8(scalar >> 18))
            scratch.append(0x80 | UInt8((scalar >> 12) & 0x3F))
            scratch.append(0x80 | UInt8((scalar >> 6) & 0x3F))
            scratch.append(0x80 | UInt8(scalar & 0x3F))
        }
    }

    // MARK: Numbers

    private mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = pos
        let negative = bytes[pos] == ASCII.minus
        if negative { pos += 1 }
        let integerStart = pos
        guard isDigit(try current()) else { throw unexpected(at: pos) }
        if bytes[pos] == ASCII.zero {
            pos += 1
            // RFC 8259 forbids leading zeros ("01").
            if pos < bytes.count && isDigit(bytes[pos]) { throw unexpected(at: pos) }
        } else {
            skipDigits()
        }
        let integerEnd = pos
        var isInteger = true
        if pos < bytes.count && bytes[pos] == ASCII.dot {
            isInteger = false
            pos += 1
            guard isDigit(try current()) else { throw unexpected(at: pos) }
            skipDigits()
        }
        if pos < bytes.count && (bytes[pos] == ASCII.lowerE || bytes[pos] == ASCII.upperE) {
            isInteger = false
            pos += 1
            if try current() == ASCII.plus || bytes[pos] == ASCII.minus { pos += 1 }
            guard isDigit(try current()) else { throw unexpected(at: pos) }
            skipDigits()
        }

        if isInteger, let value = integer(from: integerStart, to: integerEnd, negative: negative) {
            return .int(value)
        }
        let text = String(decoding: bytes[start..<pos], as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw JSONParseError(kind: .numberOutOfRange, offset: start, byte: bytes[start])
        }
        return .double(value)
    }

    /// Accumulates toward the negative side so that `Int.min` fits; `nil` on overflow.
    private func integer(from start: Int, to end: Int, negative: Bool) -> Int? {
        var accumulator = 0
        for index in start..<end {
            let digit = Int(bytes[index] &- ASCII.zero)
            let (shifted, overflow1) = accumulator.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = shifted.subtractingReportingOverflow(digit)
            if overflow1 || overflow2 { return nil }
            accumulator = next
        }
        if negative { return accumulator }
        return accumulator == Int.min ? nil : -accumulator
    }

    @inline(__always)
    private func isDigit(_ byte: UInt8) -> Bool { byte >= ASCII.zero && byte <= ASCII.nine }

    @inline(__always)
    private mutating func skipDigits() {
        while pos < bytes.count && isDigit(bytes[pos]) { pos += 1 }
    }
}
