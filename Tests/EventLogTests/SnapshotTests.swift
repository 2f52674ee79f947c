import SeededRandom
import Testing
@testable import EventLog

/// A stand-in for a domain fold: order-sensitive, so a missing, doubled or reordered event shows.
struct Fold: Equatable {
    var hash: UInt64 = 1469598103934665603
    var count: Int64 = 0

    mutating func apply(_ event: StoredEvent) {
        for byte in event.payload.utf8 { hash = (hash ^ UInt64(byte)) &* 1099511628211 }
        count += 1
    }

    var text: String { "\(hash):\(count)" }

    init() {}
    init?(text: String) {
        let parts = text.split(separator: ":")
        guard parts.count == 2, let hash = UInt64(parts[0]), let count = Int64(parts[1]) else { return nil }
        self.hash = hash
        self.count = count
    }
}

@Suite struct SnapshotTests {
    @Test(arguments: [1, 2, 3, 42, 20_240_601] as [UInt64])
    func snapshotPlusTailEqualsFullReplay(seed: UInt64) throws {
        try withTemporaryDirectory { dir in
            var random = SplitMix64(seed: seed)
            let store = try EventStore(path: dir + "/log.sqlite")
            defer { store.close() }
            let games = ["a", "b", "c"]
            var folds = [String: Fold]()
            var versions = [String: Int64]()
            var n = 0
            for _ in 0..<120 {
                let game = games[random.below(games.count)]
                let expected = versions[game, default: 0]
                var fold = folds[game, default: Fold()]
                var events: [NewEvent] = []
                for index in 0...random.below(4) {
                    n += 1
                    let newEvent = event(n * 7 + random.below(1000))
                    events.append(newEvent)
                    fold.apply(StoredEvent(game: game, version: expected + Int64(index) + 1, type: newEvent.type,
                                           actor: newEvent.actor, at: newEvent.at, idempotencyKey: nil,
                                           payload: newEvent.payload))
                }
                let after = expected + Int64(events.count)
                let snapshot = random.below(5) == 0 ? Snapshot(version: after, state: fold.text) : nil
                let result = store.append(AppendRequest(game: game, expected: expected, events: events, snapshot: snapshot))
                #expect(result == .committed(version: after), "seed \(seed)")
                versions[game] = after
                folds[game] = fold
            }
            for game in games {
                let final = versions[game, default: 0]
                for version in 0...final {
                    var full = Fold()
                    for stored in try store.events(game: game, after: 0, through: version) { full.apply(stored) }
                    var resumed = Fold()
                    var from: Int64 = 0
                    if let snapshot = try store.latestSnapshot(game: game, atOrBefore: version) {
                        resumed = try #require(Fold(text: snapshot.state), "seed \(seed)")
                        from = snapshot.version
                        #expect(from <= version, "seed \(seed)")
                    }
                    for stored in try store.events(game: game, after: from, through: version) { resumed.apply(stored) }
                    #expect(resumed == full, "seed \(seed), game \(game), version \(version)")
                    #expect(full.count == version, "seed \(seed), game \(game)")
                }
                #expect(try store.latestSnapshot(game: game) == store.snapshots(game: game).last, "seed \(seed)")
                // Paged reads agree with the range read.
                var paged: [StoredEvent] = []
                while true {
                    let page = try store.events(game: game, after: paged.last?.version ?? 0, limit: 7)
                    if page.isEmpty { break }
                    paged += page
                }
                #expect(paged == (try store.events(game: game, after: 0, through: final)), "seed \(seed)")
            }
        }
    }
}
