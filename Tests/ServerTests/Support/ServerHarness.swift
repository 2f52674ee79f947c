import Foundation
import Domain
@testable import EventLog
import Logging
import POSIXSupport
@testable import Server

/// Paths inside the repository, found from this file so tests run from any directory.
enum Repo {
    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let seedPath = root.appendingPathComponent("seed/birthdayquest.json").path
    /// The `bq` built with these tests: beside the test runner (so a `--scratch-path` or
    /// `-c release` run spawns its own build, not a stale debug one), else in .build/debug.
    static let bqExecutable: String = {
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        let candidates = [runner.appendingPathComponent("bq"), Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("bq"),
                          root.appendingPathComponent(".build/debug/bq")]
        return (candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[candidates.count - 1]).path
    }()
}

/// A fresh temporary directory, removed by `remove()`.
struct TempDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "bq-e2e-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A real `GameServer` on its own thread, created and run on that same thread as the
/// server requires. `stop()` shuts it down like SIGTERM and waits until `run()` returned.
final class ServerHarness: @unchecked Sendable {
    static let adminKey = "e2e-admin-key"

    let port: Int
    let dataDirectory: String
    /// Closed, it holds the server's rebuilds of past views (`subscribe since`) at their start.
    let rebuildGate: RebuildGate
    private let stopper: ServerStopper
    /// Signalled by the server thread once `run()` returned.
    private let finished: DispatchSemaphore
    private var stopped = false

    /// The config every in-process test starts from: ephemeral port, the repo's seed, no fsync
    /// (durability is the process tests' business).
    static func config(dataDirectory: String) -> ServerConfig {
        var config = ServerConfig()
        config.host = "127.0.0.1"
        config.port = 0
        config.dataDirectory = dataDirectory
        config.seedPath = Repo.seedPath
        config.adminKey = adminKey
        config.synchronous = .off
        // Test clients keep their sockets open after `bye`: no waiting for them to close.
        config.lingerMilliseconds = 50
        // Tests drive players far faster than people play; the limit has tests of its own.
        config.limits.changesPerSecond = 10_000_000
        return config
    }

    init(dataDirectory: String, configure: (inout ServerConfig) -> Void = { _ in },
         clock: @escaping @Sendable () -> Millis = GameServer.wallClock,
         steadyClock: (@Sendable () -> UInt64)? = nil) throws {
        var config = Self.config(dataDirectory: dataDirectory)
        configure(&config)
        self.dataDirectory = dataDirectory
        let started = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let outcome = StartOutcome()
        let frozen = config
        let thread = Thread {
            let logger = Logger(label: "e2e", factory: { _ in SwiftLogNoOpLogHandler() })
            let server: GameServer
            do {
                // The process-wide setting `bq serve` makes: a test's client that hangs up must
                // not end the test process with SIGPIPE.
                ignoreSIGPIPE()
                server = try GameServer(config: frozen, logger: logger, clock: clock, steadyClock: steadyClock)
            } catch {
                outcome.set(.failure(HarnessError("server did not start: \(error)")))
                started.signal()
                finished.signal()
                return
            }
            outcome.set(.success(Started(port: server.port, stopper: server.stopper, rebuildGate: server.rebuilder.gate)))
            started.signal()
            server.run()
            finished.signal()
        }
        thread.stackSize = 8 << 20
        thread.start()
        guard started.wait(timeout: .now() + 30) == .success, let result = outcome.get(), case .success(let started) = result else {
            throw HarnessError("server did not start: \(String(describing: outcome.get()))")
        }
        self.port = started.port
        self.stopper = started.stopper
        self.rebuildGate = started.rebuildGate
        self.finished = finished
    }

    /// Asks the server to shut down and waits (bounded) until its loop returned.
    func stop() throws {
        guard !stopped else { return }
        stopped = true
        stopper.stop()
        guard finished.wait(timeout: .now() + 30) == .success else { throw HarnessError("server did not stop within 30 s") }
    }

    deinit { try? stop() }

    func connect(receiveBufferBytes: Int? = nil) throws -> TestClient {
        try TestClient(port: port, receiveBufferBytes: receiveBufferBytes)
    }
}

/// What the server thread hands the test thread once the server is listening.
private struct Started {
    let port: Int
    let stopper: ServerStopper
    let rebuildGate: RebuildGate
}

/// The server thread's report to the test thread.
private final class StartOutcome: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Result<Started, HarnessError>?

    func set(_ result: Result<Started, HarnessError>) {
        lock.lock()
        value = result
        lock.unlock()
    }

    func get() -> Result<Started, HarnessError>? {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
}

extension EventStore {
    /// A second connection to the log in `dataDirectory` that takes SQLite's write lock and keeps
    /// it, as a backup or a stray `sqlite3` shell would, until `executeForTesting("ROLLBACK")`.
    static func holdingWriteLock(in dataDirectory: String) throws -> EventStore {
        let locker = try EventStore(path: dataDirectory + "/birthdayquest.sqlite",
                                    options: StoreOptions(synchronous: .off, checkIntegrity: false))
        do {
            try locker.executeForTesting("BEGIN IMMEDIATE")
        } catch {
            locker.close()
            throw error
        }
        return locker
    }
}
