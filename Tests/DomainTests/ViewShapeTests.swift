import Domain
import JSON
import Testing
import Views

/// PROTOCOL.md "View shape", field by field, from the real seed and real commands.
@Suite struct ViewShapeTests {
    /// Mia and Sam claimed; Priya's dare delivered and found; Dani's delivered and hidden;
    /// Theo's a draft; c01 done as option b with a photo; r02 unlocked; c15 forced.
    static func playedGame() throws -> GameState {
        try Scenario.shipped()
            .after(.system, .claim(character: "mia", device: "mia-phone", pin: nil, tokenHash: "hm"))
            .after(.system, .claim(character: "sam", device: "sam-phone", pin: nil, tokenHash: "hs"))
            .after(priya, .saveSecret(title: "Duck song", description: "Sing to the ducks", points: 50))
            .after(priya, .deliverSecret)
            .after(mia, .discoverSecrets)
            .after(dani, .saveSecret(title: "Jetty run", description: "Run to the jetty", points: 25))
            .after(dani, .deliverSecret)
            .after(theo, .saveSecret(title: "Draft", description: "Not ready", points: 75))
            .after(mia, .completeChallenge(challenge: "c01", proof: .photo(url: "https://example.com/swim.jpg"), option: .b))
            .after(mia, .unlockReward(reward: "r02"))
            .after(sam, .forceComplete(challenge: "c15"))
            .state
    }

    static let viewers: [Viewer] = [.character("mia"), .character("priya"), .character("theo"), .character("sam"), .admin]

