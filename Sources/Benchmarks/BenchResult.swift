import Foundation

/// The figures of one load run; `--json` prints it as is.
struct LoadResult: Encodable {
    var target = "bq"
    var mode = "closed"
    var games = 0
    var connections = 0
    var depth = 0
    var subscribersPerGame = 0
    var offeredRate: Double?
    var synchronous: String?
    var windowSeconds = 0.0

    /// Mutations answered `ok` (durable) inside the window.
    var acknowledged = 0
    /// Mutations answered `ok` with `replayed: true`: their key had been used before, so nothing
    /// new committed. Not counted as acknowledged (keys carry a per-run tag, so this stays 0
    /// unless something is wrong).
    var replayed = 0
    /// Mutations refused by a game rule (already_completed, ...) inside the window.
    var refusals = 0
    var refusalCodes: [String: Int] = [:]
    /// Anything else: transport failures, rate limits, storage errors, unexpected codes.
    var errors = 0
    var errorCodes: [String: Int] = [:]
    var sent = 0
    var notSent = 0
    var unansweredAtEnd = 0

    var ackP50Ms = 0.0
    var ackP99Ms = 0.0
    var ackP999Ms = 0.0
    var ackMaxMs = 0.0
    var deliverySamples = 0
    var deliveryP50Ms: Double?
    var deliveryP99Ms: Double?
    var deliveryMaxMs: Double?
    var patchesReceived = 0
    var snapshotsReceived = 0

    var serverCPUSeconds: Double?
    var serverPeakRSSMiB: Double?
    var serverRSSMiB: Double?
    var serverStartupSeconds: Double?
    var clientCPUSeconds = 0.0

    var acknowledgedPerSecond: Double { windowSeconds > 0 ? Double(acknowledged) / windowSeconds : 0 }
    var answeredPerSecond: Double { windowSeconds > 0 ? Double(acknowledged + refusals) / windowSeconds : 0 }

    private enum CodingKeys: String, CodingKey {
        case target, mode, games, connections, depth, subscribersPerGame, offeredRate, synchronous, windowSeconds
        case acknowledged, replayed, refusals, refusalCodes, errors, errorCodes, sent, notSent, unansweredAtEnd
        case ackP50Ms, ackP99Ms, ackP999Ms, ackMaxMs, deliverySamples, deliveryP50Ms, deliveryP99Ms, deliveryMaxMs
        case patchesReceived, snapshotsReceived, serverCPUSeconds, serverPeakRSSMiB, serverRSSMiB
        case serverStartupSeconds, clientCPUSeconds
        case acknowledgedPerSecond, answeredPerSecond
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(target, forKey: .target)
        try c.encode(mode, forKey: .mode)
        try c.encode(games, forKey: .games)
        try c.encode(connections, forKey: .connections)
        try c.encode(depth, forKey: .depth)
        try c.encode(subscribersPerGame, forKey: .subscribersPerGame)
        try c.encodeIfPresent(offeredRate, forKey: .offeredRate)
        try c.encodeIfPresent(synchronous, forKey: .synchronous)
        try c.encode(windowSeconds, forKey: .windowSeconds)
        try c.encode(acknowledged, forKey: .acknowledged)
        try c.encode(replayed, forKey: .replayed)
        try c.encode(refusals, forKey: .refusals)
        try c.encode(refusalCodes, forKey: .refusalCodes)
        try c.encode(errors, forKey: .errors)
        try c.encode(errorCodes, forKey: .errorCodes)
        try c.encode(sent, forKey: .sent)
        try c.encode(notSent, forKey: .notSent)
        try c.encode(unansweredAtEnd, forKey: .unansweredAtEnd)
        try c.encode(ackP50Ms, forKey: .ackP50Ms)
        try c.encode(ackP99Ms, forKey: .ackP99Ms)
        try c.encode(ackP999Ms, forKey: .ackP999Ms)
        try c.encode(ackMaxMs, forKey: .ackMaxMs)
        try c.encode(deliverySamples, forKey: .deliverySamples)
        try c.encodeIfPresent(deliveryP50Ms, forKey: .deliveryP50Ms)
        try c.encodeIfPresent(deliveryP99Ms, forKey: .deliveryP99Ms)
        try c.encodeIfPresent(deliveryMaxMs, forKey: .deliveryMaxMs)
        try c.encode(patchesReceived, forKey: .patchesReceived)
        try c.encode(snapshotsReceived, forKey: .snapshotsReceived)
        try c.encodeIfPresent(serverCPUSeconds, forKey: .serverCPUSeconds)
        try c.encodeIfPresent(serverPeakRSSMiB, forKey: .serverPeakRSSMiB)
        try c.encodeIfPresent(serverRSSMiB, forKey: .serverRSSMiB)
        try c.encodeIfPresent(serverStartupSeconds, forKey: .serverStartupSeconds)
        try c.encode(clientCPUSeconds, forKey: .clientCPUSeconds)
        try c.encode(acknowledgedPerSecond, forKey: .acknowledgedPerSecond)
        try c.encode(answeredPerSecond, forKey: .answeredPerSecond)
    }

