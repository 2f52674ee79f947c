import Foundation
import JSON
import SeededRandom
import Testing

// The plan, the connections and the log index of `CrashMixTests`.

// MARK: The plan

enum Player: String, CaseIterable, Sendable, CustomStringConvertible {
    case mia, priya, theo, admin
    static let friends: [Player] = [.priya, .theo]
    var description: String { rawValue }
}

/// One keyed request and the one event it commits: its type, its actor, and the `data` member
/// whose value no other request's event shares.
struct MixRequest: Sendable, CustomStringConvertible {
    let player: Player
    let op: String
    let args: [String: JSONValue]
    let eventType: String
    let mark: JSONValue

    var key: String { args["idem"]?.stringValue ?? "" }
    var signature: EventSignature { EventSignature(actor: player.rawValue, type: eventType, mark: mark) }
    var description: String { "\(player) \(op) \(key) (\(eventType) \(mark.serialized()))" }
}

struct EventSignature: Hashable {
    let actor: String
    let type: String
    let mark: JSONValue

    /// The `data` member that tells one mix event from another, by event type.
    static let markMembers = ["challenge_completed": "challenge", "reward_unlocked": "reward", "points_adjusted": "reason",
                              "secret_saved": "title", "secret_delivered": "challenge", "day_set": "day"]

    init(actor: String, type: String, mark: JSONValue) {
        self.actor = actor
        self.type = type
        self.mark = mark
    }

    init?(event: JSONValue) {
        guard let type = event["type"]?.stringValue, let member = Self.markMembers[type],
              let actor = event["actor"]?.stringValue, let mark = event["data"]?[member] else { return nil }
        self.init(actor: actor, type: type, mark: mark)
    }
}

/// The seeded mix: mia completes c01-c10 and unlocks every reward (the last unlock brings the
/// final badge in the same commit), each friend saves six drafts of a dare and delivers it, and
/// the console adjusts points both ways, force-completes c11-c15 and sets days 2-6 (each a change).
/// Nothing in it can be refused whatever order the connections' commits interleave in.
struct MixPlan {
    static let adjustments = 36

    let challenges = (1...15).map { String(format: "c%02d", $0) }
    let rewards = (1...9).map { "r0\($0)" }
    private(set) var byPlayer: [Player: [MixRequest]] = [:]
    private(set) var adjustmentTotal = 0
    private(set) var lastDay = 1

