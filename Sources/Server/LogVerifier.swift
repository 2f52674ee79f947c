import Domain
import EventLog
import JSON

/// `bq verify`: replays every game from version 1 and checks what must always
/// hold. A report with problems means the log cannot be trusted as it is.
public enum LogVerifier {
    public struct Report: Sendable {
        public var games: [String: Int] = [:]
        public var problems: [String] = []
        public var snapshotsChecked = 0
        /// Commits that failed at the disk (a failed sync, say) and were refused: not problems
        /// of the log itself, but a sign of a failing disk. And when the last one was.
        public var failedCommits = 0
        public var lastFailedCommitAt: Int64?
        public var isClean: Bool { problems.isEmpty }
    }

    /// `idempotencyWindow`: the server's; a key used again once it was forgotten commits again.
    /// `options`: how to open the log (`ServerConfig.readerOptions`).
    public static func verify(path: String, idempotencyWindow: Int = ServerConfig().idempotencyWindow,
                              options: StoreOptions = ServerConfig().readerOptions) throws -> Report {
        let store = try EventStore(path: path, options: options)
        defer { store.close() }
        var report = Report()
        if store.walFramesLost > 0 {
            report.problems.append("the -wal lacks at least \(store.walFramesLost) frames (page writes) of its newest commits "
                + "that its index counted (cut short, or lost to a power cut): they are lost, and the games below are as they "
                + "were before them")
        }
        (report.failedCommits, report.lastFailedCommitAt) = try store.failedCommits()
        for game in try store.games() {
            try verify(game: game, store: store, idempotencyWindow: idempotencyWindow, into: &report)
        }
        return report
    }

    static func verify(game: String, store: EventStore, idempotencyWindow: Int, into report: inout Report) throws {
        let snapshots = Dictionary(uniqueKeysWithValues: try store.snapshots(game: game).map { (Int($0.version), $0) })
        var state = GameState()
        var after: Int64 = 0
        // The version whose event unlocked the last reward, until the final badge is seen: the
        // badge is the next event of the same command, so the rule holds between commands, not
        // between the two events.
        var badgeOwedSince: Int?
        while true {
            let batch = try store.events(game: game, after: after, limit: 10_000)
            if batch.isEmpty { break }
            for stored in batch {
                let before = state
                do {
                    try Codec.applyNext(stored, to: &state)
                } catch {
                    report.problems.append("\(game): \(error)")
                    return
                }
                report.problems += invariantProblems(before: before, after: state).map { "\(game) v\(state.version) (\(stored.type)): \($0)" }
                if let owed = badgeOwedSince, !state.hasFinalBadge {
                    report.problems.append("\(game) v\(owed): every reward is unlocked but the final badge did not follow")
                }
                badgeOwedSince = unlocksTheLastReward(before: before, after: state) && !state.hasFinalBadge ? state.version : nil
                if let snapshot = snapshots[state.version] {
                    report.snapshotsChecked += 1
                    do {
                        let stored = try Codec.state(snapshot)
                        if stored != state {
                            report.problems.append("\(game): the snapshot at version \(state.version) differs from the replayed state"
                                + differences(snapshot: stored, replayed: state))
                        }
                    } catch {
                        report.problems.append("\(game): the snapshot at version \(state.version) cannot be read: \(error)")
                    }
                }
            }
            after = Int64(state.version)
        }
        if let owed = badgeOwedSince {
            report.problems.append("\(game) v\(owed): every reward is unlocked but the final badge never followed")
        }
        for version in snapshots.keys where version > state.version {
            report.problems.append("\(game): a snapshot at version \(version) is past the last event (\(state.version))")
        }
        // A key is remembered for the window's events after its record, and the key of a
        // command that changed nothing only until `idempotencyWindow` newer such keys followed
        // it (`IdempotencyMemory`); used again later, it is a new request and commits again.
        var lastSeen: [String: (version: Int64, unchangedIndex: Int?)] = [:]
        var unchangedSeen = 0
        for record in try store.idempotencyRecords(game: game) {
            let owned = record.identity + "\u{0}" + record.key
            if let earlier = lastSeen[owned] {
                let pastTheWindow = record.version - earlier.version >= Int64(idempotencyWindow)
                let pushedOut = earlier.unchangedIndex.map { unchangedSeen > $0 + idempotencyWindow } ?? false
                if !pastTheWindow && !pushedOut {
                    report.problems.append("\(game): idempotency key \"\(record.key)\" of \(record.identity) appears twice, "
                        + "at versions \(earlier.version) and \(record.version)")
                }
            }
            lastSeen[owned] = (record.version, record.changedNothing ? unchangedSeen : nil)
            if record.changedNothing { unchangedSeen += 1 }
            if record.version > Int64(state.version) || record.version < 1 {
                report.problems.append("\(game): idempotency key \"\(record.key)\" names version \(record.version), outside 1...\(state.version)")
            }
        }
        report.games[game] = state.version
    }

    /// Where a snapshot and the replay disagree, as JSON Pointers into the state's stored form
    /// (`/earned`, `/characters/priya/tokenHashes`), so that whoever restores the log knows what
    /// was changed. Paths only: a value may be a PIN, a token hash or a gift not yet unlocked.
    static func differences(snapshot: GameState, replayed: GameState, shown: Int = 5) -> String {
        guard let stored = try? JSONParser.parse(Array(Codec.encode(snapshot).utf8)),
              let replayedJSON = try? JSONParser.parse(Array(Codec.encode(replayed).utf8)) else { return "" }
        var paths: [String] = []
        for op in JSONPatch.diff(replayedJSON, stored) where !paths.contains(op.path) {
            paths.append(op.path)
        }
        guard !paths.isEmpty else { return "" }
        let more = paths.count > shown ? " and \(paths.count - shown) more" : ""
        return " at " + paths.prefix(shown).joined(separator: ", ") + more
    }

    static func unlocksTheLastReward(before: GameState, after state: GameState) -> Bool {
        state.rewardsTotal > 0 && before.rewardsUnlocked < before.rewardsTotal && state.rewardsUnlocked == state.rewardsTotal
    }

    /// The rules of GAME.md that hold after every event. (The final badge's, which holds after
    /// every command, is checked by `verify`.)
    public static func invariantProblems(before: GameState, after state: GameState) -> [String] {
        var problems: [String] = []
        if state.points < 0 { problems.append("points are negative (\(state.points))") }
        if state.earned < before.earned { problems.append("earned went down") }
        if state.spent < before.spent { problems.append("spent went down") }
        if state.timeline.count < before.timeline.count || Array(state.timeline.prefix(before.timeline.count)) != before.timeline {
            problems.append("the timeline lost or changed an entry")
        }
        for (index, entry) in state.timeline.enumerated() where entry.seq != index + 1 {
            problems.append("timeline entry \(index) has seq \(entry.seq)")
            break
        }
        if before.hasFinalBadge && !state.hasFinalBadge { problems.append("the final badge was taken back") }
        if !before.hasFinalBadge && state.hasFinalBadge && !state.finalBadgeForced && state.rewardsUnlocked != state.rewardsTotal {
            problems.append("the final badge unlocked with \(state.rewardsUnlocked) of \(state.rewardsTotal) rewards")
        }
        for (id, reward) in before.rewards where reward.isUnlocked && state.rewards[id]?.isUnlocked != true {
            problems.append("reward \(id) was locked again")
        }
        for (id, challenge) in before.challenges where challenge.isCompleted && state.challenges[id]?.isCompleted != true {
            problems.append("challenge \(id) was un-completed")
        }
        return problems
    }
}
