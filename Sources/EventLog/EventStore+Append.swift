import SQLite
import CSQLite3
import Foundation

extension EventStore {
    /// Appends one request in its own `BEGIN IMMEDIATE` transaction (compare-and-set on the
    /// game's version).
    public func append(_ request: AppendRequest) -> AppendResult {
        append(batch: [request])[0]
    }

    /// Appends every request in ONE transaction, in order. Each request is checked against its
    /// game's version at that point (earlier requests of the batch included): a mismatch gives
    /// that request `.conflict` and writes nothing of it, the others still commit. If any write or
    /// the COMMIT fails, the transaction is rolled back and every request gets `.failed`, or
    /// `.uncertain` when a failed COMMIT may yet reappear after a crash and that could not be
    /// settled (see `settleFailedCommit`). A request fenced off by an earlier failure of its
    /// epoch (see `AppendRequest.epoch`) gets `.failed` and writes nothing; the others still commit.
    public func append(batch: [AppendRequest]) -> [AppendResult] {
        let results = appendUnfenced(batch)
        for (request, result) in zip(batch, results) {
            if case .committed = result { continue }
            fence(request)
        }
        return results
    }

    private func appendUnfenced(_ batch: [AppendRequest]) -> [AppendResult] {
        guard !batch.isEmpty else { return [] }
        // A batch decided wholly before a failure it could not know of (the usual shape) does
        // not wait for the write lock only to be refused.
        if !fencedEpochs.isEmpty {
            let fenced = batch.compactMap(fencedOff)
            if fenced.count == batch.count { return fenced.map { .failed($0) } }
        }
        if options.readOnly {
            let error = StorageError(code: SQLITE_READONLY, message: "the store was opened read-only")
            return batch.map { _ in .failed(error) }
        }
        if let moved = filesMovedError() { return batch.map { _ in .failed(moved) } }
        do {
            try connection.run("BEGIN IMMEDIATE")
        } catch {
            return failAll(batch, error)
        }
        var versions: [String: Int64] = [:]
        var results: [AppendResult] = []
        results.reserveCapacity(batch.count)
        do {
            try dropCacheIfOthersWrote()
            for request in batch {
                let current: Int64
                if let known = versions[request.game] ?? versionCache[request.game] {
                    current = known
                } else {
                    current = try version(game: request.game)
                }
                versions[request.game] = current
                if let problem = validate(request) ?? fencedOff(request) {
                    results.append(.failed(problem))
                    fence(request)
                    continue
                }
                guard request.expected == current else {
                    results.append(.conflict(expected: request.expected, actual: current))
                    fence(request)
                    continue
                }
                let after = try write(request)
                versions[request.game] = after
                results.append(.committed(version: after))
            }
            try recordFailures(unrecordedFailures)
        } catch {
            rollback()
            return failAll(batch, error)
        }
        do {
            try connection.run("COMMIT")
        } catch {
            rollback()
            return settleFailedCommit(batch, error)
        }
        unrecordedFailures = []
        versionCache.merge(versions) { _, new in new }
        return results
    }

    /// Request checks that need no database; a malformed request fails alone, not its batch.
    private func validate(_ request: AppendRequest) -> StorageError? {
        if request.game.isEmpty { return .misuse("the game name is empty") }
        if request.expected < 0 { return .misuse("expected version \(request.expected) is negative") }
        let after = request.expected + Int64(request.events.count)
        if let snapshot = request.snapshot, snapshot.version < 1 || snapshot.version > after {
            return .misuse("snapshot version \(snapshot.version) is outside 1...\(after)")
        }
        return nil
    }

    private func fencedOff(_ request: AppendRequest) -> StorageError? {
        // Empty but for a game whose commit failed: no lookup per request on the way to disk.
        guard !fencedEpochs.isEmpty, let epoch = request.epoch, let fenced = fencedEpochs[request.game], epoch <= fenced else {
            return nil
        }
        return StorageError(code: SQLITE_ABORT, message: "not written: a request of game \"\(request.game)\" "
            + "decided before this one failed (epoch \(epoch), fenced through \(fenced))")
    }

    /// Fences off the rest of a failed request's epoch, within this batch too.
    private func fence(_ request: AppendRequest) {
        guard let epoch = request.epoch else { return }
        fencedEpochs[request.game] = max(fencedEpochs[request.game] ?? 0, epoch)
    }

    /// Inserts the request's rows at versions `expected + 1 ...`; returns the version after.
    private func write(_ request: AppendRequest) throws(StorageError) -> Int64 {
        let after = request.expected + Int64(request.events.count)
        // The command's record rides on its last event when it names that event's key and
        // version; anything else (a command without events, a record for another version or
        // key) gets a row of its own.
        var separate = request.idempotency[...]
        var attached: IdempotencyRecord?
        if let last = request.events.last, let index = separate.firstIndex(where: {
            $0.version == after && $0.key == last.idempotencyKey
        }) {
            attached = separate[index]
            separate.remove(at: index)
        }
        let insertEvent = try connection.statement("""
            INSERT INTO events(game, version, type, actor, at, idem, payload, idem_identity, idem_fingerprint, idem_reply)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
            """)
        var version = request.expected
        for event in request.events {
            version += 1
            let record = version == after ? attached : nil
            try insertEvent.bind(1, request.game)
            try insertEvent.bind(2, version)
            try insertEvent.bind(3, event.type)
            try insertEvent.bind(4, event.actor)
            try insertEvent.bind(5, event.at)
            try insertEvent.bind(6, event.idempotencyKey)
            try insertEvent.bind(7, event.payload)
            try insertEvent.bind(8, record?.identity)
            try insertEvent.bind(9, record?.fingerprint)
            try insertEvent.bind(10, record?.reply)
            try insertEvent.run()
        }
        if !separate.isEmpty {
            let insertRecord = try connection.statement("""
                INSERT INTO idempotency(game, identity, key, fingerprint, reply, version, unchanged)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                """)
            for record in separate {
                try insertRecord.bind(1, request.game)
                try insertRecord.bind(2, record.identity)
                try insertRecord.bind(3, record.key)
                try insertRecord.bind(4, record.fingerprint)
                try insertRecord.bind(5, record.reply)
                try insertRecord.bind(6, record.version)
                try insertRecord.bind(7, record.changedNothing ? 1 : 0)
                try insertRecord.run()
            }
        }
        if let snapshot = request.snapshot {
            // A snapshot is a pure function of the log up to its version, so rewriting one at the
            // same version replaces equal content.
            let insertSnapshot = try connection.statement(
                "INSERT OR REPLACE INTO snapshots(game, version, state) VALUES (?1, ?2, ?3)")
            try insertSnapshot.bind(1, request.game)
            try insertSnapshot.bind(2, snapshot.version)
            try insertSnapshot.bind(3, snapshot.state)
            try insertSnapshot.run()
        }
        return version
    }