    mutating func countRefusal(_ code: String) {
        refusals += 1
        refusalCodes[code, default: 0] += 1
    }

    mutating func countError(_ code: String) {
        errors += 1
        errorCodes[code, default: 0] += 1
    }

    func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// Two-column text for people.
    func table() -> String {
        func ms(_ value: Double?) -> String { value.map { String(format: "%.3f ms", $0) } ?? "-" }
        func codes(_ map: [String: Int]) -> String {
            map.isEmpty ? "" : " (" + map.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")"
        }
        var rows: [(String, String)] = [
            ("target", target + (synchronous.map { " (synchronous=\($0))" } ?? "")),
            ("shape", "\(games) games, \(connections) connections x \(depth) in flight, \(subscribersPerGame) subscribers/game, "
                + (offeredRate.map { "open loop at \(Int($0))/s" } ?? "closed loop")),
            ("window", String(format: "%.1f s", windowSeconds)),
            ("acknowledged/s", String(format: "%.0f", acknowledgedPerSecond)),
            ("answered/s (ok+refused)", String(format: "%.0f", answeredPerSecond)),
            ("refusals", "\(refusals)" + codes(refusalCodes)),
            ("errors", "\(errors)" + codes(errorCodes)),
            ("ack latency p50/p99/p999", "\(ms(ackP50Ms)) / \(ms(ackP99Ms)) / \(ms(ackP999Ms)) (max \(ms(ackMaxMs)))"),
            ("patch delivery p50/p99", "\(ms(deliveryP50Ms)) / \(ms(deliveryP99Ms)) (\(deliverySamples) samples, max \(ms(deliveryMaxMs)))"),
            ("patches / snapshots received", "\(patchesReceived) / \(snapshotsReceived)"),
        ]
        if replayed > 0 { rows.append(("replayed (not counted)", "\(replayed)")) }
        if notSent > 0 { rows.append(("not sent (backlog)", "\(notSent)")) }
        if unansweredAtEnd > 0 { rows.append(("unanswered at end", "\(unansweredAtEnd)")) }
        if let serverCPUSeconds {
            rows.append(("server CPU", String(format: "%.2f s (%.0f%% of one core)", serverCPUSeconds,
                                              100 * serverCPUSeconds / max(windowSeconds, 0.001))))
        }
        if let serverPeakRSSMiB { rows.append(("server peak RSS", String(format: "%.1f MiB", serverPeakRSSMiB))) }
        if let serverStartupSeconds { rows.append(("server start-up", String(format: "%.3f s", serverStartupSeconds))) }
        rows.append(("driver CPU", String(format: "%.2f s", clientCPUSeconds)))
        let width = rows.map(\.0.count).max() ?? 0
        return rows.map { $0.0.padding(toLength: width + 2, withPad: " ", startingAt: 0) + $0.1 }.joined(separator: "\n")
    }
}
