import Client
import Foundation
import JSON

/// The news a person is told as the game changes: each view newer than the one last told,
/// compared with it. While a change of their own is on its way (a command waiting for its
/// reply, or a change kept to be sent again), news is held: the patch with their change comes
/// before the reply, and the reply tells it. Once every such change has its answer, the held
/// views are told, less what those changes committed, and only up to the version each
/// committed at: someone else's change of the same kind, or one after it, is still news.
/// Views that arrive together (a burst: a phone waking up, a reconnect catching up) are told
/// once, from the newest, as what changed in all (`offer`, then `caughtUp`).
/// Views arrive on the client's reader thread; the main thread goes live and runs commands.
final class LiveNews: @unchecked Sendable {
    private let style: Style
    private let terminal: Terminal
    /// Called with each view taken as told, on the thread that offered it (outside the lock);
    /// the flag is true for a view older than the one told before (the game went back).
    private let onTold: @Sendable (Int, JSONValue, Bool) -> Void
    /// What is said about the connection as it comes and goes.
    private let notices = ConnectionNotices()
    private let lock = NSLock()
    // Guarded by `lock`.
    private var live = false
    private var version = 0
    private var view: JSONValue?
    /// What heads the next lines told: they catch up (after a reconnect, or since the person
    /// last played here) rather than happen now.
    private var catchingUpHeader: String?
    /// The person's own changes without an answer yet, by a key of the caller's.
    private var outstanding: [String: OwnChange] = [:]
    /// Own changes answered while others were outstanding, with the version each committed at.
    private var committed: [(version: Int, change: OwnChange)] = []
    /// Views that came while own changes were outstanding, oldest first.
    private var held: [(version: Int, view: JSONValue)] = []
    /// The newest view offered and not yet told, with no own change outstanding: told at
    /// `caughtUp`, or held with the next own change (it is older than that change).
    private var offered: (version: Int, view: JSONValue)?
    /// Counts the times the game went back: views taken to be told before are of the old game.
    private var era = 0
    /// The server said the next view is of another game than the one told (`diverged`).
    private var nextReplaces = false
    /// A thread is telling what was held: newer views wait behind it, or they would be told
    /// first and the held ones (with the person's own change left out) not at all.
    private var flushing = false

    init(style: Style, terminal: Terminal, onTold: @escaping @Sendable (Int, JSONValue, Bool) -> Void = { _, _, _ in }) {
        self.style = style
        self.terminal = terminal
        self.onTold = onTold
    }

    var isLive: Bool { lock.withLock { live } }

    /// The game shown to the person is `view` at `version`: from here on, newer views are news.
    func goLive(version: Int, view: JSONValue?) {
        lock.withLock {
            live = true
            self.version = version
            self.view = view
            offered = nil
        }
        if let view { onTold(version, view, false) }
    }

    /// Live from the view this person was last told, in an earlier run: the next update tells
    /// what changed since (the caller offers the current view next).
    func goLive(sinceLastSeen version: Int, view: JSONValue) {
        lock.withLock {
            live = true
            self.version = version
            self.view = view
            offered = nil
            catchingUpHeader = "Since you were last here:"
        }
    }

    /// The next update is the one that catches up with what happened while disconnected. Its
    /// header names the connection, not the person: they may have watched all along (a link
    /// that failed one way, a server restarted under them).
    func reconnected() {
        lock.withLock { catchingUpHeader = live ? "While the connection was down:" : nil }
    }

    /// Takes a client event that is the news's to tell: a view, `diverged`, the end of a burst,
    /// or the connection's comings and goings (told after the views that came before them).
    /// Nil for any other event, which the caller handles; else whether something was printed.
    func take(_ event: ClientEvent) -> Bool? {
        switch event {
        case .patch(_, let version, _, _, let view), .snapshot(let version, let view):
            return offer(version: version, view: view)
        case .diverged:
            diverged()
            return false
        case .caughtUp:
            return caughtUp()
        case .bye, .disconnected, .reconnectRefused, .reconnected:
            let told = caughtUp()
            if case .reconnected = event { reconnected() }
            if case .disconnected = event { connectionLost() }
            guard let line = notices.line(for: event, style: style) else { return told }
            terminal.line(line)
            return true
        default:
            return nil
        }
    }

    /// The server's game is not the one told (a log restored from a backup and played on past
    /// the version told): the next view replaces the one told, as when the version goes back.
    func diverged() {
        lock.withLock { if live { nextReplaces = true } }
    }

