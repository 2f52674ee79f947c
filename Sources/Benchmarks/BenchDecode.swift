import ArgumentParser
import Foundation
import JSON
import Protocol

/// `bq bench decode`: the loop thread's first step for every request, alone. Decodes the load
/// benchmark's request lines as the server does (`RequestDecoder.decode(line:)`, which reads a
/// line's top level as a list of members, not a dictionary) and through the tree every line took
/// before.
struct BenchDecode: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Request decoding alone: the server's road for a line against the JSON tree's, per line of the load mix.")

    @Option(help: "Lines decoded per case.") var lines = 1_000_000

    /// The lines `bq bench load` sends most (see BenchDriver), with realistic ids and keys.
    static let mix = [
        #"{"id":1042,"op":"adjust_points","delta":1,"reason":"bench","idem":"b-7f3a-mia-1042"}"#,
        #"{"id":1043,"op":"save_secret","title":"Bench dare","description":"edit 1043","points":50,"idem":"b-7f3a-sam-1043"}"#,
        #"{"id":1044,"op":"complete_challenge","challenge":"c07","proof":{"kind":"done"},"idem":"b-7f3a-theo-1044"}"#,
    ]

    func run() throws {
        guard lines > 0 else { throw ValidationError("--lines must be at least 1") }
        print("line                  server's road ns/line   JSON tree ns/line")
        for line in Self.mix {
            let bytes = Array(line.utf8)
            let decoded = RequestDecoder.decode(line: bytes, maxDepth: 32)
            guard case .success = decoded, decoded == RequestDecoder.decode((try? JSONParser.parse(bytes)) ?? .null) else {
                throw ValidationError("The two roads do not decode the same request from \(line)")
            }
            let road = measure { _ = RequestDecoder.decode(line: bytes, maxDepth: 32) }
            let tree = measure { _ = RequestDecoder.decode((try? JSONParser.parse(bytes, maxDepth: 32)) ?? .null) }
            let op = (try? JSONParser.parse(bytes))?["op"]?.stringValue ?? "?"
            print(op.padding(toLength: 22, withPad: " ", startingAt: 0)
                + String(format: "%-24.0f%.0f", road, tree))
        }
    }

    /// Nanoseconds per call of `body`, over `lines` calls.
    private func measure(_ body: () -> Void) -> Double {
        let start = benchNow()
        for _ in 0..<lines { body() }
        return Double(benchNow() - start) / Double(lines)
    }
}
