import Domain
import Foundation
import JSON
import Testing
import Views
import SeededRandom

/// Random play from the shipped seed: after every step, every rule of GAME.md that
/// holds for all histories is checked. Each failure names the seed and the step,
/// so `RandomPlay(seed:)` reproduces it.
@Suite struct PropertyTests {
    static let steps = 3_000

    @Test(arguments: [UInt64(1), 2, 0xB1A7_4DA7, 20_261_121])
    func everyInvariantHoldsAfterEveryStep(seed: UInt64) throws {
        var play = try RandomPlay(seed: seed)
        for step in 1...Self.steps where play.failures.isEmpty { play.step(step) }
        #expect(play.failures.isEmpty, "\(play.failures.prefix(5).joined(separator: "\n"))")
        // The generator must really exercise the game, not refuse everything.
        guard play.failures.isEmpty else { return }
        let expectedTypes: Set<String> = [
            "game_seeded", "character_claimed", "character_unclaimed", "challenge_completed", "secrets_discovered",
            "reward_unlocked", "final_badge_unlocked", "secret_saved", "secret_delivered", "points_adjusted", "day_set",
            "challenge_saved", "reward_saved",
        ]
        #expect(Set(play.events.map(\.type)) == expectedTypes, "seed \(seed): event types seen")
        #expect(play.rejectionsSeen == Set(RejectionCode.allCasesForTests), "seed \(seed): rejection codes seen")
        #expect(play.events.count > Self.steps / 8, "seed \(seed): \(play.events.count) events")
        // ... and spends much of it where a balance can run out.
        #expect(play.stepsWithFewPoints > Self.steps / 10, "seed \(seed): \(play.stepsWithFewPoints) steps under 50 points")
        #expect(play.refusedForPoints > 20, "seed \(seed): \(play.refusedForPoints) insufficient_points")
    }
}

extension RejectionCode {
    static let allCasesForTests: [RejectionCode] = [.badRequest, .forbidden, .notFound, .alreadyClaimed, .alreadyCompleted,
                                                    .alreadyUnlocked, .insufficientPoints, .secretLocked]
}

/// One random game, checked step by step.
struct RandomPlay {
    let seed: UInt64
    let seedContent: SeedContent
    var commands: RandomCommands
    var state: GameState
    var events: [Event]
    var views: [Viewer: JSONValue]
    var now: Millis
    var rejectionsSeen: Set<RejectionCode> = []
    /// How often the balance was low, and how often a command was refused for it: the
    /// generator's reach, checked by the test.
    var stepsWithFewPoints = 0
    var refusedForPoints = 0
    /// The events of the current step, for the incremental view update.
    var produced: [Event] = []
    let log = FailureLog()
    var failures: [String] { log.failures }

    static let viewers: [Viewer] = RandomCommands.characters.map { .character($0) } + [.admin]

    init(seed: UInt64) throws {
        self.seed = seed
        seedContent = try ShippedSeed.content()
        commands = RandomCommands(rng: SplitMix64(seed: seed))
        let (state, events) = try ShippedSeed.seededGame()
        self.state = state
        self.events = events
        now = Fixture.startTime
        views = Dictionary(uniqueKeysWithValues: Self.viewers.map { ($0, Views.view(state, for: $0)) })
    }

    mutating func step(_ step: Int) {
        let (actor, command) = commands.next(in: state, seedContent: seedContent, step: step)
        now += Millis(commands.rng.int(0...5_000))
        let context = CommandContext(actor: actor, at: now)
        log.place = { [seed] in "seed \(seed) step \(step): \(command) by \(actor.logName)" }
        let before = state

        let result = decide(state, command, context)
        log.check(decide(state, command, context) == result, "decide is deterministic")
        switch result {
        case .failure(let rejection):
            rejectionsSeen.insert(rejection.code)
            if rejection.code == .insufficientPoints { refusedForPoints += 1 }
            log.check(Self.codes(command).contains(rejection.code), "\(rejection) is not a code this command may give")
            log.check(!rejection.message.isEmpty, "a refusal without a message")
            // A refused command commits nothing: the state, and so the version, stays.
            log.check(state == before && state.version == events.count, "a refused command changed the game")
        case .success(let produced):
            self.produced = produced
            for event in produced {
                log.check(event.at == now, "event time")
                checkBadgeRule(event, command: command)
                // What the log stores must read back as the very same change.
                let stored = EventCoding.encode(event.change).serialized(sortedKeys: true)
                let decoded = (try? JSONParser.parse(stored)).flatMap { try? EventCoding.decode(type: event.type, payload: $0) }
                log.check(decoded == event.change, "\(event.type) does not survive the log's encoding: \(stored)")
                state.apply(event)
                events.append(event)
            }
            log.check(state.version == before.version + produced.count, "version counts events")
            checkAmounts(produced, of: command, decidedOn: before)
        }
        checkInvariants(before: before)
        if state.points < 50 { stepsWithFewPoints += 1 }
    }

