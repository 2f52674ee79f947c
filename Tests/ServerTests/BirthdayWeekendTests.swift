import Foundation
import JSON
import Testing

/// The whole weekend, played by five claimed characters and the admin console, each
/// connection subscribed. After every step each mirror (snapshot plus patches) must equal
/// that connection's `state`, and Mia's connection must never carry a locked reward's content.
@Suite struct BirthdayWeekendTests {
    final class Party {
        let server: ServerHarness
        var clients: [String: TestClient] = [:]
        var order: [String] = []
        /// Every string inside each reward's content, as the admin console sees it.
        var contentStrings: [String: Set<String>] = [:]
        var leaks: [String] = []

        init(server: ServerHarness) { self.server = server }

        subscript(name: String) -> TestClient { clients[name]! }

        func add(_ name: String) throws -> TestClient {
            let client = try server.connect()
            client.label = name
            clients[name] = client
            order.append(name)
            return client
        }

        func checkAll(_ step: String) throws {
            for name in order { try clients[name]!.checkMirror(step: step) }
            try checkHiddenContent(step)
        }

        var problems: [String] { order.flatMap { clients[$0]!.problems } + leaks }

        func view(_ name: String) -> JSONValue { clients[name]!.mirror ?? .null }

        /// In Mia's mirror a locked reward has no `content` key at all.
        func checkHiddenContent(_ step: String) throws {
            for (id, reward) in view("mia")["rewards"]?.objectValue ?? [:] where reward["unlocked"] == .bool(false) {
                if reward["content"] != nil { leaks.append("\(step): mia's view of locked \(id) has content") }
            }
        }

        /// Watches every line Mia's connection receives for the content of rewards still locked
        /// after that line (an unlock's own patch may carry its content).
        func watchMia() {
            let contents = contentStrings
            self["mia"].observer = { [unowned self] message, client in
                let stateInMessage = message["result"]?["state"] ?? client.mirror
                let rewards = stateInMessage?["rewards"]?.objectValue ?? [:]
                let strings = Set(message.allStrings)
                for (id, secret) in contents where rewards[id]?["unlocked"] != .bool(true) {
                    if !strings.isDisjoint(with: secret) {
                        self.leaks.append("mia received content of locked \(id): \(message.serialized().prefix(200))")
                    }
                }
            }
        }
    }

    @Test func wholeWeekend() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        let party = Party(server: server)

        // The admin console comes first and learns every reward's content.
        let admin = try party.add("admin")
        try admin.ok("admin", ["key": .string(ServerHarness.adminKey)])
        try admin.subscribe()
        for (id, reward) in admin.mirror?["rewards"]?.objectValue ?? [:] {
            let strings = Set((reward["content"]?.allStrings ?? []).filter { $0.count >= 8 })
            #expect(!strings.isEmpty, "seed reward \(id) has content")
            party.contentStrings[id] = strings
        }
        #expect(party.contentStrings.count == 9)

        // Claims: everyone signs in on their own phone and subscribes.
        let listed = try admin.ok("characters")["result"]?["characters"]?.arrayValue ?? []
        #expect(listed.count == 5)
        #expect(listed.allSatisfy { $0["claimed"] == .bool(false) })
        for (name, role) in [("mia", "birthday"), ("sam", "organizer"), ("priya", "friend"), ("theo", "friend"), ("dani", "friend")] {
            let client = try party.add(name)
            if name == "mia" { client.recordsLines = true }
            let claimed = try client.ok("claim", ["character": .string(name), "device": .string("phone-\(name)")])
            #expect(claimed["result"]?["role"] == .string(role))
            #expect((claimed["result"]?["token"]?.stringValue?.count ?? 0) >= 22)
            try client.subscribe()
            if name == "mia" { party.watchMia() }
            try party.checkAll("claim \(name)")
        }
        let mia = party["mia"], sam = party["sam"], priya = party["priya"], theo = party["theo"], dani = party["dani"]
        #expect(try mia.refusal("claim", ["character": "mia", "device": "another-phone"]) == "already_claimed")
        #expect(party.view("admin")["characters"]?["mia"]?["claimed"] == .bool(true))

