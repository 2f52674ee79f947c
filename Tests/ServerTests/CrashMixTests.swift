import Foundation
import JSON
import SeededRandom
import Testing

/// SIGKILL of the real `bq serve` while a mix of keyed mutations from four identities is in
/// flight (the birthday person's completions and unlocks, two friends' dares, the console's
/// adjustments, forced completions and days), then a restart on the same directory.
/// The load tests beside it send only `adjust_points +1`; a mix is where a crash could split a
/// multi-event commit (the last unlock and its final badge), lose one connection's tail while
/// keeping another's, or store a reply without its events.
///
/// Every request commits exactly one event that no other request commits (a challenge, a reward,
/// a reason, a title, a day), so the log says for each request whether it landed, and where.
@Suite(.serialized) struct CrashMixTests {
    /// Requests each connection keeps unanswered: enough that every connection has some in flight
    /// when the server dies, few enough that the mix is spread over many commits.
    static let window = 6
    static let grant = 10_000
    static let environment = ["BQ_CHANGES_PER_SECOND": "10000000"]  // the players' budget has its own tests

    @Test(arguments: [UInt64(5), 777, 31_337])
    func aSigkillAmidAMixLosesNoAcknowledgedChangeAndAppliesNoneTwice(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let plan = MixPlan(random: &random)
        // At least 30 requests are unanswered when the Nth ack arrives: the kill lands mid-mix.
        let killAfter = random.int(8...(plan.count - 30))
        let context = "seed \(seed), killed after \(killAfter) acks"
        let dir = try TempDirectory()
        defer { dir.remove() }

        // 1. The mix, killed once `killAfter` ok replies have arrived (counted, not timed). The lane
        // that counts the last of them sends the SIGKILL itself, before it reads or sends anything
        // more: a test thread woken to do it could be scheduled late, after the mix had finished.
        let bq = try BQProcess(dataDirectory: dir.path, environment: Self.environment)
        let (lanes, tokens) = try Self.openLanes(port: bq.port, plan: plan)
        let acks = AckCount(threshold: killAfter) { bq.signal(SIGKILL) }
        for lane in lanes { lane.start(window: Self.window, acks: acks) }
        guard acks.reached.wait(timeout: .now() + 60) == .success else { throw HarnessError("\(context): the mix never got its acks") }
        for lane in lanes where !lane.waitUntilDone() { throw HarnessError("\(context): \(lane.player) still running after the kill") }
        #expect(bq.waitForExit() == .signalled(SIGKILL), "\(context)")
        for lane in lanes {
            #expect(lane.problems.isEmpty, "\(context): \(lane.problems)")
            for (key, reply) in lane.replies where reply["ok"] != .bool(true) {
                Issue.record("\(context): \(key) was refused before the kill: \(reply.serialized())")
            }
        }
        let acknowledged = lanes.reduce(0) { $0 + $1.acknowledged.count }
        #expect(acknowledged < plan.count + 1, "\(context): the kill came after the whole mix was answered")

        // 2. The log the dead server left replays with every rule holding.
        try Self.expectVerifies(dir.path, context: "\(context), after the kill")

        // 3. Restarted: the log holds every acknowledged change where its reply said, nothing twice,
        // and re-sending everything under the same keys converges without applying anything again.
        let again = try BQProcess(dataDirectory: dir.path, environment: Self.environment)
        try Self.checkAfterRestart(port: again.port, lanes: lanes, tokens: tokens, plan: plan, context: context)
        again.signal(SIGTERM)
        #expect(again.waitForExit() == .exited(0), "\(context)")
        try Self.expectVerifies(dir.path, context: "\(context), after the re-sends")
    }

    // MARK: Phases

    /// Connects the four identities, claims the players and grants mia her points (keyed, acknowledged
    /// before the mix starts, so every unlock is affordable whatever order commits come in).
    private static func openLanes(port: Int, plan: MixPlan) throws -> ([MixLane], [Player: String]) {
        var tokens: [Player: String] = [:]
        var lanes: [MixLane] = []
        for player in Player.allCases {
            let client = try TestClient(port: port)
            client.label = player.rawValue
            if player == .admin {
                try client.signInAsAdmin()
            } else {
                let claim = try client.ok("claim", ["character": .string(player.rawValue), "device": .string("\(player)-device")])
                tokens[player] = try #require(claim["result"]?["token"]?.stringValue)
            }
            let lane = MixLane(player: player, requests: plan.requests(of: player), client: client)
            if player == .admin { try lane.sendOneByOne(1) }  // the grant
            lanes.append(lane)
        }
        return (lanes, tokens)
    }

