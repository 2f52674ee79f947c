import Crypto

/// A request's digest (`Secrets.digest`) as two words: what the idempotency map keeps per key
/// instead of the 32-character text, which would be a heap string per remembered key.
struct Fingerprint: Hashable {
    let high: UInt64
    let low: UInt64

    init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// The digest of `text`: the same value as `Fingerprint(Secrets.digest(text))`, without
    /// making the hex text and reading it back, which showed in profiles of keyed mutations.
    init(digestOf text: String) {
        var text = text
        let digest = text.withUTF8 { SHA256.hash(data: UnsafeRawBufferPointer($0)) }
        var high: UInt64 = 0
        var low: UInt64 = 0
        for (index, byte) in digest.prefix(16).enumerated() {
            if index < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
        }
        self.init(high: high, low: low)
    }

    /// The 32 lower-case hex digits the log stores, `Secrets.digest`'s form.
    var hex: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        for word in [high, low] {
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
        }
        return Secrets.hex(bytes)
    }

    /// From the hex text the log stores. Text that is not 32 hex digits (the server never writes
    /// such) gets the digest of the text itself: it still matches only the very same text.
    init(_ text: String) {
        if let words = Self.words(hex: text) {
            (high, low) = words
        } else if let words = Self.words(hex: Secrets.digest(text)) {
            (high, low) = words
        } else {
            preconditionFailure("Secrets.digest returns 32 hex digits")
        }
    }

    private static func words(hex text: String) -> (UInt64, UInt64)? {
        let utf8 = Array(text.utf8)
        guard utf8.count == 32 else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        for (index, character) in utf8.enumerated() {
            let nibble: UInt64
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = UInt64(character - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = UInt64(character - UInt8(ascii: "a") + 10)
            default: return nil
            }
            if index < 16 { high = high << 4 | nibble } else { low = low << 4 | nibble }
        }
        return (high, low)
    }
}