    /// Another connection's commit makes every cached version suspect.
    private func dropCacheIfOthersWrote() throws(StorageError) {
        let dataVersion = try connection.integer("PRAGMA data_version")
        if dataVersion != cachedDataVersion {
            versionCache.removeAll()
            cachedDataVersion = dataVersion
        }
    }

    /// A COMMIT that failed after writing its last frame (its sync failed, or growing the WAL's
    /// index did) has left the transaction, commit mark included, in the WAL file. SQLite counts
    /// it as rolled back, but the first process to open the log after a crash rebuilds the
    /// index from that file and would replay it: a change refused as "nothing was committed"
    /// would reappear. The next commit starts where that one did: its frames replace the
    /// failed one's first frames, and the checksums that chain each frame to the one before
    /// stop recovery at its end. So one more commit, a record of the failure, settles it once
    /// it is durable; if that cannot be made durable either, the outcome is uncertain and said
    /// to be. A COMMIT that failed writing (a full disk) never wrote a whole commit frame.
    private func settleFailedCommit(_ batch: [AppendRequest], _ commitError: StorageError) -> [AppendResult] {
        if commitError.code == SQLITE_FULL || commitError.extendedCode == bq_sqlite_ioerr_write() {
            return failAll(batch, commitError)
        }
        let failure = (at: Int64(Date().timeIntervalSince1970 * 1000), error: commitError.description)
        // A disk that fails every sync for hours fails every batch: the records of an outage
        // are its first ones and its latest, not one per batch re-sent with every attempt.
        if unrecordedFailures.count < Self.maxUnrecordedFailures {
            unrecordedFailures.append(failure)
        } else {
            unrecordedFailures[unrecordedFailures.count - 1] = failure
        }
        do throws(StorageError) {
            try connection.run("BEGIN IMMEDIATE")
            try recordFailures(unrecordedFailures)
            try connection.run("COMMIT")
        } catch {
            rollback()
            forgetCachedVersions()
            return batch.map { _ in .uncertain(commitError) }
        }
        unrecordedFailures = []
        return failAll(batch, commitError)
    }

    /// Inserts records of failed commits into the open transaction.
    private func recordFailures(_ failures: [(at: Int64, error: String)]) throws(StorageError) {
        guard !failures.isEmpty else { return }
        let insert = try connection.statement("INSERT INTO failed_commits(at, error) VALUES (?1, ?2)")
        for failure in failures {
            try insert.bind(1, failure.at)
            try insert.bind(2, failure.error)
            try insert.run()
        }
    }

    private func failAll(_ batch: [AppendRequest], _ error: StorageError) -> [AppendResult] {
        forgetCachedVersions()
        return batch.map { _ in .failed(error) }
    }

    /// The cache may hold versions of a rolled-back transaction's reads; reloaded lazily.
    private func forgetCachedVersions() {
        versionCache.removeAll()
        cachedDataVersion = -1
    }

    /// Whether the log's files are still the ones this connection writes, checked before a
    /// transaction at most every `filesCheckMilliseconds` (two `stat`s). One deleted or moved
    /// while the server runs (a tidy-up, a sync tool) still takes commits, into a file no
    /// restart will find: after a crash every change since the last checkpoint would be gone,
    /// and each had been acknowledged. So from then on every commit is refused, and the message
    /// says how to keep what there is.
    func filesMovedError() -> StorageError? {
        if let filesMoved { return filesMoved }
        let now = ContinuousClock.now
        if let last = filesCheckedAt, now - last < .milliseconds(options.filesCheckMilliseconds) { return nil }
        filesCheckedAt = now
        let wal = path + "-wal"
        let found = connection.walFileIdentity
        if walIdentity == nil { walIdentity = found }
        let problem: String
        if connection.mainFileHasMoved {
            problem = "\(path) was deleted, moved or replaced: put it back where it was before stopping the server "
                + "(its clean stop writes the game into that file), or every change since the last checkpoint is lost"
        } else if let seen = walIdentity, !(found.map { $0 == seen } ?? false) {
            problem = "\(wal) was deleted, moved or replaced: stop the server cleanly now (Ctrl-C or SIGTERM), "
                + "which copies every change it holds into \(path); a crash or kill -9 first would lose them"
        } else {
            return nil
        }
        let error = StorageError(code: SQLITE_READONLY, extendedCode: StorageError.filesMovedCode,
                                 message: "the event log's files changed under the server, so no more changes "
            + "are taken: \(problem)")
        filesMoved = error
        return error
    }
}
