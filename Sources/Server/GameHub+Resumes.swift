import Domain
import JSON
import Protocol

/// A `subscribe` from a past version, held until its view at `since` has been rebuilt.
struct PendingResume {
    let connection: ClientConnection
    let viewer: Viewer
    let since: Int
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
    /// view at `since` is rebuilt.
    func handleSubscribe(from connection: ClientConnection, since: Int?, id: RequestID, target: ReplyTarget) {
        guard let since, since >= 1, since < durable.version else {
            return answer(connection, since: since, past: nil, id: id, target: target)
        }
        connection.unsubscribe()
        let resume = PendingResume(connection: connection, viewer: connection.identity!.viewer, since: since, id: id, target: target)
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
        answer(resume.connection, since: resume.since, past: finished.view, id: resume.id, target: resume.target)
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
        guard let ticket = server.rebuilder.rebuild(game: name, at: resume.since, for: resume.viewer,
                                                           avoiding: distrustedSnapshots, requester: requester) else {
            // The rebuilder has stopped (shutdown): a snapshot needs no past.
            return answer(resume.connection, since: resume.since, past: nil, id: resume.id, target: resume.target)
        }
        var queued = resume
        queued.ticket = ticket
        rebuilding[requester] = queued
    }

    private func answer(_ connection: ClientConnection, since: Int?, past: JSONValue?, id: RequestID, target: ReplyTarget) {
        let start = connection.subscribe(since: since, past: past)
        target.ok(id, version: durable.version, result: .object(["mode": .string(start.mode)]), then: start.push)
    }
}
