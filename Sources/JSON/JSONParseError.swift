/// Why `JSONParser` refused its input, and where.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The class of failure; callers that only need "bad JSON" can ignore it.
    public enum Kind: Sendable, Equatable {
        /// Nothing but whitespace (or nothing at all).
        case empty
        /// The input stopped inside a value.
        case unexpectedEnd
        /// A byte that the grammar does not allow here.
        case syntax
        /// Bytes that are not well-formed UTF-8 (overlong, surrogate, out of range, truncated).
        case invalidUTF8
        /// A byte below 0x20 inside a string; RFC 8259 requires it to be escaped.
        case controlCharacter
        /// A backslash escape that RFC 8259 does not define, or a malformed `\u`.
        case invalidEscape
        /// A `\u` escape for a UTF-16 surrogate without its partner.
        case loneSurrogate
        /// A number whose magnitude does not fit a finite `Double` (e.g. `1e400`).
        case numberOutOfRange
        /// Containers nested deeper than the parser's `maxDepth`.
        case tooDeep
        /// Something other than whitespace after a complete value.
        case trailingData
    }

    /// The class of failure.
    public var kind: Kind
    /// Zero-based offset of the offending byte in the input.
    public var offset: Int
    /// The offending byte, when there is one (not for `empty`/`unexpectedEnd`).
    public var byte: UInt8?

    public init(kind: Kind, offset: Int, byte: UInt8? = nil) {
        self.kind = kind
        self.offset = offset
        self.byte = byte
    }

    public var description: String {
        let at = " at byte \(offset)"
        switch kind {
        case .empty: return "empty input: no JSON value"
        case .unexpectedEnd: return "unexpected end of input" + at
        case .syntax: return "unexpected \(Self.describe(byte))" + at
        case .invalidUTF8: return "invalid UTF-8" + at
        case .controlCharacter: return "unescaped control character \(Self.describe(byte)) in string" + at
        case .invalidEscape: return "invalid escape sequence" + at
        case .loneSurrogate: return "unpaired UTF-16 surrogate escape" + at
        case .numberOutOfRange: return "number out of range" + at
        case .tooDeep: return "nesting too deep" + at
        case .trailingData: return "unexpected \(Self.describe(byte)) after the JSON value" + at
        }
    }

    /// Where the offending byte is in `input` (the bytes parsed), as a text editor counts:
    /// lines and columns from 1. For a file a person fixes by hand.
    public func place(in input: [UInt8]) -> (line: Int, column: Int) {
        let before = input.prefix(min(offset, input.count))
        let line = before.count { $0 == 0x0A } + 1
        let column = before.count - (before.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0) + 1
        return (line, column)
    }

    private static func describe(_ byte: UInt8?) -> String {
        guard let byte else { return "end of input" }
        if byte >= 0x21 && byte < 0x7F { return "character '\(Character(Unicode.Scalar(byte)))'" }
        let hex = String(byte, radix: 16, uppercase: true)
        return "byte 0x" + (hex.count < 2 ? "0" + hex : hex)
    }
}