    private static func checkAfterRestart(port: Int, lanes: [MixLane], tokens: [Player: String], plan: MixPlan, context: String) throws {
        var clients: [Player: TestClient] = [:]
        for player in Player.allCases {
            let client = try TestClient(port: port)
            client.label = "\(player) after restart"
            if let token = tokens[player] { try client.ok("auth", ["token": .string(token)]) } else { try client.signInAsAdmin() }
            clients[player] = client
        }
        defer { clients.values.forEach { $0.socket.close() } }  // so SIGTERM finds no one to wait for
        let admin = try #require(clients[.admin])

        // (a) Every acknowledged change is in the log, at the version its reply gave, with the balance
        // its reply gave; (c) nothing is there twice; on each connection what landed is a prefix of
        // what was sent (commits are decided in arrival order, and a crash only loses a tail).
        let crashed = try LogIndex(admin.allEvents())
        for lane in lanes {
            var landed: [Bool] = []
            for request in lane.requests {
                let versions = crashed.versions(of: request)
                #expect(versions.count <= 1, "\(context): \(request) applied \(versions.count) times")
                landed.append(!versions.isEmpty)
                // Landed but unacknowledged is fine (the reply died with the server): the re-send must replay it.
                guard let reply = lane.acknowledged[request.key] else { continue }
                guard let version = crashed.replyVersion(of: request) else {
                    Issue.record("\(context): acknowledged but lost: \(request) (reply \(reply.serialized()))")
                    continue
                }
                #expect(reply.versionNumber == version, "\(context): \(request) acknowledged at \(reply.versionNumber), in the log at \(version)")
                if let points = reply["result"]?["points"]?.intValue {
                    #expect(points == crashed.balance(through: reply.versionNumber), "\(context): \(request) said balance \(points)")
                }
            }
            #expect(!landed.drop { $0 }.contains(true), "\(context): \(lane.player)'s landed requests are not a prefix: \(landed)")
        }
        try expectState(admin, matches: crashed, requests: plan.allRequests, context: "\(context), after the restart")

        // (b) Everything re-sent under its key: what landed replays its first answer, the rest commits now.
        var firstAnswers: [String: JSONValue] = [:]
        for lane in lanes {
            let client = try #require(clients[lane.player])
            for (request, reply) in try zip(lane.requests, client.pipelined(lane.requests)) {
                firstAnswers[request.key] = reply
                guard reply["ok"] == .bool(true) else {
                    Issue.record("\(context): re-sent \(request) was refused: \(reply.serialized())")
                    continue
                }
                if let landedAt = crashed.replyVersion(of: request) {
                    #expect(reply["replayed"] == .bool(true), "\(context): \(request) landed at \(landedAt) but did not replay")
                    #expect(reply.versionNumber == landedAt, "\(context): \(request) replayed at \(reply.versionNumber), landed at \(landedAt)")
                    if let first = lane.acknowledged[request.key] {
                        #expect(reply["result"] == first["result"], "\(context): \(request) replayed \(reply.serialized()), first \(first.serialized())")
                    }
                } else {
                    #expect(reply["replayed"] == nil, "\(context): \(request) replayed though the log did not hold it")
                }
            }
        }

        // The whole plan is now in the log exactly once, and nothing else.
        let settled = try LogIndex(admin.allEvents())
        for request in plan.allRequests {
            #expect(settled.versions(of: request).count == 1, "\(context): \(request) is in the log \(settled.versions(of: request).count) times")
            if let answer = firstAnswers[request.key], let points = answer["result"]?["points"]?.intValue {
                #expect(points == settled.balance(through: answer.versionNumber), "\(context): \(request) answered balance \(points)")
            }
        }
        #expect(settled.typeCounts == plan.expectedTypeCounts, "\(context): events by type")
        try expectState(admin, matches: settled, requests: plan.allRequests, context: "\(context), after the re-sends")
        try expectFinalState(admin, settled: settled, plan: plan, context: context)

        // Sent a third time: every request replays its settled answer and the game does not move.
        let before = try admin.currentVersion()
        for lane in lanes {
            let client = try #require(clients[lane.player])
            for (request, reply) in try zip(lane.requests, client.pipelined(lane.requests)) {
                let first = firstAnswers[request.key]
                #expect(reply["replayed"] == .bool(true), "\(context): \(request) did not replay: \(reply.serialized())")
                #expect(reply["version"] == first?["version"] && reply["result"] == first?["result"], "\(context): \(request) answered differently")
            }
        }
        #expect(try admin.currentVersion() == before, "\(context): re-sending moved the game")
        #expect(try admin.allEvents().count == settled.events.count, "\(context)")
    }