    /// Points move by what the events say, and the events say what the game held when the
    /// command was decided: a challenge's points, a reward's cost (none when forced without
    /// deducting), the organizer's delta. Read from the events, not from `apply`, so a double
    /// award or a wrong cost shows.
    func checkAmounts(_ produced: [Event], of command: Command, decidedOn before: GameState) {
        var moved = 0
        for event in produced {
            switch event.change {
            case .challengeCompleted(let id, _, _, _, let points):
                log.check(points == before.challenges[id]?.points, "\(id) completed for \(points) points")
                moved += points
            case .rewardUnlocked(let id, let cost, let forced):
                var deducts = true
                if forced, case .forceUnlock(_, let deduct) = command { deducts = deduct }
                log.check(cost == (deducts ? before.rewards[id]?.cost : 0), "\(id) unlocked for \(cost)")
                moved -= cost
            case .pointsAdjusted(let delta, _):
                if case .adjustPoints(let asked, _) = command { log.check(delta == asked, "adjusted by \(delta), asked \(asked)") }
                moved += delta
            default:
                break
            }
        }
        log.check(state.points == before.points + moved, "points went from \(before.points) to \(state.points), the events say \(moved)")
    }

    /// The badge comes once: forced only by trigger_final_badge, otherwise only when
    /// the event before it (same decision) unlocked the last locked reward.
    func checkBadgeRule(_ event: Event, command: Command) {
        guard case .finalBadgeUnlocked(let forced) = event.change else { return }
        log.check(!state.hasFinalBadge, "a second final badge")
        if case .triggerFinalBadge = command {
            log.check(forced, "a triggered badge is marked forced")
        } else {
            log.check(!forced, "only the trigger forces the badge")
            log.check(state.rewards.values.allSatisfy { $0.isUnlocked }, "badge while a reward is locked")
        }
    }

    mutating func checkInvariants(before: GameState) {
        // Points (how much they move is checked against the events in `checkAmounts`).
        log.check(state.points >= 0, "points \(state.points)")
        log.check(state.earned >= before.earned && state.spent >= before.spent, "earned and spent only grow")

        // Rewards and the badge.
        log.check(state.rewardsUnlocked == state.rewards.values.count { $0.unlockedAt != nil }, "rewards_unlocked miscounted")
        let badgeEvents = events.count { $0.type == "final_badge_unlocked" }
        log.check(state.hasFinalBadge == (badgeEvents == 1) && badgeEvents <= 1, "badge events \(badgeEvents)")
        log.check(state.finalBadgeForced == events.contains { $0.change == .finalBadgeUnlocked(forced: true) }, "forced flag disagrees with the log")
        if state.rewardsTotal > 0 && state.rewardsUnlocked == state.rewardsTotal {
            log.check(state.hasFinalBadge, "every reward unlocked but no badge")
        }

        // The board's counts, made in one pass, agree with their definitions one by one.
        let board = state.challenges.values
        let expected = ChallengeCounts(
            total: board.count { !$0.isSecret || $0.dare == .discovered },
            completed: board.count { (!$0.isSecret || $0.dare == .discovered) && $0.isCompleted },
            secretsHidden: board.count { $0.dare == .delivered },
            secretsFound: board.count { $0.dare == .discovered },
            secretsCompleted: board.count { $0.isSecret && $0.isCompleted })
        log.check(state.challengeCounts == expected, "challenge counts \(state.challengeCounts) != \(expected)")

        // The timeline only grows, numbered 1...n, in time order.
        log.check(state.timeline.starts(with: before.timeline), "timeline rewritten")
        log.check(state.timeline.map(\.seq) == Array(1..<(state.timeline.count + 1)), "seqs")
        log.check(state.timeline.dropFirst(before.timeline.count).allSatisfy { $0.at == now }, "new entries stamped now")
        log.check(zip(state.timeline, state.timeline.dropFirst()).allSatisfy { $0.at <= $1.at }, "timeline in time order")

        // The log is the truth: replaying it from nothing gives this very state.
        log.check(state.version == events.count, "version")
        if state.version != before.version {
            log.check(replay(events) == state, "replay differs")
            // A snapshot (the server's start-up reads the newest) is the state, whole.
            let snapshot = try? JSONDecoder().decode(GameState.self, from: JSONEncoder().encode(state))
            log.check(snapshot == state, "the state does not survive a snapshot")
        }

        // A view is a pure function of the state, checked equal above when nothing was
        // committed; only a commit can change a view, so only a commit needs them rebuilt.
        if state.version != before.version { checkViews() }
    }

