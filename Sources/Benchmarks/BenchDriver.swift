import Histogram
import UV

/// What one load run asks for. Counts are totals unless named per game or per connection.
struct LoadShape: Sendable {
    var host = "127.0.0.1"
    var port = 4747
    var games: [String] = ["main"]
    var connections = 50
    var depth = 1
    var subscribersPerGame = 2
    var durationSeconds = 10.0
    var warmupSeconds = 1.0
    /// Total offered mutations/s (open loop); nil means closed loop at `depth`.
    var rate: Double?
    var adminKey = "bench-admin-key"
    /// Against the bare echo server: no sign-in, no subscribers, every line back is an answer.
    var echo = false
    /// Include the birthday person's completes and unlocks (paced, since they soon run out and
    /// their refusals cost the server almost nothing); false makes those connections admins.
    var includeBirthday = true
    /// Ends the measured window once this many mutations were acknowledged (for filling a log).
    var stopAfterAcknowledged: Int?
}

/// Who a load connection acts as, which decides the mutation it sends.
enum BenchActor: Sendable {
    case admin
    case organizer(String)
    case friend(String)
    case birthday(String)

    /// The rotation of actors over one game's mutating connections: mostly point
    /// adjustments (they never run out), dares edited while draft, and the birthday person
    /// completing and unlocking (these run out, so their refusals are counted apart).
    static let rotation: [BenchActor] = [
        .admin, .admin, .friend("priya"), .admin, .admin, .birthday("mia"),
        .admin, .friend("theo"), .organizer("sam"), .friend("dani"),
    ]
    /// The viewers subscribers take in turn: different views, so different patches.
    static let viewers: [BenchActor] = [
        .birthday("mia"), .friend("priya"), .organizer("sam"), .admin, .friend("theo"), .friend("dani"),
    ]
    static let characters = ["mia", "sam", "priya", "theo", "dani"]

    /// The game and actor of each mutating connection: connections go round the games, and
    /// each game's take turns through `rotation`.
    static func mutators(of shape: LoadShape) -> [(game: Int, actor: BenchActor)] {
        var perGame = Array(repeating: 0, count: shape.games.count)
        return (0..<shape.connections).map { index in
            let game = index % shape.games.count
            var actor = rotation[perGame[game] % rotation.count]
            if case .birthday = actor, !shape.includeBirthday { actor = .admin }
            perGame[game] += 1
            return (game, actor)
        }
    }
}

/// One client connection of the driver. Loop thread only.
final class BenchConnection: BenchSocket {
    enum Phase { case connecting, signingIn, ready, closed }

    let actor: BenchActor
    var phase = Phase.connecting
    var setupRepliesOwed = 0
    var sequence = 0

    init(index: Int, game: Int, actor: BenchActor, isSubscriber: Bool) {
        self.actor = actor
        super.init(index: index, game: game, isSubscriber: isSubscriber)
    }

    /// Queues one NDJSON line.
    func queue(_ line: String) {
        outbox += line.utf8
        outbox.append(0x0A)
    }
}

/// Per-game bookkeeping that turns reply versions and patch arrivals into delivery latencies.
/// A class, mutated in place: as a struct copied out of the array and written back, every
/// commit copied the whole (growing) map, and that quadratic cost landed on the driver's CPU,
/// which shares the machine with the server it measures.
/// Not thread-safe: the loop driver uses it on its loop, the client-library driver under its lock.
final class GameDelivery {
    /// Send time of the mutation that produced each version (from its reply).
    private var sentAtByVersion: [Int: UInt64] = [:]
    /// Patch arrivals for versions whose reply has not come back yet.
    private var waiting: [Int: [UInt64]] = [:]

    /// The reply for `version` came back; `sample(sentAt, arrival)` runs for every patch
    /// arrival that was waiting for it.
    func committed(version: Int, sentAt: UInt64, sample: (_ sentAt: UInt64, _ arrival: UInt64) -> Void) {
        guard sentAtByVersion[version] == nil else { return }
        sentAtByVersion[version] = sentAt
        for arrival in waiting.removeValue(forKey: version) ?? [] { sample(sentAt, arrival) }
    }

    /// A patch covering (from, to] arrived at `now`: one sample per version whose send time is
    /// known; the others wait for their reply.
    func arrived(from: Int, to: Int, at now: UInt64, sample: (_ sentAt: UInt64, _ arrival: UInt64) -> Void) {
        guard to > from else { return }
        for version in (from + 1)...to {
            if let sentAt = sentAtByVersion[version] {
                sample(sentAt, now)
            } else {
                waiting[version, default: []].append(now)
            }
        }
    }
}

