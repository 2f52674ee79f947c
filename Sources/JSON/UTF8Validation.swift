/// Well-formedness check for one UTF-8 sequence, per Unicode Table 3-7: rejects overlong forms,
/// encoded surrogates (U+D800...U+DFFF), code points above U+10FFFF and truncated sequences.
enum UTF8Validation {
    /// Advances `offset` past the well-formed sequence whose lead byte (>= 0x80) is at `offset`.
    @inline(__always)
    static func skipSequence(in bytes: [UInt8], at offset: inout Int) throws(JSONParseError) {
        let lead = bytes[offset]
        let length: Int
        var secondLow: UInt8 = 0x80
        var secondHigh: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; secondLow = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; secondHigh = 0x9F
        case 0xF0: length = 4; secondLow = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; secondHigh = 0x8F
        default: throw JSONParseError(kind: .invalidUTF8, offset: offset, byte: lead)
        }
        guard offset + length <= bytes.count else {
            throw JSONParseError(kind: .invalidUTF8, offset: offset, byte: lead)
        }
        let second = bytes[offset + 1]
        guard second >= secondLow && second <= secondHigh else {
            throw JSONParseError(kind: .invalidUTF8, offset: offset, byte: lead)
        }
        var index = offset + 2
        while index < offset + length {
            guard bytes[index] & 0xC0 == 0x80 else {
                throw JSONParseError(kind: .invalidUTF8, offset: offset, byte: lead)
            }
            index += 1
        }
        offset += length
    }
}
