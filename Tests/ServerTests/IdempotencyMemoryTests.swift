@testable import Server
import SeededRandom
import Testing

/// What a pending key's copies would wait on; the hub uses its pending command.
private final class Waiting {}

@Suite struct IdempotencyMemoryTests {
    /// A random run of commits (some of which change nothing), re-uses and window moves, checked
    /// at every step against a plain dictionary model: sharding and chunking must change nothing
    /// that can be observed, and of the keys that changed nothing only the newest are kept.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func matchesAPlainDictionary(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let unchangedLimit = 700
        var memory = IdempotencyMemory<Waiting>(unchangedLimit: unchangedLimit)
        var model: [KeyDigest: Int] = [:]
        var modelUnchanged: [(version: Int, key: KeyDigest)] = []
        var version = 0
        // Spans several order chunks, so trimming crosses chunk boundaries many times.
        for step in 0..<(IdempotencyMemory<Waiting>.chunkSize * 5) {
            let key = KeyDigest(owner: "player-\(random.next() % 5)", key: "k\(random.next() % 30_000)")
            let changedNothing = random.next() % 3 == 0
            if !changedNothing { version += 1 + Int(random.next() % 3) }
            if memory.lookup(key) == nil {
                memory.remember(key, Fingerprint(digestOf: "request \(step)"), version: version, changedNothing: changedNothing)
                model[key] = version
                if changedNothing {
                    modelUnchanged.append((version, key))
                    if modelUnchanged.count > unchangedLimit { model[modelUnchanged.removeFirst().key] = nil }
                }
            }
            if random.next() % 50 == 0 {
                let oldest = version - Int(random.next() % 3_000)
                memory.forget(through: oldest)
                model = model.filter { $0.value > oldest }
                modelUnchanged.removeAll { $0.version <= oldest }
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

    /// However many keyed requests change nothing, memory keeps only the newest of their keys,
    /// and never at the cost of a change's key.
    @Test func keysOfRequestsThatChangedNothingAreKeptUpToTheLimit() {
        var memory = IdempotencyMemory<Waiting>(unchangedLimit: 3)
        let change = KeyDigest(owner: "ana", key: "unlock")
        memory.remember(change, Fingerprint(digestOf: "unlock"), version: 7)
        let unchanged = (0..<5).map { KeyDigest(owner: "ben", key: "same day \($0)") }
        for key in unchanged { memory.remember(key, Fingerprint(digestOf: "x"), version: 7, changedNothing: true) }
        #expect(memory.count == 4)
        #expect(memory.lookup(unchanged[0]) == nil && memory.lookup(unchanged[1]) == nil)
        for key in unchanged[2...] {
            if case .done(_, let version)? = memory.lookup(key) { #expect(version == 7) } else { Issue.record("a newest key was forgotten") }
        }
        if case .done(_, let version)? = memory.lookup(change) { #expect(version == 7) } else { Issue.record("the change's key was pushed out") }
    }

    @Test func aPendingKeyBecomesRememberedOrFreeAgain() {
        var memory = IdempotencyMemory<Waiting>(unchangedLimit: 1_000)
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

    /// A key of a request that changed nothing, pushed out and used again at the same version:
    /// its old slot, pushed out in turn, does not take the new entry with it.
    @Test func aKeyOfANoOpUsedAgainAtTheSameVersionOutlivesItsOlderSlot() {
        var memory = IdempotencyMemory<Waiting>(unchangedLimit: 2)
        let again = KeyDigest(owner: "sam", key: "same day")
        memory.remember(again, Fingerprint(digestOf: "first"), version: 4, changedNothing: true)
        memory.remember(KeyDigest(owner: "sam", key: "b"), Fingerprint(digestOf: "b"), version: 4, changedNothing: true)
        memory.remember(again, Fingerprint(digestOf: "second"), version: 4, changedNothing: true)
        #expect(memory.lookup(again) != nil, "its first slot, pushed out, left the newer entry")
        memory.remember(KeyDigest(owner: "sam", key: "c"), Fingerprint(digestOf: "c"), version: 4, changedNothing: true)
        guard case .done(let fingerprint, _)? = memory.lookup(again) else {
            Issue.record("the key went with a slot older than its entry")
            return
        }
        #expect(fingerprint == Fingerprint(digestOf: "second"))
        memory.remember(KeyDigest(owner: "sam", key: "d"), Fingerprint(digestOf: "d"), version: 4, changedNothing: true)
        #expect(memory.lookup(again) == nil, "pushed out by two newer keys")
    }

    /// Keys remembered again while an older slot of theirs is still queued, as the records a
    /// start-up loads can hold them, in a random run: against a model that numbers every slot
    /// and forgets an entry only with the slot that made it, memory never forgets a key the
    /// model keeps (it may keep one a little longer) and holds nothing once every slot is gone.
    @Test(arguments: [4, 5, 6] as [UInt64])
    func aKeyRememberedAgainIsNeverForgottenEarly(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let unchangedLimit = 40
        var memory = IdempotencyMemory<Waiting>(unchangedLimit: unchangedLimit)
        var model: [KeyDigest: (fingerprint: Fingerprint, version: Int, slot: Int)] = [:]
        var changes: [(version: Int, key: KeyDigest, slot: Int)] = [], unchanged = changes
        func forget(_ slot: (version: Int, key: KeyDigest, slot: Int)) {
            if model[slot.key]?.slot == slot.slot { model[slot.key] = nil }
        }
        var version = 0
        for step in 0..<6_000 {
            let key = KeyDigest(owner: "p\(random.next() % 3)", key: "k\(random.next() % 60)")
            let changedNothing = random.next() % 2 == 0
            if !changedNothing { version += 1 }
            let fingerprint = Fingerprint(digestOf: "request \(step)")
            memory.remember(key, fingerprint, version: version, changedNothing: changedNothing)
            model[key] = (fingerprint, version, step)
            if changedNothing {
                unchanged.append((version, key, step))
                if unchanged.count > unchangedLimit { forget(unchanged.removeFirst()) }
            } else {
                changes.append((version, key, step))
            }
            if random.next() % 10 == 0 {
                let oldest = version - Int(random.next() % 30)
                memory.forget(through: oldest)
                while let slot = changes.first, slot.version <= oldest { forget(changes.removeFirst()) }
                while let slot = unchanged.first, slot.version <= oldest { forget(unchanged.removeFirst()) }
            }
            for (key, kept) in model {
                guard case .done(let remembered, let at)? = memory.lookup(key) else {
                    Issue.record("step \(step): a key the model keeps was forgotten")
                    return
                }
                #expect(remembered == kept.fingerprint && at == kept.version)
            }
        }
        memory.forget(through: version)
        #expect(memory.count == 0, "every slot is gone, and so is every key")
    }

    @Test func aKeyRememberedTwiceOutlivesItsOlderSlot() {
        // As at start-up, when the records of a widened window hold one key twice.
        var memory = IdempotencyMemory<Waiting>(unchangedLimit: 1_000)
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
