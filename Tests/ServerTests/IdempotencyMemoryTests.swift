@testable import Server
import SeededRandom
import Testing

/// What a pending key's copies would wait on; the hub uses its pending command.
private final class Waiting {}

@Suite struct IdempotencyMemoryTests {
    /// A random run of commits, re-uses and window moves, checked at every step against a plain
    /// dictionary model: sharding and chunking must change nothing that can be observed.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func matchesAPlainDictionary(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var memory = IdempotencyMemory<Waiting>()
        var model: [KeyDigest: Int] = [:]
        var version = 0
        // Spans several order chunks, so trimming crosses chunk boundaries many times.
        for step in 0..<(IdempotencyMemory<Waiting>.chunkSize * 5) {
            let key = KeyDigest(owner: "player-\(random.next() % 5)", key: "k\(random.next() % 30_000)")
            version += 1 + Int(random.next() % 3)
            if memory.lookup(key) == nil {
                memory.remember(key, Fingerprint(digestOf: "request \(step)"), version: version)
                model[key] = version
            }
            if random.next() % 50 == 0 {
                let oldest = version - Int(random.next() % 3_000)
                memory.forget(through: oldest)
                model = model.filter { $0.value > oldest }
            }
            if step % 997 == 0 {
                #expect(memory.count == model.count)
            }
            if case .done(_, let remembered)? = memory.lookup(key) {
                #expect(model[key] == remembered)
            } else {
                #expect(model[key] == nil)
            }
        }
        memory.forget(through: version)
        #expect(memory.count == 0)
    }

    @Test func aPendingKeyBecomesRememberedOrFreeAgain() {
        var memory = IdempotencyMemory<Waiting>()
        let committed = KeyDigest(owner: "ana", key: "first")
        let failed = KeyDigest(owner: "ana", key: "second")
        let first = Waiting(), second = Waiting()
        memory.markPending(committed, first)
        memory.markPending(failed, second)
        #expect(memory.count == 2)
        guard case .pending(let waiting)? = memory.lookup(committed) else {
            Issue.record("a pending key is not found")
            return
        }
        #expect(waiting === first)
        // Forgetting by version never touches a key still on its way to disk.
        memory.forget(through: 1_000)
        #expect(memory.count == 2)
        memory.remember(committed, Fingerprint(digestOf: "x"), version: 3)
        memory.clearPending(failed)
        if case .done(_, let version)? = memory.lookup(committed) { #expect(version == 3) } else { Issue.record("not remembered") }
        #expect(memory.lookup(failed) == nil)
        #expect(memory.count == 1)
    }

    @Test func aKeyRememberedTwiceOutlivesItsOlderSlot() {
        // As at start-up, when the records of a widened window hold one key twice.
        var memory = IdempotencyMemory<Waiting>()
        let key = KeyDigest(owner: "ana", key: "reused")
        memory.remember(key, Fingerprint(digestOf: "first"), version: 1)
        memory.remember(KeyDigest(owner: "ben", key: "other"), Fingerprint(digestOf: "x"), version: 2)
        memory.remember(key, Fingerprint(digestOf: "again"), version: 5)
        memory.forget(through: 2)
        #expect(memory.count == 1)
        guard case .done(let fingerprint, let version)? = memory.lookup(key) else {
            Issue.record("the key was forgotten with its old slot")
            return
        }
        #expect(version == 5 && fingerprint == Fingerprint(digestOf: "again"))
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
