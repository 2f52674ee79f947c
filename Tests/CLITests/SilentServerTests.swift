import Foundation
import JSON
import Testing

/// A server that goes silent. After the sign-in, the silence is "no reply in time" (exit 75, as
/// docs/playing.md's table says); at the sign-in, there is no server to talk to (2); neither is a
/// refusal (1).
@Suite struct SilentServerTests {
    @Test func aSubscribeThatGetsNoReplyIsExitSeventyFive() throws {
        let fake = FakeServer() { request in
            let id = request["id"] ?? .null
            switch request["op"]?.stringValue {
            case "claim", "auth":
                return [["id": id, "ok": true, "version": 1, "result": ["token": "t", "character": "mia", "role": "birthday"]]]
            case "subscribe":
                return []
            default:
                return [["id": id, "ok": true, "version": 1, "result": [:]]]
            }
        }
        defer { fake.stop() }
        let result = try BQProcess.run(["play", "--port", String(fake.port), "--timeout", "2", "--character", "mia", "whoami"],
                                       home: try makeTemporaryDirectory())
        #expect(result.status == 75, "\(result.err)")
        #expect(result.err.contains("no reply to subscribe in time"), "\(result.err)")
    }

    /// Something that takes the connection and then says nothing (a server stopped with
    /// Ctrl-Z, say) is told apart from nothing listening at all.
    @Test func aServerThatTakesTheConnectionButDoesNotAnswerIsSaidToBeSo() throws {
        let fake = FakeServer(answersPing: { _, _ in false }) { _ in [] }
        defer { fake.stop() }
        let result = try BQProcess.run(["admin", "status", "--port", String(fake.port), "--key", "k", "--timeout", "1"])
        #expect(result.status == 2, "\(result.err)")
        #expect(result.err.contains("took the connection but did not answer in time"), "\(result.err)")
        #expect(!result.err.contains("timed out"), "\(result.err)")
        #expect(!result.err.contains("Is bq serve running"), "something is running there: \(result.err)")
    }

    /// `bq admin` whose sign-in gets no answer has no server to talk to (2), as `bq play` says;
    /// 1 is for a refusal.
    @Test func anAdminSignInThatGetsNoReplyIsExitTwo() throws {
        let fake = FakeServer() { _ in [] }
        defer { fake.stop() }
        let result = try BQProcess.run(["admin", "set-day", "3", "--port", String(fake.port), "--key", "k", "--timeout", "2"])
        #expect(result.status == 2, "\(result.err)")
        #expect(result.err.contains("no reply to admin in time"), "\(result.err)")
    }

    /// Signed in, `bq admin status` whose read gets no reply is "no reply in time" (75), as
    /// `bq play`'s subscribe is, not a refusal (1).
    @Test func anAdminReadThatGetsNoReplyIsExitSeventyFive() throws {
        let fake = FakeServer() { request in
            request["op"] == "admin" ? [["id": request["id"] ?? .null, "ok": true, "version": 1, "result": ["role": "admin"]]] : []
        }
        defer { fake.stop() }
        let result = try BQProcess.run(["admin", "status", "--port", String(fake.port), "--key", "k", "--timeout", "2"])
        #expect(result.status == 75, "\(result.err)")
        #expect(result.err.contains("in time"), "\(result.err)")
    }
}