    /// The connection was lost: a view the server said `diverged` about and that did not come
    /// before the loss will be said about again by the next resubscribe, if it still is.
    func connectionLost() {
        lock.withLock { nextReplaces = false }
    }

    /// A change of the person's own is about to be sent, under `key`: news is held until it
    /// is answered (`settled`).
    func willChange(_ change: OwnChange, key: String) {
        lock.withLock {
            outstanding[key] = change
            // Older than the change: told first when its answer comes, like any view held.
            if let offered { hold(offered) }
            offered = nil
        }
    }

    /// The change sent under `key` is answered: committed at `version`, or nothing (refused,
    /// cancelled, a failure). Once no change is outstanding, what was held is told; true when
    /// something was printed. A key never sent (a command refused before sending) only tells.
    @discardableResult
    func settled(_ key: String, committedAt version: Int?) -> Bool {
        let flushes: Bool = lock.withLock {
            if let change = outstanding.removeValue(forKey: key), let version { committed.append((version, change)) }
            guard outstanding.isEmpty, !flushing else { return false }
            flushing = true
            return true
        }
        guard flushes else { return false }
        var printed = false
        while true {
            let batch: (views: [(version: Int, view: JSONValue)], owns: [(version: Int, change: OwnChange)], era: Int)? = lock.withLock {
                // A change sent meanwhile holds the rest again; else, done once nothing is left.
                guard outstanding.isEmpty, !held.isEmpty else {
                    // Not live (a one-shot, a script), nothing was held: nor is anything kept.
                    if outstanding.isEmpty { committed = [] }
                    flushing = false
                    return nil
                }
                defer {
                    held = []
                    committed = []
                }
                return (held, committed, era)
            }
            guard let batch else { return printed }
            // The replies told the balance after the person's own changes: news from before
            // them that ends with its own balance would leave an older one on screen.
            let newestOwn = batch.owns.map(\.version).max() ?? 0
            var toldOlderBalance = false
            var lastLine: String?
            for (heldVersion, heldView) in batch.views {
                // The game went back meanwhile: these views are of the game it left.
                guard lock.withLock({ era }) == batch.era else { break }
                let toldBefore = lock.withLock { self.version }
                // The person's own changes that this view is the first to hold.
                let own = OwnChange(merging: batch.owns.filter { $0.version > toldBefore && $0.version <= heldVersion }.map(\.change))
                guard var lines = lines(upTo: heldVersion, view: heldView, own: own) else { continue }
                if heldVersion < newestOwn {
                    let balance = PlayView(json: heldView, style: style).pointsLine()
                    if lines.contains(balance) {
                        lines.removeAll { $0 == balance }
                        toldOlderBalance = true
                    }
                }
                if !lines.isEmpty {
                    print(lines)
                    lastLine = lines.last
                }
                printed = true
            }
            // The newest view's balance, unless it was just told, or that view is itself older
            // than the person's change (its patches held back): the reply's balance stands then.
            if toldOlderBalance, let newest = batch.views.last, newest.version >= newestOwn, lock.withLock({ era }) == batch.era {
                let balance = PlayView(json: newest.view, style: style).pointsLine()
                if lastLine != balance { print([balance]) }
            }
        }
    }

    /// A view from the reader, told at the next `caughtUp` unless a newer one comes first (or
    /// held, like any view, while an own change is outstanding). True when something was
    /// printed (that the game went back, or is another).
    @discardableResult
    func offer(version newVersion: Int, view newView: JSONValue) -> Bool {
        let replaced: Replacement? = lock.withLock {
            guard live else { return nil }
            // Views only move forward, but for a snapshot of a game that went back: a log
            // restored from a backup, or another server at the address (found by the version,
            // or by the server's digest check when the game has since passed the version told).
            // Told as the difference, it would run backwards, and the news after it would be
            // measured from the old game (changes made again under versions already told went
            // untold, and the gap between the two games was told as an organizer's adjustment).
            let newest = max(version, offered?.version ?? 0, held.last?.version ?? 0)
            if newVersion < newest || nextReplaces {
                let replacement: Replacement = newVersion < newest ? .wentBack : .differs
                nextReplaces = false
                version = newVersion
                view = newView
                offered = nil
                held = []
                committed = []
                catchingUpHeader = nil
                era += 1
                return replacement
            }
            // The first view after a reconnect catches up; one with nothing new (the server's
            // first patch was empty) ends the catching up, or its header would go to later news.
            if newVersion == newest { catchingUpHeader = nil }
            if !outstanding.isEmpty || flushing {
                hold((newVersion, newView))
            } else if newVersion > (offered?.version ?? version) {
                offered = (newVersion, newView)
            }
            return nil
        }
        guard let replaced else { return false }
        onTold(newVersion, newView, true)
        switch replaced {
        case .wentBack:
            print([style.yellow("The game on the server went back to an earlier point (restored from a backup?). "
                                + "Type home to see it as it is now.")])
        case .differs:
            // Also what a server of another version says when its views have another shape:
            // nothing is known to have gone back.
            print([style.yellow("The game on the server is not the one shown until now (restored from a backup, "
                                + "or a new version of the server?). Type home to see it as it is now.")])
        }
        return true
    }

