/// SplitMix64: a tiny deterministic random number generator, so that a printed
/// seed replays the same random history on every machine and Swift version.
/// For property tests and the crash-test child process; never for secrets.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform enough for tests: the modulo bias over 2^64 is negligible for small ranges.
    public mutating func int(_ range: ClosedRange<Int>) -> Int {
        let width = UInt64(range.upperBound - range.lowerBound) + 1
        return range.lowerBound + Int(next() % width)
    }

    /// 0 ..< bound.
    public mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    public mutating func chance(_ percent: Int) -> Bool { int(1...100) <= percent }

    public mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }

    /// Picks a value by weight: `[(3, a), (1, b)]` gives `a` three times as often.
    public mutating func weighted<T>(_ items: [(Int, T)]) -> T {
        var roll = int(1...items.map(\.0).reduce(0, +))
        for (weight, item) in items {
            roll -= weight
            if roll <= 0 { return item }
        }
        return items[items.count - 1].1
    }
}
