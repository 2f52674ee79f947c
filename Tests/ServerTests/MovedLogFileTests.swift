import Foundation
import JSON
import Testing

/// Once the log's files are moved under the server, no change is taken until a restart: the
/// player is told that, not to try again.
@Suite struct MovedLogFileTests {
    @Test func aChangeRefusedAfterTheWALMovedSaysThatOnlyARestartHelps() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        defer { try? server.stop() }
        let admin = try server.connect()
        try admin.signInAsAdmin()
        try admin.ok("adjust_points", ["delta": 1, "reason": "before"])
        try FileManager.default.moveItem(atPath: dir.path + "/birthdayquest.sqlite-wal", toPath: dir.path + "/aside-wal")
        // The server looks at its files at most ten times a second: changes go on until it has.
        var refusal: JSONValue?
        for attempt in 0..<10_000 where refusal == nil {
            let answer = try admin.call("adjust_points", ["delta": 1, "reason": .string("after \(attempt)")])
            if answer["ok"] == .bool(false) { refusal = answer }
        }
        let error = try #require(refusal?["error"])
        #expect(error["code"] == "unavailable")
        #expect(error["message"]?.stringValue?.contains("the server takes no more changes until the organizer restarts it") == true,
                "\(error.serialized())")
        try FileManager.default.moveItem(atPath: dir.path + "/aside-wal", toPath: dir.path + "/birthdayquest.sqlite-wal")
    }
}
