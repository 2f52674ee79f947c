import Domain
import EventLog
import Foundation
import JSON
import Logging
import POSIXSupport
import Protocol
import UV
import Views

/// Rebuilds past views for `subscribe since` on a reader thread of its own
/// (`BackgroundReader`): replaying up to `snapshot_every` events from the log would otherwise
/// hold the loop thread, and with it every player, for milliseconds per resume.
///
/// Threads: `rebuild`, `takeFinished` and `stop` on the loop thread; the rebuilding itself on
/// the reader's thread, which hands each view back through `wakeup`.
final class ViewRebuilder {
    /// A view rebuilt for the request with this ticket; nil when it could not be (logged).
    struct Finished: Sendable {
        let ticket: Int
        let game: String
        /// Whoever asked, as they said (`rebuild`).
        let requester: ObjectIdentifier
        let view: JSONValue?
        /// `view`'s `ViewDigest`, when the rebuild was asked for one.
        let digest: String?
        /// The snapshot that could not be used, so the view was replayed from the first event:
        /// said by the loop thread, throttled, since every resume past it would say it again.
        let passedOver: UnusableSnapshot?
    }

    private let reader: BackgroundReader
    private let finished: Inbox<Finished>
    private let logger: Logger
    /// Test hook: while closed, rebuilds wait at their start.
    let gate = RebuildGate()
    private var nextTicket = 0

    /// `wakeup` calls the loop thread back when views are ready for `takeFinished()`.
    init(path: String, options: StoreOptions, logger: Logger, wakeup: AsyncWakeup.Sender) throws(StorageError) {
        reader = try BackgroundReader(path: path, options: options, name: "bq-view-rebuilder")
        finished = Inbox(wakeup: wakeup)
        self.logger = logger
    }

    /// Queues the rebuild of `viewer`'s view of `game` at `version`; the returned ticket comes
    /// back with it, and `requester`. Nil once stopped: nothing will come back.
    /// `avoiding`: versions of snapshots not to start from (start-up found them damaged).
    /// `digested`: the view's digest comes back too, made here rather than on the loop thread.
    func rebuild(game: String, at version: Int, for viewer: Viewer, avoiding distrusted: Set<Int> = [],
                 digested: Bool = false, requester: ObjectIdentifier) -> Int? {
        nextTicket += 1
        let ticket = nextTicket
        let (finished, logger, gate) = (self.finished, self.logger, self.gate)
        let queued = reader.perform { store in
            gate.passThrough()
            let (view, passedOver) = Self.view(of: game, at: version, for: viewer, avoiding: distrusted, from: store, logger: logger)
            let digest = digested ? view.map(ViewDigest.of) : nil
            finished.post(Finished(ticket: ticket, game: game, requester: requester, view: view, digest: digest,
                                   passedOver: passedOver))
        }
        return queued ? ticket : nil
    }

    /// The views rebuilt since the last call, in the order they were asked for.
    func takeFinished() -> [Finished] { finished.takeAll() }

    /// Lets a rebuild in progress finish and drops the rest (their requests are answered by
    /// whoever asked). Opens the gate first: a test that left it closed must not hang the
    /// shutdown. Idempotent.
    func stop() {
        gate.open()
        reader.stop()
    }

    /// The newest snapshot at or before `version`, plus the events up to it.
    private static func view(of game: String, at version: Int, for viewer: Viewer, avoiding distrusted: Set<Int>,
                             from store: EventStore, logger: Logger) -> (view: JSONValue?, passedOver: UnusableSnapshot?) {
        var passedOver: UnusableSnapshot?
        do {
            var state = GameState()
            var newest = Int64(version)
            var found = try store.latestSnapshot(game: game, atOrBefore: newest)
            while let snapshot = found, distrusted.contains(Int(snapshot.version)) {
                newest = snapshot.version - 1
                found = try store.latestSnapshot(game: game, atOrBefore: newest)
            }
            if let snapshot = found {
                do {
                    state = try Codec.usableState(snapshot)
                } catch {
                    passedOver = error
                }
            }
            for stored in try store.events(game: game, after: Int64(state.version), through: Int64(version)) {
                try Codec.applyNext(stored, to: &state)
            }
            guard state.version == version else { return (nil, passedOver) }
            return (Views.view(state, for: viewer), passedOver)
        } catch {
            // A log that does not replay is damage to look at; a read that failed may pass.
            let level: Logger.Level = error is ReplayProblem ? .error : .warning
            logger.log(level: level, "cannot rebuild a past view", metadata: ["game": "\(game)", "version": "\(version)", "error": "\(error)"])
            return (nil, passedOver)
        }
    }
}

/// Holds rebuilds at their start while closed, so a test can show that the loop goes on
/// meanwhile. Open unless a test closes it.
final class RebuildGate: @unchecked Sendable {
    private let condition = MonotonicCondition()
    // Guarded by `condition`.
    private var isClosed = false
    private var held = 0

    func close() {
        condition.lock()
        isClosed = true
        condition.unlock()
    }

    func open() {
        condition.lock()
        isClosed = false
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until a rebuild is held here; false at the deadline.
    func waitForHeldRebuild(timeout: TimeInterval) -> Bool {
        let deadline = monotonicDeadline(after: timeout)
        condition.lock()
        defer { condition.unlock() }
        while held == 0 {
            if !condition.wait(untilMonotonic: deadline) { return held > 0 }
        }
        return true
    }

    /// Rebuilder thread.
    func passThrough() {
        condition.lock()
        defer { condition.unlock() }
        guard isClosed else { return }
        held += 1
        condition.broadcast()
        while isClosed { condition.wait() }
        held -= 1
    }
}
