import Foundation
import POSIXSupport
import Testing

/// The repository root, found from this file's path (Tests/CLITests/Support.swift).
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// The built `bq`: next to the test bundle, else in .build/debug.
func bqExecutable() throws -> URL {
    var candidates: [URL] = []
    let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    candidates.append(runner.deletingLastPathComponent().appendingPathComponent("bq"))
    candidates.append(Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("bq"))
    candidates.append(Bundle.main.bundleURL.appendingPathComponent("bq"))
    candidates.append(packageRoot.appendingPathComponent(".build/debug/bq"))
    guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
        throw TestFailure("bq is not built; looked in \(candidates.map(\.path))")
    }
    return found
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// One root for every temporary directory of this test process, removed when the process exits:
/// Swift Testing has no suite-wide teardown, and a test's directory may be a home or a data
/// directory that a child process it started still uses when the test returns.
private let temporaryRoot: URL = {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("bq-cli-tests-\(getpid())-\(UUID().uuidString)")
    atexit { try? FileManager.default.removeItem(at: temporaryRoot) }
    return url
}()

func makeTemporaryDirectory() throws -> URL {
    let url = temporaryRoot.appendingPathComponent(UUID().uuidString)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Everything a child process writes to one pipe, read on its own thread, searchable with a
/// deadline. `waitFor` moves a cursor past each match, so expectations are checked in order.
final class OutputCollector: @unchecked Sendable {
    /// Guards `bytes`, `ended` and `cursor`; signalled on new output and at EOF.
    private let condition = NSCondition()
    private var bytes: [UInt8] = []
    private var ended = false
    private var cursor = 0

    init(_ handle: FileHandle) {
        start { handle.availableData }
    }

    /// Reads a descriptor that ends with an error rather than an end of file, as a
    /// pseudo-terminal's other end does once the child has exited (EIO).
    init(fileDescriptor: Int32) {
        start {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { read(fileDescriptor, $0.baseAddress, $0.count) }
            return count > 0 ? Data(buffer[..<count]) : Data()
        }
    }

    /// Reads chunks on a thread of its own until an empty one.
    private func start(reading next: @escaping @Sendable () -> Data) {
        let thread = Thread { [self] in
            while true {
                let chunk = next()
                condition.lock()
                if chunk.isEmpty { ended = true } else { bytes += chunk }
                condition.broadcast()
                condition.unlock()
                if chunk.isEmpty { return }
            }
        }
        thread.start()
    }

    var text: String {
        condition.lock()
        defer { condition.unlock() }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Waits until `needle` appears after the cursor; true when it did before the deadline.
    func waitFor(_ needle: String, timeout: Double = 20) -> Bool {
        let pattern = Array(needle.utf8)
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let found = search(pattern, from: cursor) {
                cursor = found + pattern.count
                return true
            }
            if ended || !condition.wait(until: deadline) { return false }
        }
    }

    /// Waits until the pipe is closed (the process exited).
    func waitForEnd(timeout: Double = 20) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !ended {
            if !condition.wait(until: deadline) { return false }
        }
        return true
    }

    private func search(_ pattern: [UInt8], from start: Int) -> Int? {
        guard !pattern.isEmpty, bytes.count - start >= pattern.count else { return nil }
        var index = start
        while index + pattern.count <= bytes.count {
            if bytes[index] == pattern[0], Array(bytes[index..<index + pattern.count]) == pattern { return index }
            index += 1
        }
        return nil
    }
}

/// A child `bq` process with piped stdin, stdout and stderr. Killed when released.
final class BQProcess: @unchecked Sendable {
    let process = Process()
    let input = Pipe()
    let output: OutputCollector
    let errors: OutputCollector
    private let exited = DispatchSemaphore(value: 0)

    init(_ arguments: [String], environment extra: [String: String] = [:], home: URL? = nil,
         directory: URL = packageRoot) throws {
        process.executableURL = try bqExecutable()
        process.arguments = arguments
        process.currentDirectoryURL = directory
        var environment = ProcessInfo.processInfo.environment
        environment["NO_COLOR"] = "1"
        environment["BQ_ADMIN_KEY"] = nil
        environment["COLUMNS"] = nil  // rows are fitted to it; tests that want a width set it
        if let home {
            environment["HOME"] = home.path
            environment["XDG_CONFIG_HOME"] = home.appendingPathComponent(".config").path
        }
        for (key, value) in extra { environment[key] = value }
        process.environment = environment
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = input
        process.standardOutput = stdout
        process.standardError = stderr
        output = OutputCollector(stdout.fileHandleForReading)
        errors = OutputCollector(stderr.fileHandleForReading)
        process.terminationHandler = { [exited] _ in exited.signal() }
        try spawnWithDefaultSignalMask(process)
    }

