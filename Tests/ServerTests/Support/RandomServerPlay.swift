import Foundation
import JSON
import Protocol
import SeededRandom
import Testing

/// One seed's game: the server, a connection per player (two for Mia), everything sent so far,
/// and the admin console's view at the last version seen, which each step is checked against.
final class RandomServerPlay {
    /// Connection names; each is signed in as the identity `identity(of:)` gives.
    static let connections = ["admin", "mia", "mia-tablet", "sam", "priya", "theo", "dani"]
    /// These keep a mirror of their view from pushes: the birthday person, a friend, the organizer.
    static let subscribers = ["mia", "priya", "sam"]
    static let identities = ["mia", "sam", "priya", "theo", "dani", "admin"]
    static let authors = ["sam", "priya", "theo", "dani"]
    static let organizers = ["sam", "admin"]
    /// Mutations that may answer `ok` and commit nothing (docs/protocol.md, Idempotency).
    static let mayCommitNothing: Set<String> = ["set_day", "discover_secrets", "save_secret", "save_challenge", "save_reward"]
    /// The refusals docs/protocol.md lists per op, beyond those any keyed mutation may get.
    static let refusalsByOp: [String: Set<String>] = [
        "complete_challenge": ["not_found", "already_completed", "bad_request"],
        "discover_secrets": [],
        "unlock_reward": ["not_found", "already_unlocked", "insufficient_points"],
        "save_secret": ["secret_locked"],
        "deliver_secret": ["not_found", "secret_locked"],
        "force_complete": ["not_found", "already_completed"],
        "force_unlock": ["not_found", "already_unlocked", "insufficient_points"],
        "trigger_final_badge": ["already_unlocked"],
        "adjust_points": ["insufficient_points"],
        "set_day": [],
        "save_challenge": ["not_found", "already_completed"],
        "save_reward": ["not_found", "already_unlocked"],
    ]

    let seed: UInt64
    let dataDirectory: String
    var rng: SplitMix64
    var server: ServerHarness
    var clients: [String: TestClient] = [:]
    var tokens: [String: JSONValue] = [:]
    /// The game's version as of the last check, and the admin console's view at it.
    var version = 0
    var adminView: JSONValue = .null
    /// Points earned and spent according to the events read so far: the balance must be their
    /// difference (points are conserved: only events move them, by what the events say).
    var earned = 0
    var spent = 0
    var requests: [SentRequest] = []
    var stats = PlayStats()
    private(set) var failures: [String] = []
    /// Where the run is, for failure messages: the seed and step, and the request being checked.
    var stage = ""
    var requestInFlight: String?
    var place: String { requestInFlight.map { "\(stage): \($0)" } ?? stage }
    private var afterRestart = false

    init(seed: UInt64, dataDirectory: String) throws {
        self.seed = seed
        self.dataDirectory = dataDirectory
        rng = SplitMix64(seed: seed)
        server = try Self.startServer(dataDirectory)
    }

    static func startServer(_ dataDirectory: String) throws -> ServerHarness {
        try ServerHarness(dataDirectory: dataDirectory) { config in
            // Every key must still replay at the end: set the window here, far above the few
            // hundred events a run makes, rather than lean on the default.
            config.idempotencyWindow = 1_000_000
            // The checks send several requests per step as fast as loopback carries them.
            config.limits.requestsPerSecond = 1_000_000
            // A snapshot every few events, so a restart loads one and replays the log after it.
            config.snapshotEvery = 16
        }
    }

    func stop() { try? server.stop() }

    /// Runs one part of the play; an error (a refused `ok`, a closed connection) is a failure
    /// at the current place, so it too names the seed and the step.
    func run(_ body: () throws -> Void) {
        do { try body() } catch { failures.append("\(place): \(error)") }
    }