    /// The restarted server's state is the log's: each request that landed shows, each that did not
    /// is absent, and the balance, day and dares are those of the last events that set them.
    private static func expectState(_ admin: TestClient, matches log: LogIndex, requests: [MixRequest], context: String) throws {
        let answer = try admin.ok("state")
        #expect(answer.versionNumber == log.events.count, "\(context): state version")
        let state = try #require(answer["result"]?["state"])
        var day = 1
        var drafts: [String: (version: Int, title: JSONValue)] = [:]
        for request in requests {
            let landed = log.versions(of: request).first
            switch request.op {
            case "complete_challenge", "force_complete":
                let challenge = state["challenges"]?[request.mark.stringValue ?? ""]
                #expect(challenge?["status"] == (landed == nil ? "open" : "completed"), "\(context): \(request)")
                if landed != nil {
                    #expect(challenge?["forced"] == .bool(request.op == "force_complete"), "\(context): \(request)")
                    if request.op == "complete_challenge" {
                        #expect(challenge?["proof"] == request.args["proof"], "\(context): \(request)")
                        #expect(challenge?["option"] == request.args["option"] ?? "a", "\(context): \(request)")
                    }
                }
            case "unlock_reward":
                #expect(state["rewards"]?[request.mark.stringValue ?? ""]?["unlocked"] == .bool(landed != nil), "\(context): \(request)")
            case "set_day":
                if landed != nil && landed == log.lastVersion(ofType: "day_set") { day = request.mark.intValue ?? -1 }
            case "save_secret":
                if let landed, landed > drafts[request.player.rawValue]?.version ?? 0 { drafts[request.player.rawValue] = (landed, request.mark) }
            default:
                break
            }
        }
        #expect(state["game"]?["day"] == .int(day), "\(context): day")
        #expect(state["game"]?["points"] == .int(log.balance(through: log.events.count)), "\(context): balance")
        #expect(state["game"]?["final_badge"] == .bool(log.typeCounts["final_badge_unlocked"] == 1), "\(context): final badge")
        for friend in Player.friends {
            let dare = state["challenges"]?["dare-\(friend)"]
            let delivered = requests.contains { $0.player == friend && $0.op == "deliver_secret" && !log.versions(of: $0).isEmpty }
            // No draft landed: the dare does not exist yet.
            let status: JSONValue? = delivered ? "delivered" : drafts[friend.rawValue] == nil ? Optional.none : "draft"
            #expect(dare?["status"] == status, "\(context): \(friend)'s dare")
            #expect(dare?["title"] == drafts[friend.rawValue]?.title, "\(context): \(friend)'s dare shows its last draft")
        }
    }

    /// The state the whole plan implies: everything completed and unlocked, the last day set,
    /// and the balance the plan's numbers give, which the log's running balance must give too.
    private static func expectFinalState(_ admin: TestClient, settled: LogIndex, plan: MixPlan, context: String) throws {
        let state = try #require(admin.ok("state")["result"]?["state"])
        let challenges = state["challenges"]?.objectValue ?? [:]
        let rewards = state["rewards"]?.objectValue ?? [:]
        for id in plan.challenges { #expect(challenges[id]?["status"] == "completed", "\(context): \(id)") }
        for id in plan.rewards { #expect(rewards[id]?["unlocked"] == .bool(true), "\(context): \(id)") }
        for friend in Player.friends { #expect(challenges["dare-\(friend)"]?["status"] == "delivered", "\(context): dare-\(friend)") }
        #expect(state["game"]?["final_badge"] == .bool(true), "\(context)")
        #expect(state["game"]?["day"] == .int(plan.lastDay), "\(context)")
        let earned = plan.challenges.reduce(0) { $0 + (challenges[$1]?["points"]?.intValue ?? 0) }
        let spent = plan.rewards.reduce(0) { $0 + (rewards[$1]?["cost"]?.intValue ?? 0) }
        let expected = grant + plan.adjustmentTotal + earned - spent
        #expect(state["game"]?["points"] == .int(expected), "\(context): balance")
        #expect(settled.balance(through: settled.events.count) == expected, "\(context): the log's balance")
    }

    /// `bq verify` on a directory no server holds.
    private static func expectVerifies(_ directory: String, context: String) throws {
        let verify = try BQRun.run(["verify", "--data", directory], workingDirectory: directory)
        #expect(verify.ending == .exited(0), "\(context): \(verify.stdout)\(verify.stderr)")
        #expect(verify.stdoutLines.contains("verify: ok"), "\(context): \(verify.stdout)")
    }
}
