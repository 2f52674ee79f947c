import Foundation
import JSON
import UV
import POSIXSupport

// Requests in bulk and sign-in shortcuts for the server suites, beside `TestClient` itself.

extension TestClient {
    /// `count` `adjust_points +1` requests with ids from `firstID`, in one write, unanswered yet:
    /// commits on their way to disk while the test does something else.
    func sendAdjustments(_ count: Int, firstID: Int, reason: String) throws {
        var batch = ""
        for index in 0..<count {
            batch += JSONValue.object(["id": .int(firstID + index), "op": "adjust_points", "delta": 1,
                                       "reason": .string(reason)]).serialized() + "\n"
        }
        try sendRaw(Array(batch.utf8))
    }

    /// Signs this connection in as the admin console, of `game` when given.
    @discardableResult
    func signInAsAdmin(game: String? = nil) throws -> JSONValue {
        var args: [String: JSONValue] = ["key": .string(ServerHarness.adminKey)]
        if let game { args["game"] = .string(game) }
        return try ok("admin", args)
    }

    /// The version a `ping` reports: the game version this connection's game is at.
    func currentVersion() throws -> Int {
        guard let version = try ok("ping")["version"]?.intValue else { throw HarnessError("\(label): ping without a version") }
        return version
    }

    /// Waits until commands are decided at `version`, committed or not: a refused `expect`
    /// names the version commands are decided at. Needs an admin connection; asks a bounded
    /// number of times and says whether it got there.
    func waitUntilDecided(atVersion version: Int) throws -> Bool {
        for _ in 0..<1_000 {
            let probe = try call("adjust_points", ["delta": 1, "reason": "probe", "expect": 0])
            guard probe.errorCode == "version_conflict" else { throw HarnessError("\(label): probe was not refused: \(probe.serialized())") }
            if probe.versionNumber == version { return true }
        }
        return false
    }

    /// Every event of the connection's game, read page by page through the `events` op.
    func allEvents() throws -> [JSONValue] {
        var all: [JSONValue] = []
        while true {
            let page = try ok("events", ["after": .int(all.count), "limit": 1000])["result"]?["events"]?.arrayValue ?? []
            if page.isEmpty { return all }
            all += page
        }
    }

    /// The next line within `milliseconds`, or nil when the deadline passed with nothing to read.
    /// EOF is reported as `.eof` so callers can tell the two apart.
    func readWithin(milliseconds: Int) throws -> ReadOutcome {
        let saved = timeoutMilliseconds
        timeoutMilliseconds = milliseconds
        defer { timeoutMilliseconds = saved }
        do {
            guard let message = try readMessage() else { return .eof }
            return .message(message)
        } catch let error as SocketError where error.kind == .timedOut {
            return .nothingYet
        }
    }

    enum ReadOutcome {
        case message(JSONValue)
        case nothingYet
        case eof
    }
}

extension JSONValue {
    /// The `version` member as an Int, -1 when absent (so comparisons fail loudly).
    var versionNumber: Int { self["version"]?.intValue ?? -1 }
    /// The error code of a refusal, nil for an `ok` reply.
    var errorCode: String? { self["error"]?["code"]?.stringValue }
}

/// The real `bq` executable run to completion, its output captured in files (a pipe could fill
/// and block the child while we wait for it).
struct BQRun {
    enum Ending: Equatable {
        case exited(Int32)
        case signalled(Int32)
    }

    let ending: Ending
    let stdout: String
    let stderr: String

    var stdoutLines: [String] { stdout.split(separator: "\n").map(String.init) }

    /// Runs `bq arguments...` in `workingDirectory` (away from the repo's config/server.json) and
    /// waits at most `seconds` for it to end.
    /// `unprivileged`: as root, run it as `nobody` (through `setpriv`), for whom file modes count.
    static func run(_ arguments: [String], workingDirectory: String, environment extra: [String: String] = [:],
                    seconds: Int = 60, unprivileged: Bool = false) throws -> BQRun {
        guard FileManager.default.isExecutableFile(atPath: Repo.bqExecutable) else {
            throw HarnessError("\(Repo.bqExecutable) is missing: run `swift build` first")
        }
        let outPath = workingDirectory + "/bq-run-\(UUID().uuidString).out"
        let errPath = workingDirectory + "/bq-run-\(UUID().uuidString).err"
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        defer {
            try? FileManager.default.removeItem(atPath: outPath)
            try? FileManager.default.removeItem(atPath: errPath)
        }
        let process = Process()
        if unprivileged && geteuid() == 0 {
            process.executableURL = URL(fileURLWithPath: Unprivileged.setpriv)
            process.arguments = ["--reuid=\(Unprivileged.nobody)", "--regid=\(Unprivileged.nobody)", "--clear-groups",
                                 Repo.bqExecutable] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: Repo.bqExecutable)
            process.arguments = arguments
        }
        process.currentDirectoryURL = URL(fileURLWithPath: workingDirectory)
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("BQ_") }
        environment.merge(extra) { _, new in new }
        process.environment = environment
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        defer {
            try? out.close()
            try? err.close()
        }
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        let ended = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in ended.signal() }
        try process.run()
        guard ended.wait(timeout: .now() + .seconds(seconds)) == .success else {
            process.terminate()
            throw HarnessError("bq \(arguments.joined(separator: " ")) did not end within \(seconds) s")
        }
        let ending: Ending = process.terminationReason == .exit ? .exited(process.terminationStatus) : .signalled(process.terminationStatus)
        let stdout = String(decoding: FileManager.default.contents(atPath: outPath) ?? Data(), as: UTF8.self)
        let stderr = String(decoding: FileManager.default.contents(atPath: errPath) ?? Data(), as: UTF8.self)
        return BQRun(ending: ending, stdout: stdout, stderr: stderr)
    }
}

/// A user for whom file modes count: the tests' own when they are not root, else `nobody`.
enum Unprivileged {
    static let setpriv = "/usr/bin/setpriv"
    static let nobody = 65534
    static var available: Bool { geteuid() != 0 || FileManager.default.isExecutableFile(atPath: setpriv) }
}
