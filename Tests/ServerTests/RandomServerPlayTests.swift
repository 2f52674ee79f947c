import Foundation
import JSON
import SeededRandom
import Testing

/// Random play through a real server, over loopback, on a real SQLite file: the domain's
/// property tests (DomainTests/PropertyTests.swift) hold the rules for the pure `decide`; this
/// holds them for what a client sees on the wire, where replies, patches, idempotency keys and
/// a restart come in. Every mutation carries an `idem` key; some are sent again with the same
/// key (a replay), or with the same key and other arguments (a mismatch). After every step the
/// balance, the versions, the subscribers' mirrors and what Mia may see are checked; twice per
/// seed the server is stopped and a new one started on the same directory, and every view and
/// every key must come back as it was. A failure names the seed and the step.
@Suite struct RandomServerPlayTests {
    static let steps = 200

    @Test(arguments: [UInt64(5), 0xB1A7_4DA7, 20_261_121])
    func randomPlayThroughARealServerSurvivesARestart(seed: UInt64) throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let play = try RandomServerPlay(seed: seed, dataDirectory: dir.path)
        defer { play.stop() }
        play.run { try play.start() }
        for step in 1...Self.steps where play.failures.isEmpty {
            play.run { try play.step(step) }
            if step == Self.steps / 2 && play.failures.isEmpty { play.run { try play.restart("in the middle") } }
        }
        if play.failures.isEmpty { play.run { try play.restart("at the end") } }
        #expect(play.failures.isEmpty, "\(play.failures.prefix(5).joined(separator: "\n"))")
        guard play.failures.isEmpty else { return }

        // The run must really exercise the rules, not pass on a game that refused everything
        // or never came near an empty balance.
        let stats = play.stats
        let summary = "seed \(seed): \(stats.summary)"
        #expect(stats.commits >= Self.steps / 3, "\(summary)")
        #expect(stats.refusals >= Self.steps / 5, "\(summary)")
        #expect(stats.replays >= 20 && stats.mismatches >= 10, "\(summary)")
        #expect(stats.replaysAfterRestart >= stats.commits, "\(summary)")
        #expect(stats.codes["insufficient_points", default: 0] >= 10, "\(summary)")
        #expect(stats.stepsWithFewPoints >= Self.steps / 10, "\(summary)")
        for code in ["forbidden", "not_found", "already_completed", "already_unlocked", "secret_locked", "version_conflict"] {
            #expect(stats.codes[code, default: 0] >= 1, "\(summary): no \(code)")
        }
        for op in ["complete_challenge", "unlock_reward", "adjust_points", "force_complete", "force_unlock", "save_secret",
                   "deliver_secret", "discover_secrets", "save_reward", "set_day"] {
            #expect(stats.committed[op, default: 0] >= 1, "\(summary): \(op) never committed")
        }
    }
}
