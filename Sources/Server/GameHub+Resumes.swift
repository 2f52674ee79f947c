import Domain
import JSON
import Protocol

/// A `subscribe` from a past version waiting for its viewer's budget.
struct DeferredResume {
    let connection: ClientConnection
    let viewer: Viewer
    let since: Int
    let id: RequestID
    let target: ReplyTarget
}

/// `subscribe` from a past version rebuilds that version's view from the log on the loop
/// thread, which every player waits on. Each viewer of the game, over all its connections, gets
/// `resumes_per_second` of them; one past that waits, its reply slot held, until the budget
/// refills. It is never refused: every version in the log must stay resumable.
extension GameHub {
    /// Answers a `subscribe` request of `connection` (signed in) from `since`: now, or once its
    /// viewer's budget allows. (`subscribe(_:viewer:since:)` is what each answer does.)
    func handleSubscribe(from connection: ClientConnection, since: Int?, id: RequestID, target: ReplyTarget) {
        let viewer = connection.identity!.viewer
        guard let since, since >= 1, since < durable.version else {
            return answer(connection, since: since, id: id, target: target)
        }
        if !deferredResumes.contains(where: { $0.viewer == viewer }), takeResumeToken(for: viewer) {
            return answer(connection, since: since, id: id, target: target)
        }
        // No live patches meanwhile: the reply brings one from `since`, which replaces them.
        connection.unsubscribe()
        deferredResumes.append(DeferredResume(connection: connection, viewer: viewer, since: since, id: id, target: target))
        server.resumesWaiting()
    }

    /// Answers the waiting resumes whose viewers have budget again, each viewer's in arrival
    /// order. An answer lets its connection start its next lines, which may be resumes that
    /// wait in turn: they are appended, behind those still waiting, and `subscribe` sees those.
    func answerDeferredResumes() {
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
                answer(resume.connection, since: resume.since, id: resume.id, target: resume.target)
            }
        }
    }

    /// At shutdown: every waiting resume gets `error` (nothing else will answer it).
    func refuseDeferredResumes(_ error: ProtocolError) {
        let waiting = deferredResumes
        deferredResumes = []
        for resume in waiting { resume.target.error(resume.id, error) }
    }

    private func answer(_ connection: ClientConnection, since: Int?, id: RequestID, target: ReplyTarget) {
        let start = connection.subscribe(since: since)
        target.ok(id, version: durable.version, result: .object(["mode": .string(start.mode)]), then: start.push)
    }
}
