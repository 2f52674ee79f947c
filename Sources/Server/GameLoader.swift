import Crypto
import Domain
import EventLog
import Foundation
import JSON
import Protocol
import Views
import POSIXSupport

/// Start-up: each game's newest snapshot plus the events after it, and the seed
/// for a game that has none.
public enum GameLoader {
    struct Loaded {
        let state: GameState
        let idempotency: [IdempotencyRecord]
        let snapshotVersion: Int
        /// The newest snapshot, when it could not be used and the game was replayed from its
        /// first event instead.
        var passedOver: UnusableSnapshot? = nil
        /// Snapshots that read well but disagree with the events (damaged, or edited by hand):
        /// passed over by start-up and by resumes alike.
        var distrusted: [UnusableSnapshot] = []
        /// Why the newest snapshot could not be checked (an event before it cannot be read): it
        /// is served as it is, as before the check.
        var unchecked: String? = nil
    }

    static func load(game: String, from store: EventStore, idempotencyWindow: Int) throws -> Loaded {
        var state = GameState()
        var snapshotVersion = 0
        var passedOver: UnusableSnapshot?
        var distrusted: [UnusableSnapshot] = []
        var unchecked: String?
        if let snapshot = try store.latestSnapshot(game: game) {
            do {
                let newest = try Codec.usableState(snapshot)
                let check = try checked(newest, game: game, store: store)
                (state, distrusted, unchecked) = (check.state, check.distrusted, check.unchecked)
                if !distrusted.contains(where: { $0.version == snapshot.version }) { snapshotVersion = newest.version }
            } catch let error as UnusableSnapshot {
                passedOver = error
            }
        }
        try replayLog(&state, game: game, from: store)
        let oldestRemembered = Int64(max(0, state.version - idempotencyWindow))
        return Loaded(state: state,
                      idempotency: try store.idempotencyRecords(game: game, afterVersion: oldestRemembered, replies: false,
                                                                unchangedLimit: idempotencyWindow),
                      snapshotVersion: snapshotVersion, passedOver: passedOver, distrusted: distrusted, unchecked: unchecked)
    }

    /// The state at the newest snapshot's version that start-up may trust.
    struct SnapshotCheck {
        var state: GameState
        var distrusted: [UnusableSnapshot] = []
        var unchecked: String?
    }

    /// Checks the newest snapshot against the one before it and the events between them (at
    /// most `snapshot_every`). Agreeing, both stand. Disagreeing, one of them was damaged or
    /// edited by hand (or written by a bug), which start-up would otherwise serve without a word,
    /// and copy into every later snapshot: the log from its first event says which, and its
    /// state is the one served. Not checked when the snapshot before cannot be used (only the
    /// whole log could tell then, at every start), nor when an event before the newest cannot
    /// be read (the start-up before the check served such a log; `bq verify` finds it).
    static func checked(_ newest: GameState, game: String, store: EventStore) throws -> SnapshotCheck {
        var state = GameState()
        var earlier: GameState?
        if let row = try store.latestSnapshot(game: game, atOrBefore: Int64(newest.version - 1)) {
            guard let usable = try? Codec.usableState(row) else { return SnapshotCheck(state: newest) }
            earlier = usable
            state = usable
        }
        do {
            try replayLog(&state, game: game, from: store, through: newest.version)
        } catch let error as ServerError {
            return SnapshotCheck(state: newest, unchecked: "\(error)")
        }
        if state == newest { return SnapshotCheck(state: newest) }
        var truth = GameState()
        var distrusted: [UnusableSnapshot] = []
        do {
            for snapshot in [earlier, newest].compactMap({ $0 }) {
                try replayLog(&truth, game: game, from: store, through: snapshot.version)
                if truth != snapshot {
                    distrusted.append(UnusableSnapshot(version: Int64(snapshot.version), reason: "differs from its events, "
                        + "replayed from the first" + LogVerifier.differences(snapshot: snapshot, replayed: truth)))
                }
            }
        } catch let error as ServerError {
            // Which of the two is wrong is unknown: the newest is served, as before the check.
            return SnapshotCheck(state: newest, unchecked: "it disagrees with the one before it and the events between "
                + "them, and which is wrong cannot be told: \(error)")
        }
        return SnapshotCheck(state: truth, distrusted: distrusted)
    }

    /// Applies `game`'s events after `state` to it, up to `last`, in batches.
    static func replayLog(_ state: inout GameState, game: String, from store: EventStore, through last: Int = .max) throws {
        while state.version < last {
            let batch = try store.events(game: game, after: Int64(state.version), limit: 10_000)
            if batch.isEmpty { return }
            for stored in batch {
                guard stored.version <= Int64(last) else { return }
                do {
                    try Codec.applyNext(stored, to: &state)
                } catch {
                    throw ServerError.startup("Game \(game): \(error)")
                }
            }
        }
    }

