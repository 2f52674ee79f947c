import Foundation
import JSON
import Testing

/// A real full disk: a small tmpfs mounted for the test (root may mount one; elsewhere the test
/// does not run). The organizer is told what fills it and what to do, changes are refused while
/// it is full, and a clean stop that cannot copy the WAL into the main file says so, rather than
/// leaving the game in the `-wal` without a word.
@Suite(.serialized) struct FullDiskTests {
    /// A 4 MiB file system of its own, unmounted by `unmount()`.
    struct SmallDisk {
        let path: String

        static let canMount: Bool = {
            let prefix = Self.prefix
            guard getuid() == 0 else { return false }
            // A run killed mid-test left its disk mounted: taken down first, but only where the
            // process named in its path is gone. Another run of the suite on this machine may be
            // filling its own, whose path would then lead to the disk under it.
            let mounts = (try? String(contentsOfFile: "/proc/mounts", encoding: .utf8)) ?? ""
            for line in mounts.split(separator: "\n") {
                let fields = line.split(separator: " ")
                guard fields.count > 1, fields[0] == "tmpfs", let name = fields[1].split(separator: "/").last,
                      name.hasPrefix(prefix), let owner = pid_t(name.dropFirst(prefix.count).prefix { $0 != "-" }),
                      kill(owner, 0) != 0, errno == ESRCH else { continue }
                _ = run("/bin/umount", ["-l", String(fields[1])])
            }
            guard let disk = try? SmallDisk() else { return false }
            disk.unmount()
            return true
        }()

        private static let prefix = "bq-full-"

        init() throws {
            path = NSTemporaryDirectory() + Self.prefix + "\(getpid())-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            guard Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", path]) else {
                try? FileManager.default.removeItem(atPath: path)
                throw HarnessError("cannot mount a tmpfs at \(path)")
            }
        }

        /// Writes a file until the disk has no room left.
        func fill() throws {
            // Never the disk under the mount point, should the small one be gone.
            let size = (try? FileManager.default.attributesOfFileSystem(forPath: path))?[.systemSize] as? Int
            guard let size, size <= 8 << 20 else { throw HarnessError("\(path) is no longer a small tmpfs of its own") }
            let filler = path + "/filler"
            _ = FileManager.default.createFile(atPath: filler, contents: nil)
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: filler))
            defer { try? handle.close() }
            let block = Data(count: 4_096)
            while (try? handle.write(contentsOf: block)) != nil {}
        }

        func free() throws { try FileManager.default.removeItem(atPath: path + "/filler") }

        func unmount() {
            _ = Self.run("/bin/umount", ["-l", path])
            try? FileManager.default.removeItem(atPath: path)
        }

        private static func run(_ tool: String, _ arguments: [String]) -> Bool {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            guard (try? process.run()) != nil else { return false }
            process.waitUntilExit()
            return process.terminationStatus == 0
        }
    }

    @Test(.enabled(if: SmallDisk.canMount, "needs root, and a system that lets it mount a tmpfs"))
    func aFullDiskIsSaidWhereCommitsFailAndWhereTheStopCannotCopyTheWAL() throws {
        let disk = try SmallDisk()
        defer { disk.unmount() }
        let logs = try TempDirectory()
        defer { logs.remove() }
        let data = disk.path + "/data"
        let logFile = logs.path + "/serve.log"
        let bq = try BQProcess(dataDirectory: data, logFile: logFile, logLevel: "notice")
        let admin = try TestClient(port: bq.port)
        try admin.signInAsAdmin()
        var acknowledged: [String] = []
        for n in 0..<20 {
            try admin.ok("adjust_points", ["delta": 1, "reason": .string("before \(n)")])
            acknowledged.append("before \(n)")
        }

        try disk.fill()
        var refusal: JSONValue?
        // The WAL has room for a few more commits in its last page; changes go on until it has not.
        for n in 0..<1_000 where refusal == nil {
            let answer = try admin.call("adjust_points", ["delta": 1, "reason": .string("full \(n)")])
            if answer["ok"] == .bool(false) { refusal = answer } else { acknowledged.append("full \(n)") }
        }
        #expect(refusal?.errorCode == "unavailable", "\(refusal?.serialized() ?? "no refusal")")
        bq.signal(SIGTERM)
        #expect(bq.waitForExit() == .exited(0))
        let log = (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? ""
        #expect(log.contains("commit failed (the disk holding \(data) is full: free some space; commits succeed again once there is room)"),
                "\(log)")
        #expect(log.contains("the stop could not copy the -wal into \(data)/birthdayquest.sqlite (the disk holding \(data) is full"),
                "\(log)")
        #expect(log.contains("the game is whole, but lives partly in \(data)/birthdayquest.sqlite-wal"), "\(log)")

        // As said: with room again, the next start reads both files, and nothing is missing.
        try disk.free()
        let verify = try BQRun.run(["verify", "--data", data], workingDirectory: logs.path)
        #expect(verify.ending == .exited(0), "\(verify.stdout)")
        let again = try BQProcess(dataDirectory: data)
        let reader = try TestClient(port: again.port)
        try reader.signInAsAdmin()
        let events = try reader.ok("events", ["after": 0, "limit": 1_000])["result"]?["events"]?.arrayValue ?? []
        let reasons = events.compactMap { $0["data"]?["reason"]?.stringValue }
        #expect(reasons == acknowledged, "every acknowledged change, and no refused one, in order")
        again.signal(SIGTERM)
        #expect(again.waitForExit() == .exited(0))
    }

    /// A first launch that cannot write its new log takes the empty file away again: left, it
    /// would read as a log emptied since, and every start after would refuse it.
    @Test(.enabled(if: SmallDisk.canMount, "needs root, and a system that lets it mount a tmpfs"))
    func aFirstLaunchOnAFullDiskLeavesNoEmptyLogBehind() throws {
        let disk = try SmallDisk()
        defer { disk.unmount() }
        let data = disk.path + "/data"
        try disk.fill()
        let full = try BQRun.run(["serve", "--data", data, "--port", "0", "--seed", Repo.seedPath],
                                 workingDirectory: NSTemporaryDirectory(), environment: ["BQ_ADMIN_KEY": ServerHarness.adminKey])
        #expect(full.ending == .exited(1))
        #expect(full.stderr.contains("the disk holding \(data) is full: free some space and start again"), "\(full.stderr)")
        #expect(!FileManager.default.fileExists(atPath: data + "/birthdayquest.sqlite"), "an empty log was left")

        try disk.free()
        let again = try BQProcess(dataDirectory: data)
        let reader = try TestClient(port: again.port)
        try reader.signInAsAdmin()
        #expect(try reader.currentVersion() > 0, "seeded")
        again.signal(SIGTERM)
        #expect(again.waitForExit() == .exited(0))
    }
}
