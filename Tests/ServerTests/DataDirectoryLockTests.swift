import Foundation
import Testing

/// Two servers on one log would each decide commands against their own copy of the game.
@Suite struct DataDirectoryLockTests {
    @Test func aSecondServerOnTheSameDataDirectoryIsRefusedUntilTheFirstStops() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let first = try ServerHarness(dataDirectory: dir.path)
        let admin = try first.connect()
        try admin.signInAsAdmin()
        let before = try admin.currentVersion()

        do {
            let second = try ServerHarness(dataDirectory: dir.path)
            try? second.stop()
            Issue.record("a second server started on a data directory in use")
        } catch {
            #expect("\(error)".contains("Another bq serve (process \(getpid())) is using the data directory"), "\(error)")
        }
        // The refused one changed nothing and left the first one serving.
        try admin.ok("adjust_points", ["delta": 1, "reason": "still serving"])
        #expect(try admin.currentVersion() == before + 1)

        try first.stop()
        let next = try ServerHarness(dataDirectory: dir.path)
        let again = try next.connect()
        try again.signInAsAdmin()
        #expect(try again.currentVersion() == before + 1)
        try next.stop()
    }

    /// `serve.lock` can look like litter left behind; removing it by hand must not let a second
    /// server in.
    @Test func aSecondServerIsRefusedEvenWhenTheLockFileWasDeleted() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let first = try ServerHarness(dataDirectory: dir.path)
        try FileManager.default.removeItem(atPath: dir.path + "/serve.lock")
        do {
            let second = try ServerHarness(dataDirectory: dir.path)
            try? second.stop()
            Issue.record("a second server started after serve.lock was deleted")
        } catch {
            #expect("\(error)".contains("Another bq serve (whose serve.lock was deleted) is using the data directory"), "\(error)")
        }
        try first.stop()
        let next = try ServerHarness(dataDirectory: dir.path)
        try next.stop()
    }

    @Test func aKilledServerLeavesNoLockBehind() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let killed = try BQProcess(dataDirectory: dir.path)
        killed.signal(SIGKILL)
        #expect(killed.waitForExit() != nil)
        let next = try ServerHarness(dataDirectory: dir.path)
        let admin = try next.connect()
        try admin.signInAsAdmin()
        #expect(try admin.currentVersion() > 0, "the killed server's seeding is there")
        try next.stop()
    }

    /// What a failed start closes besides (the loop's handles, its signal watchers) cannot be
    /// seen from here while other tests' servers run in this process; this checks what can.
    @Test func aStartThatFailsOnATakenPortNamesItAndLeavesTheDataDirectoryUsable() throws {
        let first = try TempDirectory()
        let second = try TempDirectory()
        defer { first.remove(); second.remove() }
        let running = try ServerHarness(dataDirectory: first.path)
        defer { try? running.stop() }
        do {
            let clash = try ServerHarness(dataDirectory: second.path) { $0.port = running.port }
            try? clash.stop()
            Issue.record("a second server listened on a port in use")
        } catch {
            #expect("\(error)".contains("\(running.port)"), "the error names the port: \(error)")
        }
        let next = try ServerHarness(dataDirectory: second.path)
        let admin = try next.connect()
        try admin.signInAsAdmin()
        #expect(try admin.currentVersion() > 0)
        try next.stop()
    }
}
