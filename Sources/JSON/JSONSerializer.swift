extension JSONValue {
    /// Compact JSON text (no whitespace). Object members come in dictionary order unless
    /// `sortedKeys` is set, which makes the output byte-for-byte deterministic.
    public func serialized(sortedKeys: Bool = false) -> String {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(256)
        write(to: &buffer, sortedKeys: sortedKeys)
        return String(decoding: buffer, as: UTF8.self)
    }

    /// The value as JSON text, cut to at most `limit` characters (the last an ellipsis) when
    /// longer: for quoting a value back in a message.
    public func excerpt(_ limit: Int) -> String {
        let text = serialized()
        return text.count <= limit ? text : String(text.prefix(max(0, limit - 1))) + "…"
    }

    /// Appends compact JSON text to `buffer`. Strings are escaped minimally (`"`, `\`, controls);
    /// other characters go out as raw UTF-8. Doubles use Swift's shortest round-trip form;
    /// NaN and infinities, which JSON cannot express, are written as `null`.
    ///
    /// Recurses once per nesting level: meant for values built by the server or parsed with a
    /// depth limit, not for arbitrarily deep structures.
    public func write(to buffer: inout [UInt8], sortedKeys: Bool = false) {
        switch self {
        case .null:
            JSONValue.appendASCII("null", to: &buffer)
        case .bool(let value):
            JSONValue.appendASCII(value ? "true" : "false", to: &buffer)
        case .int(let value):
            JSONValue.writeInt(value, into: &buffer)
        case .double(let value):
            if value.isFinite {
                buffer.append(contentsOf: value.description.utf8)
            } else {
                JSONValue.appendASCII("null", to: &buffer)
            }
        case .string(let value):
            JSONValue.writeQuotedString(value, into: &buffer)
        case .array(let elements):
            buffer.append(0x5B)
            var first = true
            for element in elements {
                if !first { buffer.append(0x2C) }
                first = false
                element.write(to: &buffer, sortedKeys: sortedKeys)
            }
            buffer.append(0x5D)
        case .object(let members):
            if sortedKeys { return JSONValue.writeSortedObject(members, into: &buffer) }
            JSONValue.writeMembers(members, sortedKeys: false, into: &buffer)
        }
    }

    /// Appends `members` (a dictionary, or a list with distinct keys as
    /// `JSONParser.parseObjectMembers` gives it) as an object with its keys in order and its
    /// nested objects sorted too, leaving out the keys `omitting` names: the same bytes as the
    /// object without those keys, without copying it to remove them.
    public static func writeSortedObject(_ members: some Collection<(key: String, value: JSONValue)>,
                                         omitting: (String) -> Bool = { _ in false }, into buffer: inout [UInt8]) {
        var kept: [(key: String, value: JSONValue)] = []
        kept.reserveCapacity(members.count)
        for member in members where !omitting(member.key) { kept.append(member) }
        kept.sort { $0.key < $1.key }
        writeMembers(kept, sortedKeys: true, into: &buffer)
    }

    /// `{"key":value,...}` for the members in the order given.
    private static func writeMembers(_ members: some Sequence<(key: String, value: JSONValue)>, sortedKeys: Bool,
                                     into buffer: inout [UInt8]) {
        buffer.append(0x7B)
        var first = true
        for (key, value) in members {
            if !first { buffer.append(0x2C) }
            first = false
            JSONValue.writeQuotedString(key, into: &buffer)
            buffer.append(0x3A)
            value.write(to: &buffer, sortedKeys: sortedKeys)
        }
        buffer.append(0x7D)
    }

    /// Appends `s` as a complete JSON string literal, surrounding quotes included.
    /// For hand-built messages: `buf += #"{"name":"#.utf8; JSONValue.writeQuotedString(name, into: &buf)`.
    public static func writeQuotedString(_ s: String, into buffer: inout [UInt8]) {
        buffer.append(0x22)
        escapeString(s, into: &buffer)
        buffer.append(0x22)
    }

    /// Appends the escaped contents of `s` WITHOUT surrounding quotes: `"`, `\` and control
    /// characters are escaped (`\n \r \t \b \f`, others as `\u00XX`), all else is raw UTF-8.
    /// Scanned through the string's own bytes as a `Span` (bounds-checked, no pointer); runs
    /// without an escape are copied whole.
    public static func escapeString(_ s: String, into buffer: inout [UInt8]) {
        let utf8 = s.utf8
        let span = utf8.span
        var runStart = 0
        for index in 0..<span.count {
            let byte = span[index]
            if byte >= 0x20 && byte != 0x22 && byte != 0x5C { continue }
            if runStart < index { appendRun(of: utf8, runStart..<index, to: &buffer) }
            runStart = index + 1
            buffer.append(0x5C)
            switch byte {
            case 0x22: buffer.append(0x22)
            case 0x5C: buffer.append(0x5C)
            case 0x0A: buffer.append(UInt8(ascii: "n"))
            case 0x0D: buffer.append(UInt8(ascii: "r"))
            case 0x09: buffer.append(UInt8(ascii: "t"))
            case 0x08: buffer.append(UInt8(ascii: "b"))
            case 0x0C: buffer.append(UInt8(ascii: "f"))
            default:
                buffer.append(contentsOf: [UInt8(ascii: "u"), 0x30, 0x30, hexDigit(byte >> 4), hexDigit(byte & 0x0F)])
            }
        }
        if runStart == 0 {
            buffer.append(contentsOf: utf8)
        } else if runStart < span.count {
            appendRun(of: utf8, runStart..<span.count, to: &buffer)
        }
    }

    private static func appendRun(of utf8: String.UTF8View, _ offsets: Range<Int>, to buffer: inout [UInt8]) {
        let start = utf8.index(utf8.startIndex, offsetBy: offsets.lowerBound)
        let end = utf8.index(start, offsetBy: offsets.count)
        buffer.append(contentsOf: utf8[start..<end])
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? 0x30 + value : 0x61 + value - 10
    }

    /// Appends the decimal digits of `value` (no allocation).
    public static func writeInt(_ value: Int, into buffer: inout [UInt8]) {
        if value < 0 { buffer.append(0x2D) }
        var magnitude = value.magnitude
        let start = buffer.count
        repeat {
            buffer.append(UInt8(truncatingIfNeeded: magnitude % 10) &+ 0x30)
            magnitude /= 10
        } while magnitude > 0
        buffer[start...].reverse()
    }

    private static func appendASCII(_ text: String, to buffer: inout [UInt8]) {
        buffer.append(contentsOf: text.utf8)
    }
}