    mutating func checkViews() {
        var games: Set<JSONValue> = []
        for viewer in Self.viewers {
            let old = views[viewer]!
            let new = Views.view(state, for: viewer)
            let ops = JSONPatch.diff(old, new)
            log.check((try? JSONPatch.apply(ops, to: old)) == new, "patch for \(viewer) does not rebuild the view")
            // The server's fast path re-projects only what the events touched: it must agree with the full diff.
            let fast = updateView(old, to: state, for: viewer, touched: Touched(produced))
            log.check(fast.view == new, "the incremental view for \(viewer) differs from the full projection: \(JSONValue.array(JSONPatch.diff(new, fast.view).map(\.json)).serialized())")
            log.check((try? JSONPatch.apply(fast.ops, to: old)) == new, "the incremental patch for \(viewer) does not rebuild the view")
            for op in ops where op.path.hasPrefix("/timeline") {
                guard case .add(path: "/timeline/-", _) = op else {
                    log.fail("timeline patched with \(op) for \(viewer)")
                    continue
                }
            }
            games.insert(new["game"] ?? .null)
            checkHidden(new, for: viewer)
            views[viewer] = new
        }
        log.check(games.count == 1, "the game section differs between viewers")
    }

    /// What a viewer must never see: undiscovered dares for the birthday person, other
    /// people's drafts for friends, a locked gift's content for anyone but its author (and
    /// what each must see: their own drafts, every gift once it is unlocked).
    func checkHidden(_ view: JSONValue, for viewer: Viewer) {
        guard case .character(let id) = viewer, let role = state.characters[id]?.role, role != .organizer else { return }
        let challenges = view["challenges"]?.objectValue ?? [:]
        for (challengeID, challenge) in state.challenges where challenge.isSecret {
            let visible = challenges[challengeID] != nil
            switch (role, challenge.dare) {
            case (.birthday, .draft?), (.birthday, .delivered?):
                log.check(!visible, "the birthday person sees undiscovered \(challengeID)")
            case (.friend, .draft?):
                log.check(visible == (challenge.author == id), "\(id) and the draft \(challengeID)")
            default:
                log.check(visible, "\(id) cannot see \(challengeID)")
            }
        }
        if role == .birthday {
            log.check(!challenges.values.contains { ["draft", "delivered"].contains($0["status"]?.stringValue ?? "") }, "the birthday person sees a draft or delivered dare")
        }
        // A locked gift's content: its own author's alone (the organizer returned above).
        for (rewardID, reward) in view["rewards"]?.objectValue ?? [:] {
            let readable = reward["unlocked"] == true || (role == .friend && state.rewards[rewardID]?.fromCharacter == id)
            log.check((reward["content"] != nil) == readable, "\(id) and the content of \(rewardID)")
        }
    }

    /// PROTOCOL.md's refusals per op (plus bad_request and forbidden, which any op may give).
    static func codes(_ command: Command) -> Set<RejectionCode> {
        let always: Set<RejectionCode> = [.badRequest, .forbidden]
        switch command {
        case .seed: return always
        case .claim: return always.union([.notFound, .alreadyClaimed])
        case .unclaim: return always.union([.notFound])
        case .completeChallenge, .forceComplete: return always.union([.notFound, .alreadyCompleted])
        case .discoverSecrets, .setDay: return always
        case .unlockReward, .forceUnlock: return always.union([.notFound, .alreadyUnlocked, .insufficientPoints])
        case .saveSecret: return always.union([.secretLocked])
        case .deliverSecret: return always.union([.notFound, .secretLocked])
        case .triggerFinalBadge: return always.union([.alreadyUnlocked])
        case .adjustPoints: return always.union([.insufficientPoints])
        case .saveChallenge: return always.union([.notFound, .alreadyCompleted])
        case .saveReward: return always.union([.notFound, .alreadyUnlocked])
        }
    }
}

/// Broken rules, each prefixed with where they broke (seed, step, command, actor). The
/// run stops at the first failing step: one clear report beats thousands of follow-ons.
/// A class so that checks can read the game while it is being changed.
final class FailureLog {
    var failures: [String] = []
    var place: () -> String = { "setup" }

    func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fail(message()) }
    }

    func fail(_ message: String) { failures.append("\(place()): \(message)") }
}
