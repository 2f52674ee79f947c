import Foundation
import JSON
import Testing
@testable import Server

/// The server remembers a key for `idempotency_window` events; used again after that, the key is
/// a new request and commits again. `bq verify` must not call that a problem, and must still
/// call a key committed twice inside the window one.
@Suite struct VerifyWindowTests {
    @Test func aKeyUsedAgainAfterTheWindowIsNotAProblemButInsideItIs() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let window = 1_000
        let server = try ServerHarness(dataDirectory: dir.path) { $0.idempotencyWindow = window }
        defer { try? server.stop() }
        let admin = try server.connect()
        try admin.signInAsAdmin()
        let keyed: [String: JSONValue] = ["delta": 5, "reason": "reused", "idem": "k"]
        let first = try admin.ok("adjust_points", keyed)
        try admin.sendAdjustments(window, firstID: 10_000, reason: "filler")
        for _ in 0..<window { _ = try admin.nextReply() }
        let again = try admin.ok("adjust_points", keyed)
        #expect(again["replayed"] == nil, "forgotten after the window: a new request")
        #expect(again.versionNumber - first.versionNumber > window)
        try server.stop()

        let path = dir.path + "/birthdayquest.sqlite"
        #expect(try LogVerifier.verify(path: path, idempotencyWindow: window).problems == [])
        let stricter = try LogVerifier.verify(path: path, idempotencyWindow: 10 * window)
        #expect(stricter.problems.count == 1)
        #expect(stricter.problems.first?.contains("idempotency key \"k\" of admin appears twice") == true, "\(stricter.problems)")
    }
}