    @Test(arguments: viewers)
    func topLevelMeAndGameHaveExactlyTheDocumentedFields(viewer: Viewer) throws {
        let state = try Self.playedGame()
        let view = try #require(Views.view(state, for: viewer).objectValue)
        #expect(Set(view.keys) == ["me", "game", "characters", "challenges", "rewards", "timeline"])

        let me = try #require(view["me"]?.objectValue)
        switch viewer {
        case .admin: #expect(me == ["character": .null, "role": "admin"])
        case .character(let id): #expect(me == ["character": .string(id), "role": .string(state.characters[id]!.role.rawValue)])
        }

        let game = try #require(view["game"]?.objectValue)
        let ints = ["day", "points", "earned", "spent", "challenges_completed", "challenges_total", "secrets_hidden",
                    "secrets_found", "secrets_completed", "rewards_unlocked", "rewards_total"]
        #expect(Set(game.keys) == Set(ints + ["title", "final_badge", "final_badge_at"]))
        #expect(game.count == 14)
        for key in ints { #expect(game[key]?.intValue != nil, "game.\(key) is an integer") }
        #expect(game["title"]?.stringValue == "Mia's 30th: BirthdayQuest")
        #expect(game["final_badge"] == false && game["final_badge_at"] == .null)
        // Priya's dare found and counted; Dani's hidden; Theo's draft counted nowhere.
        #expect(game["challenges_total"] == 16 && game["challenges_completed"] == 2)
        #expect(game["secrets_hidden"] == 1 && game["secrets_found"] == 1 && game["secrets_completed"] == 0)
        #expect(game["points"] == 125 && game["earned"] == 175 && game["spent"] == 50)
        #expect(game["rewards_unlocked"] == 1 && game["rewards_total"] == 9)
    }

    @Test func theGameSectionIsTheSameForEveryViewer() throws {
        let state = try Self.playedGame()
        let games = Self.viewers.map { Views.view(state, for: $0)["game"] }
        #expect(Set(games).count == 1)
    }

    @Test(arguments: viewers)
    func charactersHaveExactlyTheDocumentedFields(viewer: Viewer) throws {
        let state = try Self.playedGame()
        let characters = try #require(Views.view(state, for: viewer)["characters"]?.objectValue)
        #expect(Set(characters.keys) == ["mia", "sam", "priya", "theo", "dani"])
        for (id, entry) in characters {
            let fields = try #require(entry.objectValue)
            #expect(Set(fields.keys) == ["name", "role", "tagline", "fun_facts", "claimed"], "characters.\(id)")
            #expect(fields["name"]?.stringValue != nil && fields["tagline"]?.stringValue != nil)
            #expect(Role(rawValue: fields["role"]?.stringValue ?? "") != nil)
            #expect(fields["fun_facts"]?.arrayValue?.allSatisfy { $0.stringValue != nil } == true)
            #expect(fields["claimed"] == .bool(id == "mia" || id == "sam"))
        }
        // No PIN, device or token ever leaves the server.
        #expect(!Views.view(state, for: viewer).serialized().contains("4821"))
    }

    @Test(arguments: viewers)
    func challengesHaveExactlyTheDocumentedFieldsAndTypes(viewer: Viewer) throws {
        let state = try Self.playedGame()
        let challenges = try #require(Views.view(state, for: viewer)["challenges"]?.objectValue)
        for (id, entry) in challenges {
            let fields = try #require(entry.objectValue)
            #expect(Set(fields.keys) == ["title", "description", "option_b", "points", "difficulty", "category", "secret", "author",
                                         "status", "completed_at", "option", "proof", "forced"], "challenges.\(id)")
            #expect(fields["title"]?.stringValue != nil && fields["description"]?.stringValue != nil && fields["points"]?.intValue != nil)
            #expect(fields["option_b"] == .null || Set(fields["option_b"]?.objectValue.map { Array($0.keys) } ?? []) == ["title", "description"])
            let secret = try #require(fields["secret"]?.boolValue as Bool?)
            if secret {
                #expect(fields["difficulty"] == .null && fields["category"] == .null && fields["author"]?.stringValue != nil, "dare \(id)")
            } else {
                #expect(Difficulty(rawValue: fields["difficulty"]?.stringValue ?? "") != nil, "challenges.\(id).difficulty")
                #expect(Category(rawValue: fields["category"]?.stringValue ?? "") != nil, "challenges.\(id).category")
                #expect(fields["author"] == .null)
            }
            let status = try #require(fields["status"]?.stringValue)
            #expect(["open", "completed", "draft", "delivered"].contains(status))
            #expect(fields["forced"]?.boolValue != nil)
            if status == "completed" {
                #expect(isTimestamp(fields["completed_at"]), "challenges.\(id).completed_at")
                #expect(["a", "b"].contains(fields["option"]?.stringValue ?? ""))
            } else {
                #expect(fields["completed_at"] == .null && fields["option"] == .null && fields["proof"] == .null && fields["forced"] == false)
            }
        }
        let c01 = challenges["c01"]
        #expect(c01?["status"] == "completed" && c01?["option"] == "b" && c01?["forced"] == false)
        #expect(c01?["proof"] == ["kind": "photo", "url": "https://example.com/swim.jpg"])
        #expect(c01?["option_b"]?["title"]?.stringValue != nil)
        let c15 = challenges["c15"]
        #expect(c15?["status"] == "completed" && c15?["forced"] == true && c15?["proof"] == .null && c15?["option"] == "a")
        let dare = try #require(challenges["dare-priya"])
        #expect(dare["secret"] == true && dare["author"] == "priya" && dare["status"] == "open" && dare["points"] == 50)
        #expect(dare["title"] == "Duck song" && dare["option_b"] == .null)
    }

    @Test func whoSeesWhichDare() throws {
        let state = try Self.playedGame()
        func dares(_ viewer: Viewer) -> [String: String] {
            let challenges = Views.view(state, for: viewer)["challenges"]?.objectValue ?? [:]
            return challenges.filter { $0.value["secret"] == true }.mapValues { $0["status"]?.stringValue ?? "?" }
        }
        #expect(dares(.character("mia")) == ["dare-priya": "open"])
        #expect(dares(.character("priya")) == ["dare-priya": "open", "dare-dani": "delivered"])
        #expect(dares(.character("theo")) == ["dare-priya": "open", "dare-dani": "delivered", "dare-theo": "draft"])
        #expect(dares(.character("dani")) == ["dare-priya": "open", "dare-dani": "delivered"])
        #expect(dares(.character("sam")) == ["dare-priya": "open", "dare-dani": "delivered", "dare-theo": "draft"])
        #expect(dares(.admin) == dares(.character("sam")))
    }

    @Test(arguments: viewers)
    func rewardsHaveExactlyTheDocumentedFieldsAndContentOnlyWhenReadable(viewer: Viewer) throws {
        let state = try Self.playedGame()
        let rewards = try #require(Views.view(state, for: viewer)["rewards"]?.objectValue)
        #expect(Set(rewards.keys) == Set((1...9).map { "r0\($0)" }))
        let base: Set<String> = ["from", "from_character", "title", "teaser", "type", "cost", "order", "unlocked", "unlocked_at"]
        for (id, entry) in rewards {
            let fields = try #require(entry.objectValue)
            let keys = Set(fields.keys)
            #expect(keys == base || keys == base.union(["content"]), "rewards.\(id)")
            #expect(fields["from"]?.stringValue != nil && fields["title"]?.stringValue != nil && fields["teaser"]?.stringValue != nil)
            #expect(fields["from_character"] == .null || fields["from_character"]?.stringValue != nil)
            #expect(RewardType(rawValue: fields["type"]?.stringValue ?? "") != nil && fields["cost"]?.intValue != nil)
            #expect(fields["order"]?.intValue == state.rewards[id].map { $0.order + 1 })
            let unlocked = try #require(fields["unlocked"]?.boolValue as Bool?)
            #expect(unlocked ? isTimestamp(fields["unlocked_at"]) : fields["unlocked_at"] == .null)

            let readable: Bool
            switch viewer {
            case .admin: readable = true
            case .character(let who):
                readable = unlocked || who == "sam" || fields["from_character"] == .string(who)
            }
            #expect(keys.contains("content") == readable, "rewards.\(id).content for \(viewer)")
            if let content = fields["content"]?.objectValue {
                #expect(Set(content.keys) == ["text", "urls"])
                #expect(content["text"]?.stringValue != nil, "a string, as PROTOCOL.md shows it")
                #expect(content["urls"]?.arrayValue?.allSatisfy { $0.stringValue != nil } == true)
            }
        }
        #expect(rewards["r01"]?["order"] == 1 && rewards["r09"]?["order"] == 9)
    }

    @Test(arguments: viewers)
    func timelineEntriesHaveExactlyTheDocumentedFields(viewer: Viewer) throws {
        let state = try Self.playedGame()
        let timeline = try #require(Views.view(state, for: viewer)["timeline"]?.arrayValue)
        #expect(timeline.map { $0["kind"]?.stringValue ?? "" } == ["secret_discovered", "challenge_completed", "reward_unlocked", "challenge_completed"])
        for (index, entry) in timeline.enumerated() {
            let fields = try #require(entry.objectValue)
            #expect(Set(fields.keys) == ["seq", "at", "kind", "ref", "title", "subtitle", "from"])
            #expect(fields["seq"]?.intValue == index + 1)
            #expect(isTimestamp(fields["at"]))
            #expect(fields["ref"]?.stringValue != nil && fields["title"]?.stringValue != nil && fields["subtitle"]?.stringValue != nil)
        }
        #expect(timeline[0]["from"] == "Priya" && timeline[0]["ref"] == "dare-priya")
        #expect(timeline[1]["subtitle"] == "+75 ✦" && timeline[1]["from"] == .null && timeline[1]["ref"] == "c01")
        #expect(timeline[2]["subtitle"] == "-50 ✦" && timeline[2]["from"] == .string(state.rewards["r02"]!.from))
        #expect(timeline[3]["subtitle"] == "+100 ✦")
    }

    @Test func theFinalBadgeShowsItsTimeAndItsTimelineEntryHasNoRef() throws {
        let after = try Scenario.shipped().after(sam, .triggerFinalBadge)
        let view = Views.view(after.state, for: .character("mia"))
        #expect(view["game"]?["final_badge"] == true)
        #expect(view["game"]?["final_badge_at"] == .string(formatTimestamp(after.now)))
        #expect(view["timeline"]?[0]?["kind"] == "final_badge" && view["timeline"]?[0]?["ref"] == .null)
    }
}

