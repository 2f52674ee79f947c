// A child process for the event log's crash tests.
//
//   eventlog-crash-child <dbpath> <seed> <count>   append <count> requests, acknowledging each
//   eventlog-crash-child failsync <dbpath> <failures> [again]
//                                                   commit version 1, then version 2 with the
//                                                   next <failures> WAL syncs failing; print the
//                                                   second append's result (and with "again", try
//                                                   version 2 once more and print that) and wait
//                                                   to be killed
//
// Each request's acknowledgement is one stdout line, written (unbuffered) only after its
// transaction committed: `ack <game> <version after> <idempotency key...>`. Event payloads are
// `{"n":<int>}`; an occasional snapshot holds `{"sum":<sum of n up to its version>}`, so the test
// can check snapshots against the events.
import SQLite
import EventLog
import Foundation
import SeededRandom

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(1)
}

let arguments = CommandLine.arguments
if (4...5).contains(arguments.count), arguments[1] == "failsync", let failures = Int(arguments[3]) {
    FailingSyncVFS.install()
    do {
        let store = try EventStore(path: arguments[2])
        func tick(after version: Int64) -> AppendRequest {
            AppendRequest(game: "g", expected: version, events: [NewEvent(type: "tick", actor: "child", at: 1, payload: "{}")])
        }
        guard store.append(tick(after: 0)) == .committed(version: 1) else { fail("the first append did not commit") }
        FailingSyncVFS.failNextSyncs(failures)
        func outcome(_ result: AppendResult) -> String {
            switch result {
            case .committed: "committed"
            case .conflict: "conflict"
            case .failed: "failed"
            case .uncertain: "uncertain"
            }
        }
        var lines = outcome(store.append(tick(after: 1)))
        if arguments.count == 5 { lines += "\n" + outcome(store.append(tick(after: 1))) }
        FileHandle.standardOutput.write(Data((lines + "\n").utf8))
        // Killed here, with the connection open: closing it would checkpoint and tidy the WAL.
        while true { pause() }
    } catch {
        fail("cannot open \(arguments[2]): \(error)")
    }
}
guard arguments.count == 4, let seed = UInt64(arguments[2]), let count = Int(arguments[3]) else {
    fail("usage: eventlog-crash-child <dbpath> <seed> <count> | failsync <dbpath> <failures> [again]")
}

let writer: EventWriter
do {
    writer = try EventWriter(path: arguments[1])
} catch {
    fail("cannot open \(arguments[1]): \(error)")
}

var random = SplitMix64(seed: seed)
let games = ["g0", "g1", "g2"]
var versions: [String: Int64] = [:]
var sums: [String: Int64] = [:]
var keyNumber = 0
var submitted = 0
while submitted < count {
    let round = min(count - submitted, 1 + random.below(16))
    let done = DispatchSemaphore(value: 0)
    for _ in 0..<round {
        let game = games[random.below(games.count)]
        let expected = versions[game, default: 0]
        var keys: [String] = []
        for _ in 0...random.below(2) {
            keyNumber += 1
            keys.append("k-\(seed)-\(keyNumber)")
        }
        var events: [NewEvent] = []
        var sum = sums[game, default: 0]
        for _ in 0...random.below(3) {
            let n = Int64(random.below(1000))
            sum += n
            events.append(NewEvent(type: "tick", actor: "child", at: 1_700_000_000_000 + Int64(keyNumber),
                                   idempotencyKey: keys[0], payload: #"{"n":\#(n)}"#))
        }
        let after = expected + Int64(events.count)
        let snapshot = random.below(4) == 0 ? Snapshot(version: after, state: #"{"sum":\#(sum)}"#) : nil
        let records = keys.map {
            IdempotencyRecord(identity: "child", key: $0, fingerprint: "fp-\($0)", reply: #"{"version":\#(after)}"#, version: after)
        }
        versions[game] = after
        sums[game] = sum
        let line = "ack \(game) \(after) \(keys.joined(separator: " "))\n"
        writer.submit(AppendRequest(game: game, expected: expected, events: events, idempotency: records,
                                    snapshot: snapshot)) { result in
            guard case .committed(let version) = result, version == after else {
                fail("append of \(game) at \(expected) did not commit: \(result)")
            }
            FileHandle.standardOutput.write(Data(line.utf8))
            done.signal()
        }
    }
    for _ in 0..<round { done.wait() }
    submitted += round
}
writer.shutdown()
