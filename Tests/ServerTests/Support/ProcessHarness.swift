import Foundation
import JSON
import Testing

/// The real `bq serve` executable as a child process, for signal tests.
///
/// Spawned with posix_spawn and an empty signal mask: Foundation's `Process` hands the child
/// the spawning thread's mask, and test runner threads block SIGTERM, so the child never saw it.
final class BQProcess: @unchecked Sendable {
    let pid: pid_t
    let port: Int
    private let exited = DispatchSemaphore(value: 0)
    /// The raw wait status, set by the waiter thread before it signals `exited`.
    private let status = LockedBox<Int32?>(nil)

    /// `environment` is added to (and overrides) the defaults: the test admin key, full fsync.
    /// `signalAtSpawn` is sent the moment the child exists, and the child starts with it blocked:
    /// it is pending through the whole start-up, as a signal sent while the log loads would be.
    /// Without `waitsForAddress` the child is not waited for (its `port` is 0). Its log goes to
    /// `logFile` when given (at `logLevel`), else nowhere. `underNohup` starts it through
    /// `nohup`, which has it ignore SIGHUP.
    init(dataDirectory: String, environment extra: [String: String] = [:], signalAtSpawn: Int32? = nil,
         waitsForAddress: Bool = true, logFile: String? = nil, logLevel: String = "warning",
         seedPath: String = Repo.seedPath, underNohup: Bool = false) throws {
        guard FileManager.default.isExecutableFile(atPath: Repo.bqExecutable) else {
            throw HarnessError("\(Repo.bqExecutable) is missing: run `swift build` first")
        }
        let launcher = underNohup ? ["/usr/bin/nohup"] : []
        let arguments = launcher + [Repo.bqExecutable, "serve", "--data", dataDirectory, "--port", "0", "--seed", seedPath,
                                    "--log-level", logLevel]
        var environment = ProcessInfo.processInfo.environment
        environment["BQ_ADMIN_KEY"] = ServerHarness.adminKey
        environment["BQ_SYNCHRONOUS"] = "full"
        for (key, value) in extra { environment[key] = value }
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw HarnessError("pipe failed: errno \(errno)") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addclose(&actions, fds[0])
        posix_spawn_file_actions_addopen(&actions, 2, logFile ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o600)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        if let signalAtSpawn { sigaddset(&mask, signalAtSpawn) }
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGTERM)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGHUP)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        // The C strings live until posix_spawn returned; the child has its own copies after that.
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, arguments[0], &actions, &attributes, argv, envp)
        close(fds[1])
        guard spawned == 0 else {
            close(fds[0])
            throw HarnessError("posix_spawn failed: \(spawned)")
        }
        pid = child
        if let signalAtSpawn { kill(child, signalAtSpawn) }
        let spawnedPID = child
        let status = self.status
        let exited = self.exited
        Thread {
            var raw: Int32 = 0
            while waitpid(spawnedPID, &raw, 0) < 0 && errno == EINTR {}
            status.update { $0 = raw }
            exited.signal()
        }.start()

        // Stdout is read on its own thread: the one line we wait for, then EOF. (Read even when
        // not waited for: a server whose stdout nobody reads dies writing its address.)
        let found = LockedBox<Int?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let reader = FileHandle(fileDescriptor: fds[0], closeOnDealloc: true)
        Thread {
            var text = ""
            while true {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                text += String(decoding: chunk, as: UTF8.self)
                if found.value == nil, let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening on ") }),
                   let port = line.split(separator: ":").last.flatMap({ Int($0) }) {
                    found.update { $0 = port }
                    ready.signal()
                }
            }
            ready.signal()
        }.start()
        guard waitsForAddress else {
            port = 0
            return
        }
        guard ready.wait(timeout: .now() + 60) == .success, let port = found.value else {
            kill(spawnedPID, SIGKILL)
            throw HarnessError("bq serve did not print its address")
        }
        self.port = port
    }

    func signal(_ number: Int32) { kill(pid, number) }

    /// Whether the child's main thread has `number` blocked (`SigBlk` in /proc/PID/status).
    func blocks(_ number: Int32) -> Bool {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("SigBlk:") }),
              let mask = UInt64(line.dropFirst("SigBlk:".count).trimmingCharacters(in: .whitespaces), radix: 16) else { return false }
        return mask & (1 << UInt64(number - 1)) != 0
    }

    /// The child's resident set size, from /proc/PID/status; 0 when unreadable.
    func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return (line.split(separator: " ").compactMap { Int($0) }.first ?? 0) * 1024
        }
        return 0
    }

    /// How the process ended, or nil if it still runs after the deadline.
    enum Ending: Equatable {
        case exited(Int32)
        case signalled(Int32)
    }

    func waitForExit(seconds: Int = 30) -> Ending? {
        guard exited.wait(timeout: .now() + .seconds(seconds)) == .success else { return nil }
        exited.signal()
        guard let raw = status.value else { return nil }
        // WIFEXITED / WEXITSTATUS / WTERMSIG are macros Swift cannot import.
        let signal = raw & 0x7F
        return signal == 0 ? .exited((raw >> 8) & 0xFF) : .signalled(signal)
    }

    deinit {
        if status.value == nil { kill(pid, SIGKILL) }
    }
}