    /// Reads and validates a seed file; the error names the file, the field and the problem.
    public static func readSeed(path: String) throws -> (content: SeedContent, hash: String) {
        guard let data = FileManager.default.contents(atPath: path) else {
            // Through symbolic links, as the read itself went.
            let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
            let isDirectory = (try? FileManager.default.attributesOfItem(atPath: target))?[.type] as? FileAttributeType == .typeDirectory
            let reason = isDirectory
                ? ": it is a directory" : readabilityError(of: path).map { ": " + $0 } ?? ""
            throw ServerError.startup("\(path): cannot read the seed file\(reason)")
        }
        return try parseSeed(Array(data), name: path)
    }

    /// A seed's content hash, over its canonical encoding so that spacing and the order of
    /// fields do not matter: seeding the same content again is a no-op.
    static func seedHash(_ content: SeedContent) -> String {
        lowercaseHex(SHA256.hash(data: Data(SeedWriter.json(content).serialized(sortedKeys: true).utf8)))
    }

    /// Validates a seed's bytes; `name` says where they came from in every error.
    static func parseSeed(_ file: [UInt8], name: String) throws -> (content: SeedContent, hash: String) {
        // Some Windows editors begin a UTF-8 file with a byte-order mark: a seed is typed by a
        // person, not sent by a program, so it is skipped rather than refused.
        let bytes = file.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(file.dropFirst(3)) : file
        let json: JSONValue
        do {
            json = try JSONParser.parse(bytes, maxDepth: 64)
        } catch {
            // A person fixes a seed in a text editor: the line and column, beside the byte.
            let (line, column) = error.place(in: bytes)
            throw ServerError.startup("\(name): not valid JSON: \(error) (line \(line), column \(column))")
        }
        do {
            let content = try SeedParser.parse(json, file: name)
            return (content, seedHash(content))
        } catch {
            throw ServerError.startup("\(error)")
        }
    }

    /// The seed of one start-up: read when a game first needs it, then kept for the others.
    /// The default path, when nobody named a seed, missing from the working directory means the
    /// copy built into the executable: a server started elsewhere still seeds the shipped game.
    /// A seed that was named (`named`), even by the default path, must be there: whoever named it
    /// meant that file, and a game once seeded is never seeded again. Any path that cannot be
    /// read is an error, as is a default path that exists but cannot be read.
    public final class Seed {
        let path: String
        let isBuiltIn: Bool
        /// Where the seed comes from, for the log and for errors.
        public let source: String
        private var read: (content: SeedContent, hash: String)?

        public init(path: String, named: Bool) {
            self.path = path
            isBuiltIn = !named && path == BuiltInSeed.path && !FileManager.default.fileExists(atPath: path)
            source = isBuiltIn
                ? "the built-in seed (no \(path) in \(FileManager.default.currentDirectoryPath))" : path
        }

        public func content() throws -> (content: SeedContent, hash: String) {
            if let read { return read }
            let fresh = isBuiltIn
                ? try parseSeed(Array(BuiltInSeed.text.utf8), name: "built-in \(path)")
                : try readSeed(path: path)
            read = fresh
            return fresh
        }
    }

    /// Commits the seed as the game's first event, unless the game already has events.
    static func seedIfEmpty(game: String, state: GameState, seed: Seed, store: EventStore, now: Millis) throws -> GameState {
        guard state.version == 0 else { return state }
        let (content, hash) = try seed.content()
        switch decide(state, .seed(content, hash: hash), CommandContext(actor: .system, at: now)) {
        case .failure(let rejection):
            throw ServerError.startup("\(seed.source): \(rejection.message)")
        case .success(let events):
            let rows = events.map { Codec.newEvent($0, idempotencyKey: nil) }
            switch store.append(AppendRequest(game: game, expected: 0, events: rows, idempotency: [], snapshot: nil)) {
            case .committed: return replay(events, from: state)
            case .conflict(let expected, let actual):
                throw ServerError.startup("Game \(game): seeding expected version \(expected), found \(actual)")
            case .failed(let error):
                throw ServerError.startup("Game \(game): cannot write the seed: \(error)")
            case .uncertain(let error):
                throw ServerError.startup("Game \(game): the disk failed while the seed was written, "
                    + "and whether it was is unknown until the next start: \(error)")
            }
        }
    }
}
