import Foundation
import JSON
import Testing

/// A server that signs a one-shot in and then says nothing more: the silence is "no reply in
/// time" (exit 75, as the README's table says), not a refusal (exit 1).
@Suite struct SilentServerTests {
    @Test func aSubscribeThatGetsNoReplyIsExitSeventyFive() throws {
        let hello: JSONValue = ["push": "hello", "protocol": 1, "server": "fake", "game": "main", "version": 1]
        let fake = FakeServer(hello: hello) { request in
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
}