        // Dares: drafted, edited, delivered.
        func dare(_ client: TestClient, _ title: String, _ points: Int) throws -> String {
            let reply = try client.ok("save_secret", ["title": .string(title), "description": .string("\(title): described"), "points": .int(points)])
            return try #require(reply["result"]?["challenge"]?.stringValue)
        }
        let priyaDare = try dare(priya, "Priya's first idea", 50)
        try party.checkAll("priya drafts")
        #expect(party.view("priya")["challenges"]?[priyaDare]?["status"] == .string("draft"))
        #expect(party.view("sam")["challenges"]?[priyaDare] != nil, "the organizer reads drafts")
        #expect(party.view("admin")["challenges"]?[priyaDare] != nil)
        #expect(party.view("theo")["challenges"]?[priyaDare] == nil, "another friend does not see a draft")
        #expect(party.view("mia")["challenges"]?[priyaDare] == nil)

        #expect(try dare(priya, "Priya's better idea", 75) == priyaDare, "a draft is edited, not duplicated")
        try party.checkAll("priya edits")
        #expect(party.view("priya")["challenges"]?[priyaDare]?["title"] == .string("Priya's better idea"))
        #expect(party.view("priya")["challenges"]?[priyaDare]?["points"] == .int(75))

        let theoDare = try dare(theo, "Theo's dare", 25)
        let daniDare = try dare(dani, "Dani's dare", 50)
        let samDare = try dare(sam, "Sam's dare", 100)
        try party.checkAll("more drafts")

        for client in [priya, theo, dani] {
            try client.ok("deliver_secret")
            try party.checkAll("\(client.label) delivers")
        }
        #expect(try priya.refusal("save_secret", ["title": "Too late", "description": "x", "points": 25]) == "secret_locked")
        #expect(try priya.refusal("deliver_secret") == "secret_locked")
        #expect(party.view("theo")["challenges"]?[priyaDare]?["status"] == .string("delivered"))
        #expect(party.view("theo")["challenges"]?[samDare] == nil, "Sam's dare is still a draft")
        #expect(party.view("mia")["challenges"]?[priyaDare] == nil, "delivered dares stay hidden from Mia")
        #expect(party.view("mia")["game"]?["secrets_hidden"] == .int(3))
        try party.checkAll("deliveries")

        // Discovery.
        #expect(try mia.ok("discover_secrets")["result"]?["found"] == .int(3))
        try party.checkAll("mia discovers")
        let before = try mia.ok("ping")["version"]
        let again = try mia.ok("discover_secrets")
        #expect(again["result"]?["found"] == .int(0))
        #expect(again["version"] == before, "finding nothing commits nothing")
        for id in [priyaDare, theoDare, daniDare] {
            #expect(party.view("mia")["challenges"]?[id]?["status"] == .string("open"))
        }
        #expect(party.view("mia")["challenges"]?[samDare] == nil)
        try sam.ok("deliver_secret")
        try party.checkAll("sam delivers")
        #expect(try mia.ok("discover_secrets")["result"]?["found"] == .int(1))
        try party.checkAll("mia discovers sam's dare")
        #expect(party.view("mia")["game"]?["secrets_found"] == .int(4))
        #expect(party.view("mia")["game"]?["secrets_hidden"] == .int(0))

        // Refusals change nothing.
        #expect(try mia.refusal("unlock_reward", ["reward": "r04"]) == "insufficient_points")
        #expect(try priya.refusal("complete_challenge", ["challenge": "c02", "proof": ["kind": "done"]]) == "forbidden")
        #expect(try mia.refusal("complete_challenge", ["challenge": "c99", "proof": ["kind": "done"]]) == "not_found")
        #expect(try mia.refusal("complete_challenge", ["challenge": "c02", "proof": ["kind": "done"], "option": "b"]) == "bad_request")
        try party.checkAll("refusals")
        #expect(party.view("mia")["game"]?["points"] == .int(0))

