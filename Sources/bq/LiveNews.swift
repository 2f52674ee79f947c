import Foundation
import JSON

/// The news a person is told as the game changes: each view newer than the one last told,
/// compared with it, less what their own running command changes (its reply tells that).
/// Views arrive on the client's reader thread, and the main thread goes live and runs
/// commands, so the state is guarded by a lock.
final class LiveNews: @unchecked Sendable {
    private let style: Style
    private let lock = NSLock()
    // Guarded by `lock`.
    private var live = false
    private var version = 0
    private var view: JSONValue?
    /// What heads the next lines told: they catch up (after a reconnect, or since the person
    /// last played here) rather than happen now.
    private var catchingUpHeader: String?
    /// What the command being run changes, from before its request is sent until it ends.
    private var own = OwnChange()

    /// Called with each view taken as told, on the thread that offered it (outside the lock).
    private let onTold: @Sendable (Int, JSONValue) -> Void

    init(style: Style, onTold: @escaping @Sendable (Int, JSONValue) -> Void = { _, _ in }) {
        self.style = style
        self.onTold = onTold
    }

    var isLive: Bool { lock.withLock { live } }

    /// The game shown to the person is `view` at `version`: from here on, newer views are news.
    func goLive(version: Int, view: JSONValue?) {
        lock.withLock {
            live = true
            self.version = version
            self.view = view
        }
        if let view { onTold(version, view) }
    }

    /// Live from the view this person was last told, in an earlier run: the next update tells
    /// what changed since (the caller offers the current view next).
    func goLive(sinceLastSeen version: Int, view: JSONValue) {
        lock.withLock {
            live = true
            self.version = version
            self.view = view
            catchingUpHeader = "Since you were last here:"
        }
    }

    /// The next update is the one that catches up with what happened while disconnected.
    func reconnected() {
        lock.withLock { catchingUpHeader = live ? "While you were away:" : nil }
    }

    func willChange(_ change: OwnChange) {
        lock.withLock { own = change }
    }

    func commandEnded() {
        lock.withLock { own = OwnChange() }
    }

    /// Prints what changed since the view last told; false when nothing did (a change this
    /// person cannot see, a view older than the one told, or not live yet). A fresh snapshot
    /// (after a gap, or after the server held patches back) is told as the changes since then.
    func tell(version: Int, view: JSONValue, on terminal: Terminal) -> Bool {
        guard let lines = lines(upTo: version, view: view) else { return false }
        // Off the line a person is typing at, unless that line is moved out of the way anyway.
        if Terminal.stdinIsTerminal && !Terminal.editsLines { terminal.line() }
        for line in lines { terminal.line(line) }
        return true
    }

    private func lines(upTo newVersion: Int, view newView: JSONValue) -> [String]? {
        guard let shift = advance(to: newVersion, view: newView), let before = shift.view else { return nil }
        let now = PlayView(json: newView, style: style), then = PlayView(json: before, style: style)
        // More than one change the timeline does not account for: an adjustment told may be a sum.
        let unexplained = newVersion - shift.version - (now.timeline.count - then.timeline.count)
        var lines = now.changes(from: then, severalCommits: unexplained > 1, own: shift.own)
        onTold(newVersion, newView)
        if lines.isEmpty { return nil }
        // Caught up: several changes told at once, some as their sum.
        if let header = shift.header { lines.insert(style.dim(header), at: 0) }
        return lines
    }

    /// Takes `newView` as the one told and returns the view it replaces (with its version, the
    /// header when this update catches up, and the running command's change), when live and
    /// newer: both threads offer views, and neither may go back in time.
    private func advance(to newVersion: Int, view newView: JSONValue)
        -> (view: JSONValue?, version: Int, header: String?, own: OwnChange)? {
        lock.withLock {
            // The first update after a reconnect catches up, even when it brings nothing new.
            let header = catchingUpHeader
            catchingUpHeader = nil
            guard live, newVersion > version || view == nil else { return nil }
            let old = (view: view, version: version, header: header, own: own)
            version = newVersion
            view = newView
            return old
        }
    }
}