/// Drives a bq server (or the echo server) with the game's NDJSON protocol.
final class LoadDriver: BenchDriverBase<BenchConnection> {
    let tokens: [[String: String]]
    /// Birthday connections waiting for their next turn (closed loop), with the time it comes.
    private var parked: [(BenchConnection, UInt64)] = []
    private let delivery: [GameDelivery]
    /// In every idempotency key: a second run against the same server must commit, not replay
    /// the first run's replies.
    private let runTag = String(UInt64.random(in: 0...UInt64.max), radix: 36)

    /// Called once when warm-up ends and the measured window starts.
    var onWarmupEnd: (() -> Void)?
    /// Called once when the measured window ends, before draining.
    var onMeasureEnd: (() -> Void)?

    /// `tokens[g][character]` signs characters in to game `g` (empty in echo mode).
    init(shape: LoadShape, tokens: [[String: String]]) throws {
        self.tokens = tokens
        delivery = shape.games.map { _ in GameDelivery() }
        try super.init(shape: shape)
        for (index, (game, actor)) in BenchActor.mutators(of: shape).enumerated() {
            let connection = BenchConnection(index: index, game: game, actor: actor, isSubscriber: false)
            connections.append(connection)
            mutators.append(connection)
        }
        if !shape.echo {
            for game in 0..<shape.games.count {
                for slot in 0..<shape.subscribersPerGame {
                    let actor = BenchActor.viewers[slot % BenchActor.viewers.count]
                    connections.append(BenchConnection(index: connections.count, game: game, actor: actor, isSubscriber: true))
                }
            }
        }
    }

    // MARK: Signing in

