import Foundation
import JSON
import Testing

/// `bq verify`, `bq log` and `bq backup` on a log in a directory the reader may not write (a
/// backup on read-only media, the server's directory read by another user), where SQLite cannot
/// make the `-shm` index it reads a WAL-mode file through.
@Suite(.enabled(if: Unprivileged.available, "needs a user for whom file modes count"))
struct ReadOnlyLogTests {
    @Test func aLogWithNoWALIsReadInADirectoryTheReaderMayNotWrite() throws {
        let dir = try TempDirectory()
        // The characters a URI gives a meaning to, as the immutable open spells the path as one.
        let data = dir.path + "/data 100%25 #1?x=y", out = dir.path + "/out"
        defer {
            chmod(data, 0o755)
            dir.remove()
        }
        do {
            let server = try ServerHarness(dataDirectory: data)
            let admin = try server.connect()
            try admin.signInAsAdmin()
            try admin.ok("adjust_points", ["delta": 7, "reason": "read later"])
            try server.stop()
        }
        let log = data + "/birthdayquest.sqlite"
        try #require(!FileManager.default.fileExists(atPath: log + "-wal"), "a clean stop leaves no WAL")
        let before = FileManager.default.contents(atPath: log)
        let filesBefore = try FileManager.default.contentsOfDirectory(atPath: data).sorted()
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
        for (path, mode) in [(dir.path, 0o755), (log, 0o644), (data, 0o555), (out, 0o777)] {
            #expect(chmod(path, mode_t(mode)) == 0)
        }

        let verify = try BQRun.run(["verify", "--data", data], workingDirectory: dir.path, unprivileged: true)
        #expect(verify.ending == .exited(0), "\(verify.stdout)\(verify.stderr)")
        #expect(verify.stdoutLines.last == "verify: ok", "\(verify.stdout)")
        let read = try BQRun.run(["log", "--data", data], workingDirectory: dir.path, unprivileged: true)
        #expect(read.ending == .exited(0), "\(read.stderr)")
        #expect(read.stdout.contains("points_adjusted"), "\(read.stdout)")
        let backup = try BQRun.run(["backup", "--data", data, out + "/copy.sqlite"], workingDirectory: dir.path, unprivileged: true)
        #expect(backup.ending == .exited(0), "\(backup.stderr)")
        #expect(backup.stdout.contains("game main: 2 events"), "\(backup.stdout)")

        #expect(FileManager.default.contents(atPath: log) == before, "the log was changed")
        let files = try FileManager.default.contentsOfDirectory(atPath: data).sorted()
        #expect(files == filesBefore, "\(files)")
    }

    /// A WAL that holds commits cannot be read without its index: refused, with what to do,
    /// rather than read without the commits it holds.
    @Test func aLogWhoseWALHoldsCommitsIsRefusedWithWhatToDo() throws {
        let dir = try TempDirectory()
        let data = dir.path + "/data", copy = dir.path + "/copy"
        defer {
            chmod(copy, 0o755)
            dir.remove()
        }
        let server = try ServerHarness(dataDirectory: data)
        let admin = try server.connect()
        try admin.signInAsAdmin()
        try admin.ok("adjust_points", ["delta": 7, "reason": "only in the WAL"])
        // The main file and its WAL as a crash would leave them, without the -shm.
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: false)
        for suffix in ["", "-wal"] {
            try FileManager.default.copyItem(atPath: data + "/birthdayquest.sqlite" + suffix,
                                             toPath: copy + "/birthdayquest.sqlite" + suffix)
            #expect(chmod(copy + "/birthdayquest.sqlite" + suffix, 0o644) == 0)
        }
        try server.stop()
        #expect(chmod(dir.path, 0o755) == 0 && chmod(copy, 0o555) == 0)

        // `verify` reports on standard output, with its own status for a log it cannot read.
        for (command, status) in [("verify", Int32(2)), ("log", 1)] {
            let run = try BQRun.run([command, "--data", copy], workingDirectory: dir.path, unprivileged: true)
            let said = run.stdout + run.stderr
            #expect(run.ending == .exited(status), "\(command): \(said)")
            #expect(said.contains("birthdayquest.sqlite is read through its -wal and -shm files, which this user can neither read nor create")
                    && said.contains("copy the whole directory somewhere you may write"), "\(command): \(said)")
        }
    }
}
