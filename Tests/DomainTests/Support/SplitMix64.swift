/// A tiny deterministic PRNG (SplitMix64) with its own range helpers, so a seed
/// gives the same sequence on every platform and Swift version.
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform enough for tests: the modulo bias over 2^64 is negligible for small ranges.
    mutating func int(_ range: ClosedRange<Int>) -> Int {
        let width = UInt64(range.upperBound - range.lowerBound) + 1
        return range.lowerBound + Int(next() % width)
    }

    mutating func chance(_ percent: Int) -> Bool { int(1...100) <= percent }

    mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }

    /// Picks a value by weight: `[(3, a), (1, b)]` gives `a` three times as often.
    mutating func weighted<T>(_ items: [(Int, T)]) -> T {
        var roll = int(1...items.map(\.0).reduce(0, +))
        for (weight, item) in items {
            roll -= weight
            if roll <= 0 { return item }
        }
        return items[items.count - 1].1
    }
}
