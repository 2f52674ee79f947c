/// The idempotency keys one game remembers, and the order in which to forget them.
///
/// A game keeps up to `idempotency_window` keys. One dictionary that size stalls the loop
/// thread whenever it grows: it rehashes every key at once, which measured up to 11 ms with a
/// few tens of thousands of keys, long enough to show in every in-flight request's latency.
/// Split over `shardCount` dictionaries, a growth rehashes one shard, so the pause is that much
/// shorter; the total work is the same. The forgetting order is kept in fixed-size chunks for
/// the same reason: appending and trimming never move more than one chunk.
///
/// Loop thread only, like the hub that owns it.
struct IdempotencyMemory {
    static let shardCount = 64
    static let chunkSize = 4_096

    private var shards = [[IdempotencyKey: IdempotencyEntry]](repeating: [:], count: shardCount)
    /// Remembered keys in commit order; `order[0][orderHead...]` is still to be forgotten.
    private var order: [[(version: Int, key: IdempotencyKey)]] = []
    private var orderHead = 0

    /// How many keys are remembered or pending.
    var count: Int { shards.reduce(0) { $0 + $1.count } }

    subscript(key: IdempotencyKey) -> IdempotencyEntry? {
        get { shards[key.shard][key] }
        set { shards[key.shard][key] = newValue }
    }

    /// Records a committed key; it is forgotten once the game is `window` versions past it.
    mutating func remember(_ key: IdempotencyKey, _ fingerprint: Fingerprint, version: Int) {
        self[key] = .done(fingerprint, version: version)
        if order.isEmpty || order[order.count - 1].count == Self.chunkSize {
            var chunk: [(version: Int, key: IdempotencyKey)] = []
            chunk.reserveCapacity(Self.chunkSize)
            order.append(chunk)
        }
        order[order.count - 1].append((version, key))
    }

    /// Forgets every key remembered at `oldest` or before.
    mutating func forget(through oldest: Int) {
        while !order.isEmpty, orderHead < order[0].count, order[0][orderHead].version <= oldest {
            let key = order[0][orderHead].key
            // One map operation: remove, and put back in the (never seen) case that it is not the
            // entry this order slot remembers.
            if let removed = shards[key.shard].removeValue(forKey: key) {
                if case .done(_, let version) = removed, version <= oldest {} else { self[key] = removed }
            }
            orderHead += 1
            if orderHead == Self.chunkSize {
                order.removeFirst()
                orderHead = 0
            }
        }
    }
}

/// Who used which key. The map looks each one up, inserts, replaces and removes it, and
/// rehashes it whenever its shard grows: hashing the two strings once, here, spares the other times.
struct IdempotencyKey: Hashable {
    let owner: String
    let key: String
    private let hash: Int

    init(owner: String, key: String) {
        self.owner = owner
        self.key = key
        var hasher = Hasher()
        hasher.combine(owner)
        hasher.combine(key)
        hash = hasher.finalize()
    }

    /// Which of `IdempotencyMemory`'s dictionaries holds it. The dictionary hashes `hash`
    /// again with its own seed, so the bits used here do not crowd its buckets.
    var shard: Int { Int(UInt(bitPattern: hash) % UInt(IdempotencyMemory.shardCount)) }

    static func == (left: IdempotencyKey, right: IdempotencyKey) -> Bool {
        left.hash == right.hash && left.owner == right.owner && left.key == right.key
    }

    func hash(into hasher: inout Hasher) { hasher.combine(hash) }
}

enum IdempotencyEntry {
    /// Committed: the request's digest, to tell a retry from another request under the same
    /// key, and the version whose record in the log holds the reply.
    case done(Fingerprint, version: Int)
    /// On its way to disk; copies of the request that arrive meanwhile wait on the command.
    case pending(PendingCommand)
}