/// RFC 3339 UTC with milliseconds, exactly: `2026-11-21T18:02:11.345Z`.
func isTimestamp(_ value: JSONValue?) -> Bool {
    guard let text = value?.stringValue else { return false }
    return text.wholeMatch(of: #/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z/#) != nil
}

@Suite struct TimestampTests {
    @Test(arguments: [
        (Millis(0), "1970-01-01T00:00:00.000Z"),
        (-1, "1969-12-31T23:59:59.999Z"),
        (951_782_400_000, "2000-02-29T00:00:00.000Z"),
        (1_709_251_199_999, "2024-02-29T23:59:59.999Z"),
        (1_795_284_131_345, "2026-11-21T18:02:11.345Z"),
        (946_684_799_000, "1999-12-31T23:59:59.000Z"),
        (4_107_542_400_000, "2100-03-01T00:00:00.000Z"),
    ])
    func knownDates(millis: Millis, text: String) {
        #expect(formatTimestamp(millis) == text)
        #expect(isTimestamp(.string(formatTimestamp(millis))))
    }

    @Test func theDayAfterALeapDayIsTheFirstOfMarch() {
        #expect(formatTimestamp(951_782_400_000 + 86_400_000) == "2000-03-01T00:00:00.000Z")
        // 1900 and 2100 are not leap years: no February 29th.
        #expect(formatTimestamp(4_107_542_400_000 - 86_400_000) == "2100-02-28T00:00:00.000Z")
    }
}