    init(random: inout SplitMix64) {
        var mia: [MixRequest] = []
        var ownChallenges = Array(challenges.prefix(10)).shuffled(using: &random)
        var ownRewards = rewards.shuffled(using: &random)
        while !ownChallenges.isEmpty || !ownRewards.isEmpty {
            let key = "mia-\(mia.count + 1)"
            if !ownChallenges.isEmpty && (ownRewards.isEmpty || random.chance(50)) {
                let id = ownChallenges.removeFirst()
                var args: [String: JSONValue] = ["challenge": .string(id), "proof": Self.proof(&random, key: key), "idem": .string(key)]
                if id == "c01" || id == "c07" { args["option"] = random.chance(50) ? "b" : "a" }  // the two with an option B here
                mia.append(MixRequest(player: .mia, op: "complete_challenge", args: args, eventType: "challenge_completed", mark: .string(id)))
            } else {
                let id = ownRewards.removeFirst()
                mia.append(MixRequest(player: .mia, op: "unlock_reward", args: ["reward": .string(id), "idem": .string(key)],
                                      eventType: "reward_unlocked", mark: .string(id)))
            }
        }
        byPlayer[.mia] = mia

        for friend in Player.friends {
            var dares: [MixRequest] = (1...6).map { draft in
                let title = "\(friend)'s dare, draft \(draft)"
                return MixRequest(player: friend, op: "save_secret",
                                  args: ["title": .string(title), "description": .string("Draft \(draft): sing on the pier"),
                                         "points": .int(random.pick([25, 50, 75, 100])), "idem": .string("\(friend)-\(draft)")],
                                  eventType: "secret_saved", mark: .string(title))
            }
            dares.append(MixRequest(player: friend, op: "deliver_secret", args: ["idem": .string("\(friend)-deliver")],
                                    eventType: "secret_delivered", mark: .string("dare-\(friend)")))
            byPlayer[friend] = dares
        }

        // The console's grant comes first (sent on its own before the mix); the rest is shuffled.
        var console: [(op: String, value: Int)] = (1...Self.adjustments).map { _ in
            ("adjust_points", random.chance(25) ? -random.int(1...3) : random.int(1...40))
        }
        console += (10..<15).map { ("force_complete", $0) }  // indices of c11-c15
        console += (2...6).shuffled(using: &random).map { ("set_day", $0) }
        // Shuffling keeps the days in some order of 2-6: each differs from the one before (and from day 1).
        console.shuffle(using: &random)
        var admin = [MixRequest(player: .admin, op: "adjust_points",
                                args: ["delta": .int(CrashMixTests.grant), "reason": "grant", "idem": "admin-grant"],
                                eventType: "points_adjusted", mark: "grant")]
        for (op, value) in console {
            let key = "admin-\(admin.count)"
            switch op {
            case "adjust_points":
                adjustmentTotal += value
                admin.append(MixRequest(player: .admin, op: op, args: ["delta": .int(value), "reason": .string(key), "idem": .string(key)],
                                        eventType: "points_adjusted", mark: .string(key)))
            case "force_complete":
                let id = challenges[value]
                admin.append(MixRequest(player: .admin, op: op, args: ["challenge": .string(id), "idem": .string(key)],
                                        eventType: "challenge_completed", mark: .string(id)))
            default:
                lastDay = value
                admin.append(MixRequest(player: .admin, op: op, args: ["day": .int(value), "idem": .string(key)],
                                        eventType: "day_set", mark: .int(value)))
            }
        }
        byPlayer[.admin] = admin
    }

    static func proof(_ random: inout SplitMix64, key: String) -> JSONValue {
        switch random.below(3) {
        case 0: return ["kind": "done"]
        case 1: return ["kind": "text", "text": .string("Did it (\(key))")]
        default: return ["kind": "photo", "url": .string("https://photos.example/\(key).jpg")]
        }
    }

    func requests(of player: Player) -> [MixRequest] { byPlayer[player] ?? [] }
    var allRequests: [MixRequest] { Player.allCases.flatMap { requests(of: $0) } }
    /// Requests of the mix proper, the grant left out.
    var count: Int { allRequests.count - 1 }

    /// The log's events by type once the whole plan landed: the seed, three claims, one event
    /// per request, and the final badge with the last unlock.
    var expectedTypeCounts: [String: Int] {
        var counts = ["game_seeded": 1, "character_claimed": 3, "final_badge_unlocked": 1]
        for request in allRequests { counts[request.eventType, default: 0] += 1 }
        return counts
    }
}

// MARK: Connections and the log

/// One identity's connection, sending its requests on its own thread with `window` unanswered
/// at most, and recording every reply, until its plan is done or the server is gone.
final class MixLane: @unchecked Sendable {
    let player: Player
    let requests: [MixRequest]
    private let client: TestClient
    private let done = DispatchSemaphore(value: 0)
    // Written by the lane's thread only; read after `waitUntilDone` (the semaphore orders them).
    private(set) var sent = 0
    private(set) var replies: [String: JSONValue] = [:]
    private(set) var problems: [String] = []

    init(player: Player, requests: [MixRequest], client: TestClient) {
        self.player = player
        self.requests = requests
        self.client = client
    }

    var acknowledged: [String: JSONValue] { replies.filter { $0.value["ok"] == .bool(true) } }

    /// Sends the first `count` requests one at a time, before the mix (the grant).
    func sendOneByOne(_ count: Int) throws {
        for request in requests[sent..<(sent + count)] {
            replies[request.key] = try client.ok(request.op, request.args)
            sent += 1
        }
    }