    override func didConnect(_ connection: BenchConnection) {
        if shape.echo {
            becomeReady(connection)
            return
        }
        connection.phase = .signingIn
        var lines = [signInLine(connection)]
        if connection.isSubscriber { lines.append(#"{"id":"s","op":"subscribe"}"#) }
        connection.setupRepliesOwed = lines.count
        for line in lines {
            connection.queue(line)
            connection.push(InFlight(sentAt: benchNow(), isMutation: false))
        }
        connection.flush()
    }

    override func connectionClosed(_ connection: BenchConnection, error: UVError?) {
        guard connection.phase != .closed, phase != .done else { return }
        connection.phase = .closed
        result.countError("connection_closed")
        if phase == .setup { failSetup("connection closed during setup: \(error.map { "\($0)" } ?? "by peer")") }
    }

    private func signInLine(_ connection: BenchConnection) -> String {
        let game = shape.games[connection.game]
        switch connection.actor {
        case .admin:
            return #"{"id":"a","op":"admin","key":"\#(shape.adminKey)","game":"\#(game)"}"#
        case .organizer(let name), .friend(let name), .birthday(let name):
            return #"{"id":"a","op":"auth","token":"\#(tokens[connection.game][name] ?? "")"}"#
        }
    }

    private func becomeReady(_ connection: BenchConnection) {
        connection.phase = .ready
        connectionReady()
    }

    // MARK: Phases

    override func isUsable(_ connection: BenchConnection) -> Bool { connection.phase == .ready }
    override func warmupEnded() { onWarmupEnd?() }
    override func measureEnded() { onMeasureEnd?() }

    override func loadTick(now: UInt64) {
        guard !parked.isEmpty else { return }
        let due = parked.filter { $0.1 <= now }
        parked.removeAll { $0.1 <= now }
        for (connection, _) in due {
            enqueueMutation(connection, sentAt: now)
            connection.flush()
        }
    }

    // MARK: Requests

    override func enqueueMutation(_ connection: BenchConnection, sentAt: UInt64) {
        let id = connection.nextID
        connection.nextID += 1
        connection.sequence += 1
        let idem = "b\(runTag)-\(connection.index)-\(id)"
        switch connection.actor {
        case .admin, .organizer:
            connection.queue(#"{"id":\#(id),"op":"adjust_points","delta":1,"reason":"bench","idem":"\#(idem)"}"#)
        case .friend:
            connection.queue(#"{"id":\#(id),"op":"save_secret","title":"Bench dare","description":"edit \#(id)","points":50,"idem":"\#(idem)"}"#)
        case .birthday:
            // Alternate completing challenges and unlocking rewards, cycling through the seed's ids.
            let turn = connection.sequence / 2
            if connection.sequence % 2 == 0 {
                let challenge = "c" + (turn % 15 + 1).paddedTwoDigits
                connection.queue(#"{"id":\#(id),"op":"complete_challenge","challenge":"\#(challenge)","proof":{"kind":"done"},"idem":"\#(idem)"}"#)
            } else {
                let reward = "r" + (turn % 9 + 1).paddedTwoDigits
                connection.queue(#"{"id":\#(id),"op":"unlock_reward","reward":"\#(reward)","idem":"\#(idem)"}"#)
            }
        }
        noteMutation(connection, sentAt: sentAt)
    }

    // MARK: Replies and pushes

    override func handleLine(_ connection: BenchConnection, _ line: ArraySlice<UInt8>, now: UInt64) {
        if shape.echo {
            handleReply(connection, line, now: now, ok: true)
        } else if BenchLineScan.isPush(line) {
            handlePush(connection, line, now: now)
        } else {
            handleReply(connection, line, now: now, ok: BenchLineScan.isOK(line))
        }
    }

    private static let toKey = Array(#""to":"#.utf8)
    private static let fromKey = Array(#""from":"#.utf8)
    private static let versionKey = Array(#""version":"#.utf8)
    private static let codeKey = Array(#""code":""#.utf8)
    private static let replayedKey = Array(#""replayed":true"#.utf8)

    private func handlePush(_ connection: BenchConnection, _ line: ArraySlice<UInt8>, now: UInt64) {
        switch BenchLineScan.pushKind(line) {
        case "patch":
            guard let from = BenchLineScan.intValue(after: Self.fromKey, in: line, limit: 40),
                  let to = BenchLineScan.intValue(after: Self.toKey, in: line, limit: 60), to > from else { return }
            if phase == .measuring || phase == .draining { result.patchesReceived += 1 }
            delivery[connection.game].arrived(from: from, to: to, at: now) { _ = recordDelivery(sentAt: $0, now: $1) }
        case "snapshot":
            if phase != .setup { result.snapshotsReceived += 1 }
        case "bye":
            result.countError("bye")
        default:
            break
        }
    }

    private func handleReply(_ connection: BenchConnection, _ line: ArraySlice<UInt8>, now: UInt64, ok: Bool) {
        guard let request = connection.pop() else { return }
        if !request.isMutation {
            guard ok else {
                failSetup("sign-in or subscribe refused: \(String(decoding: line, as: UTF8.self))")
                return
            }
            connection.setupRepliesOwed -= 1
            if connection.setupRepliesOwed == 0 { becomeReady(connection) }
            return
        }
        let inWindow = isInWindow(now)
        if ok {
            let replayed = !shape.echo && BenchLineScan.find(Self.replayedKey, in: line, limit: 80) != nil
            if !shape.echo, !replayed, let version = BenchLineScan.intValue(after: Self.versionKey, in: line, limit: 48) {
                noteCommitted(game: connection.game, version: version, sentAt: request.sentAt)
            }
            if replayed {
                if inWindow { result.replayed += 1 }
            } else if inWindow {
                result.acknowledged += 1
                latencies.recordAck(sentAt: request.sentAt, now: now)
                if let limit = shape.stopAfterAcknowledged, result.acknowledged >= limit { measureEnd = now }
            }
        } else if inWindow {
            let code = BenchLineScan.stringValue(after: Self.codeKey, in: line, limit: 200) ?? "?"
            if Self.refusalCodes.contains(code) {
                result.countRefusal(code)
                latencies.recordAck(sentAt: request.sentAt, now: now)
            } else {
                result.countError(code)
            }
        }
        if shape.rate == nil, isLoading, connection.phase == .ready {
            if case .birthday = connection.actor {
                // A person, not a script: at most one attempt per connection every 10 ms.
                parked.append((connection, now + 10_000_000))
            } else {
                enqueueMutation(connection, sentAt: now)
            }
        }
    }

    /// Answers the game rules give to a well-formed request: the load meant to cause them.
    static let refusalCodes: Set<String> = [
        "already_completed", "already_unlocked", "insufficient_points", "secret_locked", "not_found", "version_conflict",
    ]

    private func noteCommitted(game index: Int, version: Int, sentAt: UInt64) {
        guard shape.subscribersPerGame > 0 else { return }
        delivery[index].committed(version: version, sentAt: sentAt) { _ = recordDelivery(sentAt: $0, now: $1) }
    }
}

extension Int {
    /// "07" for 7: the seed's ids are two digits.
    var paddedTwoDigits: String { self < 10 ? "0\(self)" : "\(self)" }
}

/// A setup or usage failure of the benchmark, with a message for people.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
