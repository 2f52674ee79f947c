import Crypto
import Protocol

/// A request's digest, the first 128 bits of SHA-256 over its canonical text, as two words: what
/// the idempotency map keeps per key instead of the 32 hex digits the log stores, which would be
/// a heap string per remembered key.
struct Fingerprint: Hashable {
    let high: UInt64
    let low: UInt64

    init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// The first 128 bits of SHA-256 over `bytes`, made without hex text in between, which
    /// showed in profiles of keyed mutations.
    init(digestOf bytes: [UInt8]) {
        let digest = SHA256.hash(data: bytes)
        var high: UInt64 = 0
        var low: UInt64 = 0
        for (index, byte) in digest.prefix(16).enumerated() {
            if index < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
        }
        self.init(high: high, low: low)
    }

    /// The same over `text`'s UTF-8 bytes.
    init(digestOf text: String) { self.init(digestOf: Array(text.utf8)) }

    /// The 32 lower-case hex digits the log stores.
    var hex: String { lowercaseHex(bigEndianBytes(of: high) + bigEndianBytes(of: low)) }

    /// From the hex text the log stores. Text that is not 32 hex digits (the server never writes
    /// such) gets the digest of the text itself: it still matches only the very same text.
    init(_ text: String) {
        if let (high, low) = Self.words(hex: text) {
            self.init(high: high, low: low)
        } else {
            self.init(digestOf: text)
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

/// The eight bytes of `word`, most significant first.
func bigEndianBytes(of word: UInt64) -> [UInt8] {
    (0..<8).map { UInt8(truncatingIfNeeded: word >> (56 - 8 * $0)) }
}
