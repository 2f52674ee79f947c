/// The idempotency keys one game remembers, and the order in which to forget them.
///
/// A game keeps the keys of its last `idempotency_window` events, so the map is large and its
/// entries are cold:
/// - Entries are keyed by a 128-bit digest of (owner, key), not the two strings, so a
///   remembered key holds no heap memory and the map copies no reference-counted fields.
/// - One dictionary that size stalls the loop thread whenever it grows: it rehashes every key
///   at once, which measured up to 11 ms with a few tens of thousands of keys, long enough to
///   show in every in-flight request's latency. Split over `shardCount` dictionaries, a growth
///   rehashes one shard, so the pause is that much shorter; the total work is the same.
/// - The forgetting order is kept in fixed-size chunks for the same reason: appending and
///   trimming never copy more than one chunk's entries.
///
/// Keys whose request changed nothing (`set_day` to the current day, say) move no version, so
/// the window alone would never forget them: however many a client sends, each would stay. The
/// newest `unchangedLimit` of them are kept, apart from the others, so that a stream of them
/// can neither grow memory without end nor push out the keys of changes.
///
/// Loop thread only, like the hub that owns it.
struct IdempotencyMemory<Pending: AnyObject> {
    static var chunkSize: Int { 4_096 }

    /// Committed keys. Plain values: a move or a copy of one counts no references.
    private var shards = [[KeyDigest: Remembered]](repeating: [:], count: KeyDigest.shardCount)
    /// Keys whose first request is on its way to disk, one per keyed command in flight (a few
    /// hundred under heavy load), each with what its copies wait on. A small map of their own
    /// that stays in cache: the large, cold one is touched only to look a key up, to remember it
    /// once committed and to forget it.
    private var pending: [KeyDigest: Pending] = [:]
    /// Keys of requests that changed the game, and of those that changed nothing, each in
    /// commit order.
    private var changes = Slots()
    private var unchanged = Slots()
    let unchangedLimit: Int
    /// For a key remembered again while an older slot of it was still queued, how many such
    /// older slots remain: forgetting one of them must leave the newer entry. That happens only
    /// among the records a start-up loads (a key used again after the window was widened, or
    /// after it was pushed out as a request that changed nothing, at the same version), so the
    /// count is kept apart, in a map that is nearly always empty, rather than numbering every
    /// entry and slot (16 bytes more per remembered key, about 12 MiB at 50x16).
    private var supersededSlots: [KeyDigest: Int] = [:]

    private struct Remembered {
        let fingerprint: Fingerprint
        let version: Int
    }

    private typealias Slot = (version: Int, key: KeyDigest)

    init(unchangedLimit: Int) {
        self.unchangedLimit = unchangedLimit
    }

    /// How many keys are remembered or pending.
    var count: Int { shards.reduce(pending.count) { $0 + $1.count } }

    func lookup(_ key: KeyDigest) -> IdempotencyEntry<Pending>? {
        if !pending.isEmpty, let command = pending[key] { return .pending(command) }
        return shards[key.shard][key].map { .done($0.fingerprint, version: $0.version) }
    }

    /// The key's first request goes to disk; copies that arrive meanwhile wait on `command`.
    mutating func markPending(_ key: KeyDigest, _ command: Pending) { pending[key] = command }

    /// The key's request failed before committing: the key is free again.
    mutating func clearPending(_ key: KeyDigest) { pending[key] = nil }

    /// Records a committed key (no longer pending); it is forgotten once the game is
    /// `idempotency_window` versions past it, or, for a request that changed nothing, once
    /// `unchangedLimit` newer such keys are remembered.
    mutating func remember(_ key: KeyDigest, _ fingerprint: Fingerprint, version: Int, changedNothing: Bool = false) {
        if !pending.isEmpty { pending[key] = nil }
        if shards[key.shard].updateValue(Remembered(fingerprint: fingerprint, version: version), forKey: key) != nil {
            supersededSlots[key, default: 0] += 1
        }
        let slot = (version, key)
        if changedNothing {
            unchanged.append(slot)
            if unchanged.count > unchangedLimit, let oldest = unchanged.popFirst() { forget(oldest) }
        } else {
            changes.append(slot)
        }
    }

    /// Forgets every key remembered at `oldest` or before.
    mutating func forget(through oldest: Int) {
        while let slot = changes.first, slot.version <= oldest {
            forget(slot)
            _ = changes.popFirst()
        }
        while let slot = unchanged.first, slot.version <= oldest {
            forget(slot)
            _ = unchanged.popFirst()
        }
    }

