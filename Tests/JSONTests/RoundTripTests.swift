import JSON
import Testing
import SeededRandom

@Suite struct RoundTripTests {
    @Test func fixedValues() throws {
        let values: [JSONValue] = [
            nil, true, false, 0, -1, .int(Int.max), .int(Int.min), 0.5, -1e-300, 1e300, 123.456, 2.0,
            .double(.leastNonzeroMagnitude), .double(.greatestFiniteMagnitude), .double(-.greatestFiniteMagnitude),
            "", "plain", "\"\\/\n\r\t\u{08}\u{0C}\u{00}\u{1F}", "é€😀\u{10FFFF}\u{FEFF}",
            [], [:], [nil, [[]], ["": ""]], ["a/b": ["~": [1, 2.5, "x"]]],
        ]
        for value in values {
            let text = value.serialized()
            #expect(try JSONParser.parse(text) == value, "\(text)")
            #expect(try JSONParser.parse(value.serialized(sortedKeys: true)) == value)
        }
    }

    @Test func randomValues() throws {
        for seed in UInt64(1)...300 {
            var rng = SplitMix64(seed: seed)
            let value = RandomJSON.value(&rng, depth: 5)
            var bytes: [UInt8] = []
            value.write(to: &bytes)
            let parsed = try JSONParser.parse(bytes)
            #expect(parsed == value, "seed \(seed): \(value.serialized())")
            #expect(parsed.serialized(sortedKeys: true) == value.serialized(sortedKeys: true), "seed \(seed)")
        }
    }
}
