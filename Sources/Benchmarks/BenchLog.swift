import EventLog
import Foundation

/// A throughput and latency benchmark of the log, run on purpose (never from tests).
enum LogBenchmark {
    /// For each synchronous mode (FULL, NORMAL) and batch size (1, 10, 100, 1000 requests per
    /// transaction), appends `eventsPerCase` one-event requests with an idempotency record each,
    /// into a fresh database under `directory`, and reports appends/s and the commit latency
    /// (one `append(batch:)` call) p50 and p99.
    static func run(directory: String, eventsPerCase: Int) -> String {
        var lines = ["mode    batch   appends/s   commit p50 ms   commit p99 ms   commits"]
        for mode in [SyncMode.full, .normal] {
            for batchSize in [1, 10, 100, 1000] {
                let path = (directory as NSString).appendingPathComponent("bench-\(mode.rawValue)-\(batchSize).sqlite")
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
                do {
                    let result = try measure(path: path, mode: mode, batchSize: batchSize, events: eventsPerCase)
                    lines.append(result.line(mode: mode, batchSize: batchSize))
                } catch {
                    lines.append("\(mode.rawValue) \(batchSize): \(error)")
                }
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            }
        }
        return lines.joined(separator: "\n")
    }

    private struct Result {
        var appendsPerSecond: Double
        var samples: [Double]

        func line(mode: SyncMode, batchSize: Int) -> String {
            let sorted = samples.sorted()
            func percentile(_ p: Double) -> Double {
                sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
            }
            return [
                mode.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0),
                String(batchSize).padding(toLength: 8, withPad: " ", startingAt: 0),
                String(Int(appendsPerSecond)).padding(toLength: 12, withPad: " ", startingAt: 0),
                String(format: "%.3f", percentile(0.50) * 1000).padding(toLength: 16, withPad: " ", startingAt: 0),
                String(format: "%.3f", percentile(0.99) * 1000).padding(toLength: 16, withPad: " ", startingAt: 0),
                String(sorted.count),
            ].joined()
        }
    }

    private static func measure(path: String, mode: SyncMode, batchSize: Int, events: Int) throws(StorageError) -> Result {
        let store = try EventStore(path: path, options: StoreOptions(synchronous: mode))
        defer { store.close() }
        let games = (0..<100).map { "game-\($0)" }
        var versions = [Int64](repeating: 0, count: games.count)
        var samples: [Double] = []
        var written = 0
        var sequence = 0
        let clock = ContinuousClock()
        var total = Duration.zero
        while written < events {
            let count = min(batchSize, events - written)
            var batch: [AppendRequest] = []
            batch.reserveCapacity(count)
            for _ in 0..<count {
                let index = sequence % games.count
                sequence += 1
                let key = "k-\(sequence)-\(UInt32.random(in: 0...UInt32.max))"
                let at = Int64(Date().timeIntervalSince1970 * 1000)
                let payload = #"{"character":"c-\#(index)","quest":"q-\#(sequence % 37)","points":\#(sequence % 11),"#
                    + #""note":"found the lantern behind the old oak tree","location":{"x":\#(sequence % 97),"y":\#(sequence % 89)},"#
                    + #""clue":"clue-\#(sequence % 13)"}"#
                batch.append(AppendRequest(
                    game: games[index], expected: versions[index],
                    events: [NewEvent(type: "points-awarded", actor: "player-\(index)", at: at, idempotencyKey: key, payload: payload)],
                    idempotency: [IdempotencyRecord(identity: "player-\(index)", key: key, fingerprint: "fp-\(sequence)",
                                                    reply: #"{"ok":true,"version":\#(versions[index] + 1)}"#,
                                                    version: versions[index] + 1)]))
                versions[index] += 1
            }
            let start = clock.now
            let results = store.append(batch: batch)
            let elapsed = clock.now - start
            try? store.checkpointIfNeeded()
            total += elapsed
            samples.append(seconds(elapsed))
            for result in results {
                if case .failed(let error) = result { throw error }
            }
            written += count
        }
        return Result(appendsPerSecond: Double(written) / max(seconds(total), 1e-9), samples: samples)
    }

    private static func seconds(_ duration: Duration) -> Double {
        let parts = duration.components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