    /// Why a view replaced the one told rather than being told as what changed.
    private enum Replacement {
        /// It is older than the one told.
        case wentBack
        /// The server said it is not of the game told (`diverged`).
        case differs
    }

    /// Every view that had arrived is offered: tells the newest, as what changed since the view
    /// last told. False when nothing was printed.
    func caughtUp() -> Bool {
        let newest: (version: Int, view: JSONValue)? = lock.withLock {
            defer { offered = nil }
            return offered
        }
        guard let newest else { return false }
        return tell(version: newest.version, view: newest.view)
    }

    /// Keeps `item` to be told once no own change is outstanding, unless it is no newer than
    /// what is held or told already. Holding `lock`. At most `mostViewsHeld`: past them the
    /// oldest goes, and the next is told as everything since the view told before it (as a
    /// burst is), so that a change left unanswered while the game moves fast (or a faulty server's
    /// flood of views) cannot hold ever more memory.
    private func hold(_ item: (version: Int, view: JSONValue)) {
        guard item.version > (held.last?.version ?? version) else { return }
        held.append(item)
        if held.count > Self.mostViewsHeld { held.removeFirst(held.count - Self.mostViewsHeld) }
    }

    static let mostViewsHeld = 64

    /// Prints what changed since the view last told; false when nothing was printed (a change
    /// this person cannot see, a view older than the one told, news held, or not live yet). A
    /// fresh snapshot (after a gap, or after the server held patches back) is told as the
    /// changes since then.
    func tell(version newVersion: Int, view newView: JSONValue) -> Bool {
        let holding = lock.withLock {
            guard live, !outstanding.isEmpty || flushing else { return false }
            hold((newVersion, newView))
            return true
        }
        if holding { return false }
        guard let lines = lines(upTo: newVersion, view: newView, own: OwnChange()) else { return false }
        print(lines)
        return true
    }

    private func print(_ lines: [String]) {
        // Off the line a person is typing at, unless that line is moved out of the way anyway.
        if Terminal.stdinIsTerminal && !Terminal.editsLines && Terminal.outputIsTerminal { terminal.line() }
        terminal.lines(lines)
    }

    private func lines(upTo newVersion: Int, view newView: JSONValue, own: OwnChange) -> [String]? {
        guard let shift = advance(to: newVersion, view: newView), let before = shift.view else { return nil }
        let now = PlayView(json: newView, style: style), then = PlayView(json: before, style: style)
        // More than one change the timeline does not account for: an adjustment told may be a sum.
        // Wrapping: a faulty server's versions and timelines may be anything.
        let unexplained = newVersion &- shift.version &- (now.timeline.count &- then.timeline.count) &- own.commitsOutsideTimeline
        var lines = now.changes(from: then, severalCommits: unexplained > 1, own: own)
        onTold(newVersion, newView, false)
        if lines.isEmpty { return nil }
        // Caught up: several changes told at once, some as their sum.
        if let header = shift.header { lines.insert(style.dim(header), at: 0) }
        return lines
    }

    /// Takes `newView` as the one told and returns the view it replaces (with its version and
    /// the header when this update catches up), when live and newer: both threads offer views,
    /// and neither may go back in time.
    private func advance(to newVersion: Int, view newView: JSONValue) -> (view: JSONValue?, version: Int, header: String?)? {
        lock.withLock {
            // The first update after a reconnect catches up, even when it brings nothing new.
            let header = catchingUpHeader
            catchingUpHeader = nil
            guard live, newVersion > version || view == nil else { return nil }
            let old = (view: view, version: version, header: header)
            version = newVersion
            view = newView
            return old
        }
    }
}