        // Challenges with every proof kind and option b, unlocking rewards as points allow.
        let proofs: [JSONValue] = [
            ["kind": "photo", "url": "https://example.com/lake.jpg"],
            ["kind": "text", "text": "Did it, and Theo filmed it."],
            ["kind": "done"],
        ]
        var completions: [(String, String?)] = [("c01", "b"), ("c02", nil), ("c03", "a"), ("c07", "b"), ("c14", "b"), ("c15", "b"),
                                                (priyaDare, nil), (theoDare, nil), (daniDare, nil), (samDare, nil)]
        completions += ["c04", "c05", "c06", "c08", "c09", "c10", "c11", "c12", "c13"].map { ($0, nil) }
        var rewardsLeft = (1...9).map { String(format: "r%02d", $0) }
        let costs = party.view("admin")["rewards"]?.objectValue?.mapValues { $0["cost"]?.intValue ?? 0 } ?? [:]
        for (index, (challenge, option)) in completions.enumerated() {
            var args: [String: JSONValue] = ["challenge": .string(challenge), "proof": proofs[index % proofs.count]]
            if let option { args["option"] = .string(option) }
            let done = try mia.ok("complete_challenge", args)
            try party.checkAll("complete \(challenge)")
            let entry = party.view("theo")["challenges"]?[challenge]
            #expect(entry?["status"] == .string("completed"))
            #expect(entry?["option"] == .string(option ?? "a"))
            #expect(entry?["proof"] == proofs[index % proofs.count])
            var points = done["result"]?["points"]?.intValue ?? 0
            while let next = rewardsLeft.first, points >= costs[next, default: .max] {
                // Theo only reads another giver's gift once it is unlocked.
                if next == "r01" { #expect(party.view("theo")["rewards"]?["r01"]?["content"] == nil) }
                let unlocked = try mia.ok("unlock_reward", ["reward": .string(next)])
                rewardsLeft.removeFirst()
                points = unlocked["result"]?["points"]?.intValue ?? -1
                #expect(unlocked["result"]?["final_badge"] == .bool(rewardsLeft.isEmpty))
                try party.checkAll("unlock \(next)")
                #expect(party.view("mia")["rewards"]?[next]?["content"] != nil, "an unlocked gift is readable")
                if next == "r01" { #expect(party.view("theo")["rewards"]?["r01"]?["content"] != nil) }
            }
            if index == 1 {
                #expect(try mia.refusal("complete_challenge", ["challenge": "c02", "proof": ["kind": "done"]]) == "already_completed")
                #expect(party.view("theo")["rewards"]?["r05"]?["content"] != nil, "a giver always reads their own gift")
            }
        }
        #expect(rewardsLeft.isEmpty, "the weekend's points cover every reward")
        #expect(try mia.refusal("unlock_reward", ["reward": "r01"]) == "already_unlocked")
        #expect(try sam.refusal("trigger_final_badge") == "already_unlocked")
        try sam.ok("set_day", ["day": 2])
        try party.checkAll("set day")

        let game = try #require(party.view("mia")["game"])
        #expect(game["final_badge"] == .bool(true))
        #expect(game["final_badge_at"]?.stringValue != nil)
        #expect(game["rewards_unlocked"] == .int(9))
        #expect(game["challenges_completed"] == .int(19))
        #expect(game["challenges_total"] == .int(19))
        #expect(game["secrets_completed"] == .int(4))
        #expect(game["day"] == .int(2))
        #expect(game["points"]?.intValue == (game["earned"]?.intValue ?? 0) - (game["spent"]?.intValue ?? 0))
        let timeline = party.view("mia")["timeline"]?.arrayValue ?? []
        #expect(timeline.filter { $0["kind"] == .string("final_badge") }.count == 1)
        #expect(timeline.filter { $0["kind"] == .string("reward_unlocked") }.count == 9)
        #expect(timeline.filter { $0["kind"] == .string("secret_discovered") }.count == 4)

        #expect(mia.lines.count > 50)
        // The scan is not vacuous: unlocked gifts' content did reach Mia's connection.
        let seen = Set(mia.lines.flatMap { $0.message.allStrings })
        #expect(party.contentStrings.values.allSatisfy { !seen.isDisjoint(with: $0) })
        #expect(party.problems == [])
        try server.stop()
    }
}