    /// Forgets the key of `slot`, unless one of the key's slots is superseded
    /// (`supersededSlots`): then that count goes down instead, and the key's last slot to go
    /// removes it. Only the count matters, not which slot is which, as long as the newest
    /// slot is not the first to go: within a queue the older goes first; across the two, slots
    /// gone in the same `forget(through:)` go together. The one way the newest goes first, a
    /// key that changed nothing pushed out by count while an older slot of it waits for the
    /// window, keeps the key until that slot goes: a little longer, never shorter.
    private mutating func forget(_ slot: Slot) {
        if !supersededSlots.isEmpty, let superseded = supersededSlots[slot.key] {
            supersededSlots[slot.key] = superseded == 1 ? nil : superseded - 1
            return
        }
        shards[slot.key.shard][slot.key] = nil
    }

    /// Remembered keys in commit order, in chunks of `chunkSize`; `chunks[0][head...]` is still
    /// to be forgotten.
    private struct Slots {
        private var chunks: [[Slot]] = []
        private var head = 0
        private(set) var count = 0

        var first: Slot? { count == 0 ? nil : chunks[0][head] }

        mutating func append(_ slot: Slot) {
            if chunks.isEmpty || chunks[chunks.count - 1].count == IdempotencyMemory.chunkSize {
                var chunk: [Slot] = []
                chunk.reserveCapacity(IdempotencyMemory.chunkSize)
                chunks.append(chunk)
            }
            chunks[chunks.count - 1].append(slot)
            count += 1
        }

        mutating func popFirst() -> Slot? {
            guard let slot = first else { return nil }
            count -= 1
            head += 1
            if head == chunks[0].count && (head == IdempotencyMemory.chunkSize || count == 0) {
                chunks.removeFirst()
                head = 0
            }
            return slot
        }
    }
}

/// Who used which key: the strings, to store in the log and to read a reply back, and their
/// digest, which is all the memory keeps.
struct IdempotencyKey {
    let owner: String
    let key: String
    let digest: KeyDigest

    init(owner: String, key: String) {
        self.owner = owner
        self.key = key
        digest = KeyDigest(owner: owner, key: key)
    }
}

/// 128 bits of keyed SipHash over (owner, key): two hashes of the same strings under different
/// salts. Two different keys share a digest with probability about 2^-128 per pair, far below any
/// other failure the server can have; the hasher's per-process random seed keeps anyone from
/// choosing keys that collide. The log keeps the strings, so a restart computes digests afresh.
struct KeyDigest: Hashable {
    let high: UInt64
    let low: UInt64

    init(owner: String, key: String) {
        high = Self.hash(owner, key, salt: 0)
        low = Self.hash(owner, key, salt: 1)
    }

    /// Over the strings' UTF-8 bytes, not `String`'s own hashing: that one treats canonically
    /// equivalent spellings (a precomposed "é" and "e" plus an accent) as one key, while the log
    /// stores and finds keys by their exact bytes, so a retry spelled the other way would match
    /// here and then find no reply there. Each length goes in too, so ("ab", "c") and ("a", "bc")
    /// differ.
    private static func hash(_ owner: String, _ key: String, salt: UInt8) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(salt)
        combine(owner, into: &hasher)
        combine(key, into: &hasher)
        return UInt64(bitPattern: Int64(hasher.finalize()))
    }

    /// The text's bytes and their count (so that "ab"+"c" and "a"+"bc" differ), eight at a time.
    private static func combine(_ text: String, into hasher: inout Hasher) {
        let bytes = text.utf8.span
        hasher.combine(bytes.count)
        var word: UInt64 = 0
        for index in 0..<bytes.count {
            word = word << 8 | UInt64(bytes[index])
            if index & 7 == 7 {
                hasher.combine(word)
                word = 0
            }
        }
        if bytes.count & 7 != 0 { hasher.combine(word) }
    }

    static let shardCount = 64

    /// Which of `IdempotencyMemory`'s dictionaries holds it. The dictionary hashes `low` again
    /// with its own seed, so the bits used here do not crowd its buckets.
    var shard: Int { Int(high % UInt64(Self.shardCount)) }

    func hash(into hasher: inout Hasher) { hasher.combine(low) }
}

enum IdempotencyEntry<Pending> {
    /// Committed: the request's digest, to tell a retry from another request under the same
    /// key, and the version whose record in the log holds the reply.
    case done(Fingerprint, version: Int)
    /// On its way to disk; copies of the request that arrive meanwhile wait on the command.
    case pending(Pending)
}