    func start(window: Int, acks: AckCount) {
        Thread { [self] in
            defer { done.signal() }
            var ids: [Int] = []
            var answered = sent
            do {
                while answered < requests.count {
                    while sent < requests.count && sent - answered < window {
                        let request = requests[sent]
                        sent += 1  // counted before the write: a write cut off by the kill may still have arrived
                        ids.append(try client.send(request.op, request.args))
                    }
                    let reply = try client.nextReply()
                    if reply["id"] != .int(ids.removeFirst()) { problems.append("reply out of order: \(reply.serialized())") }
                    replies[requests[answered].key] = reply
                    answered += 1
                    if reply["ok"] == .bool(true) { acks.add() }
                }
            } catch {
                // The server is gone: what was sent and not answered was in flight.
            }
        }.start()
    }

    func waitUntilDone(seconds: Int = 30) -> Bool { done.wait(timeout: .now() + .seconds(seconds)) == .success }
}

/// Counts ok replies over all lanes; at the threshold it runs `action` on the counting thread,
/// once, then signals `reached`.
final class AckCount: @unchecked Sendable {
    let reached = DispatchSemaphore(value: 0)
    private let threshold: Int
    private let action: @Sendable () -> Void
    private let lock = NSLock()
    private var count = 0

    init(threshold: Int, action: @escaping @Sendable () -> Void) {
        self.threshold = threshold
        self.action = action
    }

    func add() {
        let reachedNow = lock.withLock {
            count += 1
            return count == threshold
        }
        guard reachedNow else { return }
        action()
        reached.signal()
    }
}

/// The log as the `events` op gives it, with each mix event found by its signature.
struct LogIndex {
    let events: [JSONValue]
    private var bySignature: [EventSignature: [Int]] = [:]

    init(_ events: [JSONValue]) throws {
        self.events = events
        for (index, event) in events.enumerated() {
            // `balance(through:)` and `type(at:)` index by version: the log must have no gap.
            guard event.versionNumber == index + 1 else { throw HarnessError("event \(index + 1) has version \(event.versionNumber)") }
            if let signature = EventSignature(event: event) { bySignature[signature, default: []].append(index + 1) }
        }
    }

    func versions(of request: MixRequest) -> [Int] { bySignature[request.signature] ?? [] }

    func type(at version: Int) -> String? { events.indices.contains(version - 1) ? events[version - 1]["type"]?.stringValue : nil }

    /// The version a reply to `request` stands for: its event's, or the final badge's just after it
    /// when its unlock was the last (one commit, two events; the reply gives the commit's version).
    func replyVersion(of request: MixRequest) -> Int? {
        guard let version = versions(of: request).first else { return nil }
        if request.eventType == "reward_unlocked" && type(at: version + 1) == "final_badge_unlocked" { return version + 1 }
        return version
    }

    /// Mia's balance once the events up to `version` applied.
    func balance(through version: Int) -> Int {
        events.prefix(max(0, version)).reduce(0) { total, event in
            let data = event["data"]
            switch event["type"]?.stringValue {
            case "challenge_completed": return total + (data?["points"]?.intValue ?? 0)
            case "points_adjusted": return total + (data?["delta"]?.intValue ?? 0)
            case "reward_unlocked": return total - (data?["cost"]?.intValue ?? 0)
            default: return total
            }
        }
    }

    func lastVersion(ofType type: String) -> Int? {
        events.last { $0["type"]?.stringValue == type }?.versionNumber
    }

    var typeCounts: [String: Int] {
        events.reduce(into: [:]) { counts, event in counts[event["type"]?.stringValue ?? "?", default: 0] += 1 }
    }
}

extension TestClient {
    /// Sends every request in one go, then reads their replies in order.
    func pipelined(_ requests: [MixRequest]) throws -> [JSONValue] {
        let ids = try requests.map { try send($0.op, $0.args) }
        return try ids.map { try reply(to: $0) }
    }
}
