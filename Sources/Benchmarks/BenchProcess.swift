import Foundation
#if canImport(Glibc)
import Glibc
import POSIXSupport
#endif


/// CPU time and memory of another process, read from /proc (Linux only).
enum ProcStats {
    /// utime + stime of `pid` in seconds (/proc/PID/stat fields 14 and 15), nil if unreadable.
    static func cpuSeconds(pid: Int32) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        // Fields after the command name, which may itself hold spaces: field 3 is first here.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// A `kB` line of /proc/PID/status in bytes, e.g. "VmHWM" (peak RSS) or "VmRSS".
    static func statusBytes(pid: Int32, field: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            let number = line.dropFirst(field.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap { Int($0) }
            return number.map { $0 * 1024 }
        }
        return nil
    }
}

/// A child server process (`bq serve` or `bq bench echo-server`) started for one benchmark run
/// on its own temporary data directory, stopped by its PID.
final class SpawnedServer {
    let process = Process()
    let port: Int
    let dataDirectory: String
    let ownsDirectory: Bool
    /// Seconds from launch to the "listening on" line.
    let startupSeconds: Double
    private var stopped = false

    /// Launches `arguments` of this very executable with `environment` added (and `--data DIR`
    /// when `passDataFlag`), and waits (up to `timeoutSeconds`) for its "listening on HOST:PORT" line.
    init(arguments: [String], environment: [String: String], dataDirectory: String?, passDataFlag: Bool,
         timeoutSeconds: Double = 120) throws {
        if let dataDirectory {
            self.dataDirectory = dataDirectory
            ownsDirectory = false
        } else {
            self.dataDirectory = FileManager.default.temporaryDirectory
                .appendingPathComponent("bq-bench-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
            ownsDirectory = true
        }
        // A directory made here is the owner's alone, as `bq serve` makes its own: else the server
        // warns that others may read the log it is about to fill. Its parents, and a directory
        // that is already there, are left as they are.
        if !FileManager.default.fileExists(atPath: self.dataDirectory) {
            try FileManager.default.createDirectory(atPath: (self.dataDirectory as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: self.dataDirectory, withIntermediateDirectories: false,
                                                    attributes: [.posixPermissions: 0o700])
        }
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = arguments + (passDataFlag ? ["--data", self.dataDirectory] : [])
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        let started = benchNow()
        try process.run()
        var seen = ""
        var found: Int?
        let reader = output.fileHandleForReading
        let deadline = started + UInt64(timeoutSeconds * 1e9)
        while found == nil, benchNow() < deadline {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            seen += String(decoding: chunk, as: UTF8.self)
            if let range = seen.range(of: "listening on "),
               let lineEnd = seen[range.upperBound...].firstIndex(of: "\n") {
                let address = seen[range.upperBound..<lineEnd]
                found = address.split(separator: ":").last.flatMap { Int($0) }
            }
        }
        startupSeconds = Double(benchNow() - started) / 1e9
        guard let found else {
            process.terminate()
            process.waitUntilExit()
            throw BenchError("the server did not print its listening line (exit status \(process.isRunning ? -1 : process.terminationStatus)); output: \(seen)")
        }
        port = found
        // Keep draining its stdout so a chatty child never blocks on a full pipe.
        reader.readabilityHandler = { handle in _ = handle.availableData }
    }

    var pid: Int32 { process.processIdentifier }
    var cpuSeconds: Double? { ProcStats.cpuSeconds(pid: pid) }
    var peakRSSBytes: Int? { ProcStats.statusBytes(pid: pid, field: "VmHWM") }
    var rssBytes: Int? { ProcStats.statusBytes(pid: pid, field: "VmRSS") }

    /// SIGTERM, then SIGKILL after 5 s; removes the data directory it made. Idempotent.
    func stop(removeData: Bool = true) {
        guard !stopped else { return }
        stopped = true
        if process.isRunning {
            kill(pid, SIGTERM)
            let deadline = benchNow() + 5_000_000_000
            while process.isRunning, benchNow() < deadline { usleep(10_000) }
            if process.isRunning { kill(pid, SIGKILL) }
            process.waitUntilExit()
        }
        if removeData, ownsDirectory { try? FileManager.default.removeItem(atPath: dataDirectory) }
    }

    deinit { stop() }
}
