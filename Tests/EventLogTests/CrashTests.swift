import Foundation
import SeededRandom
import Testing
@testable import EventLog

/// Finds the `eventlog-crash-child` executable among the build products next to the tests.
func crashChildURL(filePath: String = #filePath) throws -> URL {
    let name = "eventlog-crash-child"
    var directories: [URL] = []
    let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    directories.append(runner.deletingLastPathComponent())
    // On macOS the runner lives inside an .xctest bundle: climb out of it.
    directories.append(Bundle.main.bundleURL)
    directories.append(Bundle.main.bundleURL.deletingLastPathComponent())
    for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
        directories.append(bundle.bundleURL.deletingLastPathComponent())
    }
    let packageRoot = URL(fileURLWithPath: filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    directories.append(packageRoot.appendingPathComponent(".build/debug"))
    directories.append(packageRoot.appendingPathComponent(".build/release"))
    for directory in directories {
        let candidate = directory.appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
    }
    throw ChildNotFound(searched: directories.map(\.path))
}

struct ChildNotFound: Error, CustomStringConvertible {
    var searched: [String]
    var description: String {
        "eventlog-crash-child not found (build it: swift build --product eventlog-crash-child); searched: "
            + searched.joined(separator: ", ")
    }
}

/// Splits a pipe's bytes into lines, blocking on the pipe until a line or end of file arrives.
struct LineReader {
    let handle: FileHandle
    var buffer = Data()

    mutating func nextLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                return line
            }
            let chunk = handle.availableData
            if chunk.isEmpty { return nil }
            buffer.append(chunk)
        }
    }
}

struct Ack {
    var game: String
    var version: Int64
    var keys: [String]
}

@Suite struct CrashTests {
    @Test(arguments: [101, 202, 303, 404, 505] as [UInt64])
    func everyAcknowledgedEventSurvivesSIGKILL(seed: UInt64) throws {
        let child = try crashChildURL()
        try withTemporaryDirectory { dir in
            let path = dir + "/log.sqlite"
            var random = SplitMix64(seed: seed)
            let total = 400
            let killAfter = 1 + random.below(total - 1)   // acks to read before the kill

            let process = Process()
            process.executableURL = child
            process.arguments = [path, String(seed), String(total)]
            let output = Pipe()
            let errors = Pipe()
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            var reader = LineReader(handle: output.fileHandleForReading)
            var acks: [Ack] = []
            while acks.count < killAfter, let line = reader.nextLine() {
                let words = line.split(separator: " ").map(String.init)
                guard words.count >= 4, words[0] == "ack", let version = Int64(words[2]) else {
                    Issue.record("seed \(seed): unexpected child output: \(line)")
                    break
                }
                acks.append(Ack(game: words[1], version: version, keys: Array(words[3...])))
            }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(acks.count == killAfter, "seed \(seed): child ended early: \(stderr)")

            let store = try EventStore(path: path)
            defer { store.close() }
            var keysSeen = Set<String>()
            var storedKeys = Set<String>()
            for game in try store.games() {
                let events = try store.allEvents(game)
                #expect(events.map(\.version) == (0..<Int64(events.count)).map { $0 + 1 },
                        "seed \(seed): versions of \(game) are not gapless from 1")
                let records = try store.idempotencyRecords(game: game)
                for record in records {
                    #expect(keysSeen.insert(record.key).inserted, "seed \(seed): key \(record.key) twice")
                    #expect(record.version <= Int64(events.count), "seed \(seed): record beyond the log")
                    storedKeys.insert(record.key)
                }
                // Each snapshot holds the sum of the payloads up to its version.
                var sums: [Int64] = [0]
                for stored in events { sums.append(sums.last! + payloadNumber(stored.payload)) }
                for snapshot in try store.snapshots(game: game) {
                    #expect(snapshot.version >= 1 && snapshot.version <= Int64(events.count), "seed \(seed)")
                    if snapshot.version <= Int64(events.count) {
                        #expect(snapshot.state == #"{"sum":\#(sums[Int(snapshot.version)])}"#,
                                "seed \(seed): snapshot of \(game) at \(snapshot.version)")
                    }
                }
            }
            for ack in acks {
                #expect(try store.version(game: ack.game) >= ack.version,
                        "seed \(seed): acknowledged \(ack.game)@\(ack.version) is missing")
                for key in ack.keys {
                    #expect(storedKeys.contains(key), "seed \(seed): acknowledged key \(key) is missing")
                }
            }
        }
    }
}

private func payloadNumber(_ payload: String) -> Int64 {
    // The child writes {"n":<int>}.
    Int64(payload.dropFirst(5).dropLast()) ?? .min
}