    func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { failures.append("\(place): \(message())") }
    }

    static func identity(of connection: String) -> String { connection == "mia-tablet" ? "mia" : connection }

    func connection(for identity: String) -> TestClient {
        // Mia's keys are hers on either device: a retry may come from the other one.
        identity == "mia" && rng.chance(30) ? clients["mia-tablet"]! : clients[identity]!
    }

    // MARK: Start and restart

    func start() throws {
        stage = "seed \(seed) start"
        try connectEveryone(claiming: true)
        for name in Self.subscribers { try clients[name]!.subscribe() }
        let state = try clients["admin"]!.ok("state")
        version = state.versionNumber
        adminView = state["result"]?["state"] ?? .null
        earned = adminView["game"]?["earned"]?.intValue ?? -1
        spent = adminView["game"]?["spent"]?.intValue ?? -1
        check(earned == 0 && spent == 0, "a fresh game has earned \(earned) and spent \(spent)")
        try checkViews()
    }

    /// Opens every connection and signs it in: by claim on the first server, by token after a
    /// restart (tokens survive it); Mia's tablet always by her phone's token.
    func connectEveryone(claiming: Bool) throws {
        for name in Self.connections {
            let client = try server.connect()
            client.label = "\(name) (seed \(seed))"
            clients[name] = client
            switch name {
            case "admin":
                try client.signInAsAdmin()
            case "mia-tablet":
                try client.ok("auth", ["token": tokens["mia"] ?? .null])
            default:
                if claiming {
                    let claimed = try client.ok("claim", ["character": .string(name), "device": .string("device-\(name)")])
                    tokens[name] = claimed["result"]?["token"]
                } else {
                    try client.ok("auth", ["token": tokens[name] ?? .null])
                }
            }
        }
    }

    /// Stops the server and starts a new one on the same directory: every connection's view
    /// must come back the same at the same version, the mirrors resume from where they were,
    /// and every key that got an `ok` replays it without committing anything.
    func restart(_ when: String) throws {
        stage = "seed \(seed) restart \(when)"
        var views: [String: JSONValue] = [:]
        for name in Self.connections {
            let state = try clients[name]!.ok("state")
            check(state.versionNumber == version, "\(name)'s state is at \(state.versionNumber), the game at \(version)")
            views[name] = state["result"]?["state"]
        }
        let mirrors = Self.subscribers.map { (name: $0, view: clients[$0]!.mirror ?? .null, version: clients[$0]!.mirrorVersion) }
        try server.stop()
        // Each connection gets `bye` and the end of its stream, and nothing before it: no
        // commit was in flight, so no patch can be.
        for name in Self.connections {
            let client = clients[name]!
            let rest = try client.readToEOF()
            check(rest.map { $0["push"]?.stringValue } == ["bye"] && client.byeReason == "server_shutdown",
                  "\(name) got at shutdown: \(rest.map { $0.serialized() })")
            check(client.problems.isEmpty, "\(client.problems)")
        }

        server = try Self.startServer(dataDirectory)
        try connectEveryone(claiming: false)
        check(clients["admin"]!.hello["version"]?.intValue == version, "hello after the restart: \(clients["admin"]!.hello.serialized())")
        for name in Self.connections {
            let state = try clients[name]!.ok("state")
            check(state.versionNumber == version, "\(name)'s state after the restart is at \(state.versionNumber), was \(version)")
            if state["result"]?["state"] != views[name] {
                let diff = JSONPatch.diff(views[name] ?? .null, state["result"]?["state"] ?? .null).prefix(5).map { $0.json.serialized() }
                failures.append("\(place): \(name)'s view changed across the restart: \(diff)")
            }
        }
        // The mirrors resume across the restart: one patch from where they stopped.
        for mirror in mirrors {
            let client = clients[mirror.name]!
            client.adoptMirror(mirror.view, version: mirror.version)
            // With the mirror's digest: a view kept from pushes must be the one the server
            // holds at its version, digest for digest, or every reconnect would be a snapshot.
            let resumed = try client.subscribe(since: mirror.version, digest: ViewDigest.of(mirror.view))
            check(resumed["result"] == ["mode": "patch"], "\(mirror.name) resumed with \(resumed.serialized())")
        }
        try checkViews()

        // Idempotency survives the restart: every key that got an `ok`, sent again, replays.
        afterRestart = true
        defer { afterRestart = false }
        for index in requests.indices where requests[index].firstOK != nil && failures.isEmpty {
            try send(index)
        }
        // ... and still refuses other arguments under a used key.
        for _ in 0..<5 where failures.isEmpty {
            let committed = requests.indices.filter { requests[$0].firstOK != nil }
            guard !committed.isEmpty else { break }
            let index = rng.pick(committed)
            try send(index, arguments: changedArguments(requests[index]))
        }
        try checkViews()
    }

    // MARK: One step

    func step(_ number: Int) throws {
        stage = "seed \(seed) step \(number)"
        let committed = requests.indices.filter { requests[$0].firstOK != nil }
        let refused = requests.indices.filter { requests[$0].firstOK == nil }
        let roll = rng.int(1...100)
        if roll <= 12, !committed.isEmpty {
            // A retry of a committed request (a lost reply, say), sometimes with an `expect` the
            // game has passed since: the replay is answered before `expect` is looked at.
            let index = rng.pick(committed)
            let stale: Int? = rng.chance(30) ? max(0, (requests[index].firstOK?.versionNumber ?? 1) - 1) : nil
            try send(index, expect: stale)
        } else if roll <= 18, !committed.isEmpty {
            let index = rng.pick(committed)
            try send(index, arguments: changedArguments(requests[index]))
        } else if roll <= 22, !refused.isEmpty {
            // Refusals are not remembered: the same key is decided afresh, and may commit now.
            try send(rng.pick(refused))
        } else {
            let (identity, op, arguments) = randomMutation(number)
            requests.append(SentRequest(identity: identity, op: op, arguments: arguments, key: "s\(seed)-k\(requests.count + 1)"))
            // Now and then a compare-and-set: at the current version it goes through, behind it
            // it is a `version_conflict` that changes nothing.
            let expect: Int? = rng.chance(15) ? (rng.chance(50) ? version : max(0, version - rng.int(1...3))) : nil
            try send(requests.count - 1, expect: expect)
        }
        try checkViews()
        if (adminView["game"]?["points"]?.intValue ?? 0) < 50 { stats.stepsWithFewPoints += 1 }
    }

    /// Sends request `index` under its key (with `arguments` in place of its own, for a
    /// mismatch) and checks the reply against the key's history: a key with an `ok` replays it,
    /// other arguments under it are `idempotency_mismatch`, a new or refused key is decided.
    func send(_ index: Int, arguments changed: [String: JSONValue]? = nil, expect: Int? = nil) throws {
        let request = requests[index]
        var fields = changed ?? request.arguments
        fields["idem"] = .string(request.key)
        if let expect { fields["expect"] = .int(expect) }
        let client = connection(for: request.identity)
        // Not cleared on a throw: the error is then reported with the request that caused it.
        requestInFlight = "\(request.op) \(JSONValue.object(fields).serialized(sortedKeys: true)) by \(client.label)"
        let reply = try client.call(request.op, fields)

        if reply["ok"] == true {
            if reply["replayed"] == true {
                check(changed == nil && request.firstOK != nil, "an unexpected replay: \(reply.serialized())")
                check(reply.versionNumber == request.firstOK?.versionNumber && reply["result"] == request.firstOK?["result"],
                      "the replay \(reply.serialized()) differs from the first ok \(request.firstOK?.serialized() ?? "none")")
                stats.replays += 1
                if afterRestart { stats.replaysAfterRestart += 1 }
                try checkNothingChanged()
            } else {
                check(changed == nil, "other arguments under a used key were accepted: \(reply.serialized())")
                check(request.firstOK == nil, "a key already answered ok was decided again: \(reply.serialized())")
                requests[index].firstOK = reply
                stats.commits += 1
                stats.committed[request.op, default: 0] += 1
                try checkCommit(reply, of: request, expect: expect)
            }
        } else {
            let code = reply.errorCode ?? "none"
            stats.refusals += 1
            stats.codes[code, default: 0] += 1
            if changed != nil {
                check(code == "idempotency_mismatch", "other arguments under a used key got \(reply.serialized())")
                stats.mismatches += 1
            } else if request.firstOK != nil {
                failures.append("\(place): a retry of a committed key was refused: \(reply.serialized())")
            } else {
                let allowed = (Self.refusalsByOp[request.op] ?? []).union(["forbidden", "version_conflict"])
                check(allowed.contains(code), "\(code) is not a refusal \(request.op) may give: \(reply.serialized())")
                check(code != "version_conflict" || (expect != nil && expect != version), "version_conflict without a stale expect")
            }
            try checkNothingChanged()
        }
        requestInFlight = nil
    }

    // MARK: Checks

    /// A refusal or a replay commits nothing: the admin console's view is the very same, at
    /// the same version.
    func checkNothingChanged() throws {
        let state = try clients["admin"]!.ok("state")
        check(state.versionNumber == version, "the version moved from \(version) to \(state.versionNumber)")
        check(state["result"]?["state"] == adminView, "the game changed: \(JSONPatch.diff(adminView, state["result"]?["state"] ?? .null).prefix(5).map { $0.json.serialized() })")
    }

    /// A new `ok`: its version is the last one plus the events it committed, read back from the
    /// log with no gap; each event moved the points by what the game held when it was decided;
    /// the reply's balance is the game's.
    func checkCommit(_ reply: JSONValue, of request: SentRequest, expect: Int?) throws {
        let admin = clients["admin"]!
        let before = adminView
        let events = try admin.ok("events", ["after": .int(version), "limit": 1_000])["result"]?["events"]?.arrayValue ?? []
        let versions = events.map(\.versionNumber)
        check(versions == Array((version + 1)..<(version + 1 + events.count)), "event versions after \(version): \(versions)")
        check(reply.versionNumber == version + events.count, "the reply's version \(reply.versionNumber), the log \(version)+\(events.count)")
        check(!events.isEmpty || Self.mayCommitNothing.contains(request.op), "\(request.op) answered ok and committed nothing")
        check(expect == nil || expect == version, "a stale expect \(expect ?? -1) went through at \(version)")
        for event in events { account(event, before: before, request: request) }

        let state = try admin.ok("state")
        version = state.versionNumber
        adminView = state["result"]?["state"] ?? .null
        check(version == reply.versionNumber, "state is at \(version) after an ok at \(reply.versionNumber)")
        if let points = reply["result"]?["points"] {
            check(points == adminView["game"]?["points"], "the reply says \(points.serialized()) points, the game \(adminView["game"]?["points"]?.serialized() ?? "none")")
        }
    }

    /// Takes one event into the points ledger, checking its amount against the game it was
    /// decided on: a challenge's points, a reward's cost (nothing for a free force_unlock), the
    /// organizer's delta.
    func account(_ event: JSONValue, before: JSONValue, request: SentRequest) {
        let data = event["data"] ?? .null
        switch event["type"]?.stringValue {
        case "challenge_completed"?:
            let id = data["challenge"]?.stringValue ?? ""
            let points = data["points"]?.intValue ?? -1
            check(points == before["challenges"]?[id]?["points"]?.intValue, "\(id) completed for \(points) points")
            earned += points
        case "reward_unlocked"?:
            let id = data["reward"]?.stringValue ?? ""
            let cost = data["cost"]?.intValue ?? -1
            let free = request.op == "force_unlock" && request.arguments["deduct"] == false
            check(cost == (free ? 0 : before["rewards"]?[id]?["cost"]?.intValue), "\(id) unlocked for \(cost)")
            spent += cost
        case "points_adjusted"?:
            let delta = data["delta"]?.intValue ?? 0
            check(.int(delta) == request.arguments["delta"], "adjusted by \(delta)")
            if delta > 0 { earned += delta } else { spent -= delta }
        default:
            break
        }
    }

    /// After every step: the balance, the mirrors against fresh `state`s at the game's version,
    /// and what each subscriber may and may not see.
    func checkViews() throws {
        let game = adminView["game"] ?? .null
        let points = game["points"]?.intValue ?? -1
        check(points >= 0, "the balance is \(points)")
        check(game["earned"]?.intValue == earned && game["spent"]?.intValue == spent,
              "earned \(game["earned"]?.serialized() ?? "?") and spent \(game["spent"]?.serialized() ?? "?"), the events say \(earned) and \(spent)")
        check(points == earned - spent, "points \(points) is not earned \(earned) - spent \(spent)")

        for name in Self.subscribers {
            let client = clients[name]!
            // The state reply comes after every patch sent before it, so the mirror has caught up.
            let state = try client.ok("state")
            check(state.versionNumber == version, "\(name)'s state is at \(state.versionNumber), the game at \(version)")
            check(client.mirrorVersion == version, "\(name)'s mirror is at \(client.mirrorVersion), the game at \(version)")
            // Compared as canonical text too: byte for byte, whatever JSONValue's equality does.
            if client.mirror != state["result"]?["state"]
                || ViewDigest.of(client.mirror ?? .null) != ViewDigest.of(state["result"]?["state"] ?? .null) {
                let diff = JSONPatch.diff(client.mirror ?? .null, state["result"]?["state"] ?? .null).prefix(5).map { $0.json.serialized() }
                failures.append("\(place): \(name)'s mirror differs from its state: \(diff)")
            }
            check(client.mirror?["game"] == game, "\(name)'s game section differs from the admin console's")
            check(client.problems.isEmpty, "\(client.problems.prefix(3))")
        }
        checkMiaSeesNoSecrets(clients["mia"]!.mirror ?? .null)
        checkFriendView(clients["priya"]!.mirror ?? .null, of: "priya")
        for (id, reward) in clients["sam"]!.mirror?["rewards"]?.objectValue ?? [:] {
            check(reward["content"] != nil, "the organizer cannot read the content of \(id)")
        }
    }

    /// The birthday person never sees a locked gift's content, nor a dare before she found it.
    func checkMiaSeesNoSecrets(_ view: JSONValue) {
        for (id, reward) in view["rewards"]?.objectValue ?? [:] {
            check((reward["content"] != nil) == (reward["unlocked"] == true), "mia's view of \(id): \(reward.serialized())")
        }
        for (id, challenge) in view["challenges"]?.objectValue ?? [:] {
            let status = challenge["status"]?.stringValue ?? ""
            check(status == "open" || status == "completed", "mia sees \(id) as \(status)")
        }
    }

    /// A friend sees her own draft but no one else's, and a locked gift's content only when it
    /// is from her.
    func checkFriendView(_ view: JSONValue, of friend: String) {
        for (id, challenge) in view["challenges"]?.objectValue ?? [:] where challenge["status"] == "draft" {
            check(challenge["author"] == .string(friend), "\(friend) sees the draft \(id)")
        }
        for (id, reward) in view["rewards"]?.objectValue ?? [:] {
            let readable = reward["unlocked"] == true || reward["from_character"] == .string(friend)
            check((reward["content"] != nil) == readable, "\(friend)'s view of \(id): \(reward.serialized())")
        }
    }
}

extension RandomServerPlay {
    /// A keyed request as the test sent it, and the first `ok` it got: what a retry under the same
    /// key must get again.
    struct SentRequest {
        /// Who owns the key: a character or "admin" (a key belongs to an identity, not a connection).
        let identity: String
        let op: String
        /// The arguments, without `id`, `idem` and `expect`.
        let arguments: [String: JSONValue]
        let key: String
        var firstOK: JSONValue?
    }

    /// What happened over a run, for the test's "it really played" expectations.
    struct PlayStats {
        var commits = 0
        var refusals = 0
        var replays = 0
        var replaysAfterRestart = 0
        var mismatches = 0
        var stepsWithFewPoints = 0
        /// `ok` replies that were not replays, per op.
        var committed: [String: Int] = [:]
        /// Refusals per error code.
        var codes: [String: Int] = [:]

        var summary: String {
            "\(commits) ok, \(refusals) refused \(codes.sorted { $0.key < $1.key }), \(replays) replays (\(replaysAfterRestart) after restarts), "
                + "\(mismatches) mismatches, \(stepsWithFewPoints) steps under 50 points, ok per op \(committed.sorted { $0.key < $1.key })"
        }
    }
}