extension BQProcess {
    /// Starts `bq serve` on `dataDirectory`, stops it with SIGTERM once it listens (expecting a
    /// clean exit), and returns the port it listened on and what it logged at `logLevel`.
    static func logOfAStart(dataDirectory: String, environment: [String: String] = [:], logLevel: String = "warning",
                            seedPath: String = Repo.seedPath,
                            sourceLocation: SourceLocation = #_sourceLocation) throws -> (port: Int, log: String) {
        let file = NSTemporaryDirectory() + "bq-serve-\(UUID().uuidString).log"
        defer { try? FileManager.default.removeItem(atPath: file) }
        let bq = try BQProcess(dataDirectory: dataDirectory, environment: environment, logFile: file, logLevel: logLevel,
                               seedPath: seedPath)
        bq.signal(SIGTERM)
        #expect(bq.waitForExit() == .exited(0), sourceLocation: sourceLocation)
        return (bq.port, (try? String(contentsOfFile: file, encoding: .utf8)) ?? "")
    }
}

/// A client on its own thread sending `adjust_points` +1 with an idempotency key each,
/// one at a time, until the server goes away. It records what was sent and what was acknowledged.
final class LoadClient: @unchecked Sendable {
    let name: String
    let sent = LockedBox<[String]>([])
    let acknowledged = LockedBox<[String]>([])
    let bye = LockedBox<String?>(nil)
    private let done = DispatchSemaphore(value: 0)

    init(name: String) { self.name = name }

    static func request(_ key: String) -> [String: JSONValue] {
        ["delta": 1, "reason": .string(key), "idem": .string(key)]
    }

    /// Starts sending; `warm` is signalled once after `warmAfter` acknowledgements.
    func start(port: Int, warmAfter: Int, warm: DispatchSemaphore) {
        Thread { [self] in
            defer { done.signal() }
            guard let client = try? TestClient(port: port), (try? client.ok("admin", ["key": .string(ServerHarness.adminKey)])) != nil else {
                return
            }
            var number = 0
            while true {
                number += 1
                let key = "\(name)-\(number)"
                sent.update { $0.append(key) }
                let reply: JSONValue
                do {
                    reply = try client.call("adjust_points", Self.request(key))
                } catch {
                    break
                }
                guard reply["ok"] == .bool(true) else { break }
                acknowledged.update { $0.append(key) }
                if number == warmAfter { warm.signal() }
            }
            // A refusal ("shutting down") still leaves the bye to read before EOF.
            _ = try? client.readToEOF()
            bye.update { $0 = client.byeReason }
        }.start()
    }

    func waitUntilDone(seconds: Int = 30) -> Bool { done.wait(timeout: .now() + .seconds(seconds)) == .success }
}

extension TestClient {
    /// Every `points_adjusted` reason in the log, in order.
    func adjustmentReasons() throws -> [String] {
        var reasons: [String] = []
        var after = 0
        while true {
            let events = try ok("events", ["after": .int(after), "limit": 1000])["result"]?["events"]?.arrayValue ?? []
            if events.isEmpty { return reasons }
            for event in events where event["type"] == .string("points_adjusted") {
                reasons.append(event["data"]?["reason"]?.stringValue ?? "?")
            }
            after = events.last?["version"]?.intValue ?? after
        }
    }
}
