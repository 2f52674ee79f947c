import Domain
import JSON
import Protocol

/// A `subscribe` from a past version, held until its view at `since` has been rebuilt.
struct PendingResume {
    let connection: ClientConnection
    let viewer: Viewer
    let since: Int
    /// The client's digest of its view at `since`: the rebuilt view must match it to be patched.
    let sinceDigest: String?
    let id: RequestID
    let target: ReplyTarget
    /// The rebuilder's ticket, once its rebuild is queued.
    var ticket = 0
}

/// `subscribe` from a past version needs that version's view, rebuilt from the log on the
/// rebuilder's thread (`ViewRebuilder`) while the loop goes on. Its reply slot is held
/// meanwhile, and its connection gets no live patch: the patch the reply brings, from `since`,
/// replaces them. Each viewer of the game, over all its connections, gets `resumes_per_second`
/// rebuilds; one past that waits, in arrival order, until the budget refills. None is refused:
/// every version in the log must stay resumable.
extension GameHub {
    /// Answers a `subscribe` request of `connection` (signed in) from `since`: now, or once its
    /// view at `since` is rebuilt. With `sinceDigest`, the view at `since` must be the one the
    /// client holds: when it is not, the game it saw is not this game's past (a log restored
    /// from an older backup, then played on), and a snapshot says so (`diverged`).
    func handleSubscribe(from connection: ClientConnection, since: Int?, sinceDigest: String?, id: RequestID, target: ReplyTarget) {
        guard let since, since >= 1 else { return answer(connection, since: nil, id: id, target: target) }
        // A version this game never reached: the client's game went further than this one.
        guard since <= durable.version else { return answer(connection, since: nil, diverged: true, id: id, target: target) }
        if since == durable.version {
            // The usual reconnect: the view at `since` is the one cached, no rebuild needed.
            guard let sinceDigest else { return answer(connection, since: since, id: id, target: target) }
            let differs = currentDigest(for: connection.identity!.viewer) != sinceDigest
            return answer(connection, since: differs ? nil : since, diverged: differs, id: id, target: target)
        }
        connection.unsubscribe()
        let resume = PendingResume(connection: connection, viewer: connection.identity!.viewer, since: since,
                                   sinceDigest: sinceDigest, id: id, target: target)
        if !deferredResumes.contains(where: { $0.viewer == resume.viewer }), takeResumeToken(for: resume.viewer) {
            return startRebuild(resume)
        }
        deferredResumes.append(resume)
        server.resumesWaiting()
    }

    /// Starts the rebuilds of the waiting resumes whose viewers have budget again, each viewer's
    /// in arrival order.
    func startDeferredRebuilds() {
        var blocked = Set<Viewer>()
        var index = 0
        while index < deferredResumes.count {
            let resume = deferredResumes[index]
            if resume.connection.isClosing {
                deferredResumes.remove(at: index)
            } else if blocked.contains(resume.viewer) || !takeResumeToken(for: resume.viewer) {
                blocked.insert(resume.viewer)
                index += 1
            } else {
                deferredResumes.remove(at: index)
                startRebuild(resume)
            }
        }
    }

    /// The view a resume asked for, rebuilt (nil when it could not be: the reply then brings a
    /// snapshot). The patch goes from it to the view now, commits made meanwhile included.
    func rebuilt(_ finished: ViewRebuilder.Finished) {
        // The ticket tells this connection's resume from an older one's, or from another
        // connection's that once had the same identifier.
        guard let resume = rebuilding[finished.requester], resume.ticket == finished.ticket else { return }
        rebuilding[finished.requester] = nil
        guard !resume.connection.isClosing else { return }
        // A view that could not be rebuilt says nothing either way: a plain snapshot.
        let diverged = resume.sinceDigest != nil && finished.view != nil && finished.digest != resume.sinceDigest
        answer(resume.connection, since: diverged ? nil : resume.since, past: diverged ? nil : finished.view,
               diverged: diverged, id: resume.id, target: resume.target)
    }

    /// At shutdown: every held resume gets `error` (nothing else will answer it).
    func refuseHeldResumes(_ error: ProtocolError) {
        let held = deferredResumes + rebuilding.values
        deferredResumes = []
        rebuilding = [:]
        for resume in held { resume.target.error(resume.id, error) }
    }

    private func startRebuild(_ resume: PendingResume) {
        let requester = ObjectIdentifier(resume.connection)
        guard let ticket = server.rebuilder.rebuild(game: name, at: resume.since, for: resume.viewer, avoiding: distrustedSnapshots,
                                                    digested: resume.sinceDigest != nil, requester: requester) else {
            // The rebuilder has stopped (shutdown): a snapshot needs no past.
            return answer(resume.connection, since: nil, id: resume.id, target: resume.target)
        }
        var queued = resume
        queued.ticket = ticket
        rebuilding[requester] = queued
    }

    /// `since` and `past`: what the first push goes from (a snapshot without `since`; an empty
    /// patch at the current version without `past`).
    private func answer(_ connection: ClientConnection, since: Int?, past: JSONValue? = nil, diverged: Bool = false,
                        id: RequestID, target: ReplyTarget) {
        let start = connection.subscribe(since: since, past: past)
        var result: [String: JSONValue] = ["mode": .string(start.mode)]
        if diverged { result["diverged"] = .bool(true) }
        target.ok(id, version: durable.version, result: .object(result), then: start.push)
    }
}
