@testable import Server
import SeededRandom
import Testing

@Suite struct IdempotencyMemoryTests {
    /// A random run of commits, re-uses and window moves, checked at every step against a plain
    /// dictionary model: sharding and chunking must change nothing that can be observed.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func matchesAPlainDictionary(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var memory = IdempotencyMemory()
        var model: [KeyDigest: Int] = [:]
        var version = 0
        var forgottenThrough = 0
        // Spans several order chunks, so trimming crosses chunk boundaries many times.
        for step in 0..<(IdempotencyMemory.chunkSize * 5) {
            let key = IdempotencyKey(owner: "player-\(random.next() % 5)", key: "k\(random.next() % 30_000)")
            version += 1 + Int(random.next() % 3)
            if memory[key] == nil {
                memory.remember(key, Fingerprint(Secrets.digest("request \(step)")), version: version)
                model[key.digest] = version
            }
            if random.next() % 50 == 0 {
                forgottenThrough = version - Int(random.next() % 3_000)
                memory.forget(through: forgottenThrough)
                model = model.filter { $0.value > forgottenThrough }
            }
            if step % 997 == 0 {
                #expect(memory.count == model.count)
            }
            if case .done(_, let remembered)? = memory[key] {
                #expect(model[key.digest] == remembered)
            } else {
                #expect(model[key.digest] == nil)
            }
        }
        memory.forget(through: version)
        #expect(memory.count == 0)
    }

    @Test func aKeyRememberedAgainAfterBeingForgottenStays() {
        var memory = IdempotencyMemory()
        let key = IdempotencyKey(owner: "ana", key: "same")
        memory.remember(key, Fingerprint(Secrets.digest("first")), version: 1)
        memory.forget(through: 1)
        #expect(memory[key] == nil)
        memory.remember(key, Fingerprint(Secrets.digest("second")), version: 9)
        // The first remembering's slot in the order is gone; the second one's is what counts.
        memory.forget(through: 8)
        guard case .done(let fingerprint, let version)? = memory[key] else {
            Issue.record("the key was forgotten with its old slot")
            return
        }
        #expect(version == 9 && fingerprint == Fingerprint(Secrets.digest("second")))
    }

    @Test func aKeyClearedAndRememberedAgainOutlivesItsOldSlot() {
        var memory = IdempotencyMemory()
        let key = IdempotencyKey(owner: "ana", key: "retry")
        memory.remember(key, Fingerprint(Secrets.digest("first")), version: 1)
        memory[key] = nil
        memory.remember(IdempotencyKey(owner: "ben", key: "other"), Fingerprint(Secrets.digest("x")), version: 2)
        memory.remember(key, Fingerprint(Secrets.digest("again")), version: 5)
        memory.forget(through: 2)
        #expect(memory.count == 1)
        if case .done(_, let version)? = memory[key] { #expect(version == 5) } else { Issue.record("key lost") }
    }
}

@Suite struct KeyDigestTests {
    @Test func theBoundaryBetweenOwnerAndKeyCounts() {
        #expect(KeyDigest(owner: "ab", key: "c") != KeyDigest(owner: "a", key: "bc"))
        #expect(KeyDigest(owner: "ana", key: "k1") == KeyDigest(owner: "ana", key: "k1"))
        #expect(KeyDigest(owner: "ana", key: "k1") != KeyDigest(owner: "ben", key: "k1"))
    }

    @Test func keysAreTheirExactBytesAsInTheLog() {
        // "é" precomposed and as "e" plus a combining accent: equal as Swift strings, different
        // bytes in the log, so two different keys.
        #expect("caf\u{e9}" == "cafe\u{301}")
        #expect(KeyDigest(owner: "ana", key: "caf\u{e9}") != KeyDigest(owner: "ana", key: "cafe\u{301}"))
    }

    @Test func distinctKeysGetDistinctDigests() {
        var seen = Set<KeyDigest>()
        for owner in 0..<20 {
            for key in 0..<5_000 { seen.insert(KeyDigest(owner: "player-\(owner)", key: "key-\(key)")) }
        }
        #expect(seen.count == 100_000)
    }
}
