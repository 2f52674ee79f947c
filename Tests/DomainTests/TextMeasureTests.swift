import Domain
import SeededRandom
import Testing

/// `codePointCount` and `isBlank` take shortcuts over the UTF-8 bytes; they must say exactly
/// what the definitions over Unicode scalars say.
@Suite struct TextMeasureTests {
    private static func referenceIsBlank(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { $0.properties.isWhitespace || $0.properties.generalCategory == .format }
    }

    @Test func everyASCIICharacterIsMeasuredAsItsScalar() {
        for value in 0..<0x80 {
            let text = String(decoding: [UInt8(value)], as: UTF8.self)
            #expect(text.isBlank == Self.referenceIsBlank(text), "U+\(String(value, radix: 16))")
            #expect(text.codePointCount == 1)
        }
    }

    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func randomTextIsMeasuredAsItsScalars(seed: UInt64) {
        // Blanks inside and outside ASCII, format characters, letters of every UTF-8 length,
        // combining marks and an emoji sequence.
        let pieces = [" ", "\t", "\n", "\r", "\u{0B}", "\u{0C}", "\u{1F}", "\u{00}", "a", "Z", "~", "\u{85}", "\u{A0}",
                      "\u{1680}", "\u{2003}", "\u{2028}", "\u{3000}", "\u{200B}", "\u{200D}", "\u{200E}", "\u{FEFF}",
                      "\u{061C}", "é", "e\u{301}", "ß", "ж", "日", "🎂", "👩‍👩‍👧", "\u{E0001}", "\u{10FFFF}"]
        var rng = SplitMix64(seed: seed)
        for _ in 0..<2_000 {
            var text = ""
            for _ in 0..<rng.int(0...6) { text += rng.pick(pieces) }
            #expect(text.codePointCount == text.unicodeScalars.count, "\(Array(text.unicodeScalars))")
            #expect(text.isBlank == Self.referenceIsBlank(text), "\(Array(text.unicodeScalars))")
        }
    }
}