    deinit { kill() }

    func send(_ line: String) {
        try? input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    func closeInput() {
        try? input.fileHandleForWriting.close()
    }

    /// Closes stdin and waits for the exit status; kills the process at the deadline.
    func finish(timeout: Double = 20) -> Int32? {
        closeInput()
        return waitForExit(timeout: timeout)
    }

    func waitForExit(timeout: Double = 20) -> Int32? {
        if exited.wait(timeout: .now() + timeout) == .timedOut {
            kill()
            return nil
        }
        exited.signal()
        return process.terminationStatus
    }

    func kill() {
        if process.isRunning { process.interrupt(); Foundation.kill(process.processIdentifier, SIGKILL) }
    }

    /// Runs `bq` to completion: (status, stdout, stderr).
    static func run(_ arguments: [String], home: URL? = nil, stdin: String? = nil,
                    environment: [String: String] = [:]) throws -> (status: Int32?, out: String, err: String) {
        let child = try BQProcess(arguments, environment: environment, home: home)
        if let stdin { try? child.input.fileHandleForWriting.write(contentsOf: Data(stdin.utf8)) }
        let status = child.finish()
        _ = child.output.waitForEnd()
        _ = child.errors.waitForEnd()
        return (status, child.output.text, child.errors.text)
    }
}

/// A real `bq serve` on a temporary data directory, stopped when released.
final class ServerProcess: @unchecked Sendable {
    let dataDirectory: URL
    let port: Int
    private let child: BQProcess

    /// Starts a server and waits for its "listening on HOST:PORT" line.
    /// `extraArguments` come after the defaults, so a repeated flag replaces its default.
    init(dataDirectory: URL? = nil, port: Int = 0, environment: [String: String] = [:], extraArguments: [String] = []) throws {
        let directory = try dataDirectory ?? makeTemporaryDirectory()
        self.dataDirectory = directory
        child = try BQProcess(["serve", "--data", directory.path, "--port", String(port),
                               "--seed", packageRoot.appendingPathComponent("seed/birthdayquest.json").path,
                               "--log-level", "warning"] + extraArguments, environment: environment)
        guard child.output.waitFor("listening on ") , child.output.waitFor("\n") else {
            child.kill()
            throw TestFailure("the server did not start: \(child.errors.text)")
        }
        let line = child.output.text.split(separator: "\n").first { $0.hasPrefix("listening on ") } ?? ""
        guard let parsed = line.split(separator: ":").last.flatMap({ Int($0) }) else {
            child.kill()
            throw TestFailure("no port in \(line)")
        }
        self.port = parsed
    }

    deinit { child.kill() }

    var pid: Int32 { child.process.processIdentifier }

    var adminKey: String {
        let data = FileManager.default.contents(atPath: dataDirectory.appendingPathComponent("admin.key").path) ?? Data()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// SIGTERM, then waits for the exit (SIGKILL at the deadline).
    func stop() {
        guard child.process.isRunning else { return }
        Foundation.kill(pid, SIGTERM)
        _ = child.waitForExit()
    }

    /// Flags that point a `bq play` or `bq admin` at this server.
    var address: [String] { ["--port", String(port)] }
    var adminFlags: [String] { address + ["--data", dataDirectory.path] }
}

/// Starts `process` from a thread with no blocked signals. A child inherits the spawning
/// thread's signal mask, and the test runner's worker threads block nearly every signal, so a
/// server started from one would never see its SIGTERM.
func spawnWithDefaultSignalMask(_ process: Process) throws {
    // The tests write to their children's input: one that has already exited must fail its test,
    // not end the whole run with SIGPIPE.
    ignoreSIGPIPE()
    final class Outcome: @unchecked Sendable {
        // Written by the spawning thread before `done` is signalled, read after.
        var error: (any Error)?
        let process: Process
        init(_ process: Process) { self.process = process }
    }
    let outcome = Outcome(process)
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        var none = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, nil)
        do { try outcome.process.run() } catch { outcome.error = error }
        done.signal()
    }
    thread.start()
    done.wait()
    if let error = outcome.error { throw error }
}
