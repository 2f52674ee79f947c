import Domain
import JSON
import Testing
import Views

@Suite struct ShippedSeedTests {
    @Test func itParsesAndHasNoProblems() throws {
        let content = try ShippedSeed.content()
        #expect(content.problems().isEmpty)
        #expect(content.title.isEmpty == false && content.day == 1)
    }

    @Test func fiveCharactersOneBirthdayOneOrganizerThreeFriends() throws {
        let characters = try ShippedSeed.content().characters
        #expect(characters.map(\.id) == ["mia", "sam", "priya", "theo", "dani"])
        #expect(characters.map(\.role) == [.birthday, .organizer, .friend, .friend, .friend])
        for character in characters {
            #expect(!character.tagline.isEmpty, "\(character.id) has a tagline")
            #expect((2...4).contains(character.funFacts.count), "\(character.id) has 2 to 4 fun facts")
        }
    }

    @Test func fifteenChallengesOverEveryCategoryAndDifficultyFourOfThemTwoInOne() throws {
        let challenges = try ShippedSeed.content().challenges
        #expect(challenges.map(\.id) == (1...15).map { $0 < 10 ? "c0\($0)" : "c\($0)" })
        #expect(Set(challenges.map(\.fields.category)) == Set(Category.allCases))
        #expect(Set(challenges.map(\.fields.difficulty)) == Set(Difficulty.allCases))
        #expect(challenges.count { $0.fields.optionB != nil } == 4)
        #expect(challenges.allSatisfy { (25...100).contains($0.fields.points) })
        #expect(challenges.count { $0.fields.points == 100 } == 1, "one especially hard challenge")
    }

    @Test func nineRewardsWithTieredCostsAndContent() throws {
        let rewards = try ShippedSeed.content().rewards
        #expect(rewards.map(\.id) == (1...9).map { "r0\($0)" })
        for reward in rewards {
            #expect(reward.fields.cost == reward.fields.type.defaultCost, "\(reward.id) costs the default of its type")
            #expect(reward.fields.content?.text?.isEmpty == false, "\(reward.id) has a text")
            if reward.fields.type != .text {
                #expect(reward.fields.content?.urls.isEmpty == false, "\(reward.id) links its media")
            }
        }
    }

    @Test func everyRewardCostsBetween60And70PercentOfAllChallengePoints() throws {
        let content = try ShippedSeed.content()
        let points = content.challenges.map(\.fields.points).reduce(0, +)
        let cost = content.rewards.map(\.fields.cost).reduce(0, +)
        #expect(cost * 100 >= points * 60 && cost * 100 <= points * 70, "rewards \(cost) of challenges \(points)")
    }

    @Test func decidingTheSeedGivesOneEventAndTheGame() throws {
        let (state, events) = try ShippedSeed.seededGame()
        #expect(events.map(\.type) == ["game_seeded"])
        #expect(state.challengesTotal == 15 && state.rewardsTotal == 9 && state.points == 0 && state.timeline.isEmpty)
        #expect(state.birthdayCharacter?.id == "mia")
    }
}

@Suite struct SeedValidationTests {
    static let file = "seed/birthdayquest.json"

    /// The error lines for the shipped seed with `ops` applied; fails the test if it still parses.
    func errors(_ ops: [PatchOp], sourceLocation: SourceLocation = #_sourceLocation) throws -> [String] {
        switch try ShippedSeed.parse(patchedWith: ops) {
        case .success:
            Issue.record("the broken seed was accepted", sourceLocation: sourceLocation)
            return []
        case .failure(let error):
            #expect(error.file == Self.file, sourceLocation: sourceLocation)
            let lines = error.description.split(separator: "\n").map(String.init)
            #expect(lines.allSatisfy { $0.hasPrefix("\(Self.file): ") }, "every line names the file", sourceLocation: sourceLocation)
            return lines
        }
    }

    /// A seed's links are held to what an organizer's `save_reward` takes, length included.
    @Test func aGiftLinkLongerThanAnEditTakesIsRefused() throws {
        let long = "https://example.com/" + String(repeating: "a", count: Limits.contentURL.upperBound)
        let lines = try errors([.replace(path: "/rewards/0/content", value: ["text": "x", "urls": .array([.string(long)])])])
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix("seed/birthdayquest.json: rewards[0].content.urls[0]: must be an http or https link") == true)
        #expect(lines.first?.contains("of at most 2000 characters") == true)
    }

    @Test func aNegativePointValueNamesFilePathAndValue() throws {
        #expect(try errors([.replace(path: "/challenges/3/points", value: -5)])
                == ["seed/birthdayquest.json: challenges[3].points: must be a positive integer, got -5"])
    }

    @Test func tooManyPointsAreRefusedByTheRangeRule() throws {
        #expect(try errors([.replace(path: "/challenges/0/points", value: 1_001)])
                == ["seed/birthdayquest.json: challenges[0].points: must be a positive integer up to 1000, got 1001"])
    }

    @Test func anUnknownFieldIsAnError() throws {
        #expect(try errors([.add(path: "/challenges/0/optoin_b", value: .null)])
                == ["seed/birthdayquest.json: challenges[0].optoin_b: unknown field"])
        #expect(try errors([.add(path: "/colour", value: "blue")]) == ["seed/birthdayquest.json: colour: unknown field"])
    }

    @Test func aMissingFieldIsAnError() throws {
        #expect(try errors([.remove(path: "/rewards/2/title")]) == ["seed/birthdayquest.json: rewards[2].title: is required"])
        #expect(try errors([.remove(path: "/format")]) == ["seed/birthdayquest.json: format: is required"])
    }

    /// docs/seed.md: `fun_facts` is required ("yes"); the parser treats a missing one as empty.
    @Test
    func missingFunFactsIsAnError() throws {
        #expect(try errors([.remove(path: "/characters/0/fun_facts")]) == ["seed/birthdayquest.json: characters[0].fun_facts: is required"])
    }

    @Test func aWrongTypeIsAnError() throws {
        #expect(try errors([.replace(path: "/characters/1/name", value: 5)])
                == ["seed/birthdayquest.json: characters[1].name: must be a string, got a number"])
        #expect(try errors([.replace(path: "/challenges/2/points", value: 2.5)])
                == ["seed/birthdayquest.json: challenges[2].points: must be a positive integer, got 2.5"])
        #expect(try errors([.replace(path: "/challenges/2/points", value: "50")])
                == ["seed/birthdayquest.json: challenges[2].points: must be a positive integer, got a string, \"50\""])
        #expect(try errors([.replace(path: "/rewards", value: ["r": 1])])
                == ["seed/birthdayquest.json: rewards: must be an array, got an object"])
    }

    @Test func anUnknownEnumValueListsTheAllowedOnes() throws {
        #expect(try errors([.replace(path: "/challenges/0/difficulty", value: "extreme")])
                == ["seed/birthdayquest.json: challenges[0].difficulty: must be one of easy, medium, hard, got \"extreme\""])
    }

    @Test func enumValuesAreTakenInAnyCase() throws {
        let parsed = try ShippedSeed.parse(patchedWith: [.replace(path: "/challenges/0/difficulty", value: "Easy"),
                                                        .replace(path: "/challenges/0/category", value: "SOCIAL"),
                                                        .replace(path: "/rewards/0/type", value: "Video")])
        let content = try parsed.get()
        #expect(content.challenges[0].fields.difficulty == .easy)
        #expect(content.challenges[0].fields.category == .social)
        #expect(content.rewards[0].fields.type == .video)
    }

    @Test func aDuplicateIdIsAnError() throws {
        #expect(try errors([.replace(path: "/challenges/5/id", value: "c01")])
                == ["seed/birthdayquest.json: challenges[5].id: duplicate id \"c01\""])
        #expect(try errors([.replace(path: "/rewards/1/id", value: "r01")])
                == ["seed/birthdayquest.json: rewards[1].id: duplicate id \"r01\""])
    }

    @Test func moreChallengesOrRewardsThanAGameHoldsAreAnError() throws {
        var content = try ShippedSeed.content()
        let challenge = content.challenges[0]
        content.challenges += (16...Limits.maxChallenges + 1).map { SeedChallenge(id: "c\($0)", fields: challenge.fields) }
        content.rewards += (10...Limits.maxRewards + 1).map { SeedReward(id: "r\($0)", fields: content.rewards[0].fields) }
        #expect(content.problems().map(\.description) == ["challenges: must hold at most 100 challenges, got 101",
                                                          "rewards: must hold at most 100 rewards, got 101"])
        content.challenges.removeLast()
        content.rewards.removeLast()
        #expect(content.problems().isEmpty, "exactly as many as a game holds is fine")
    }

    @Test func twoBirthdayCharactersAreAnError() throws {
        // Theo gives r05, so a birthday Theo also breaks that reward's giver.
        let lines = try errors([.replace(path: "/characters/3/role", value: "birthday")])
        #expect(lines.contains("seed/birthdayquest.json: characters: must have exactly one birthday, got 2 (mia, theo)"))
        #expect(lines.contains("seed/birthdayquest.json: rewards[4].from_character: a gift cannot come from the birthday person"))
    }

    @Test func anUnknownGiverIsAnError() throws {
        #expect(try errors([.replace(path: "/rewards/0/from_character", value: "sammy")])
                == ["seed/birthdayquest.json: rewards[0].from_character: no character with id \"sammy\""])
    }

    @Test func everyProblemIsReportedNotOnlyTheFirst() throws {
        let lines = try errors([.replace(path: "/challenges/3/points", value: -5), .remove(path: "/rewards/2/title"),
                                .add(path: "/game/colour", value: "blue")])
        #expect(lines.count == 3)
    }

    @Test func aBadIdOrPinIsAnError() throws {
        #expect(try errors([.replace(path: "/challenges/0/id", value: "dare-x")]).first?.contains("challenges[0].id") == true)
        #expect(try errors([.replace(path: "/characters/0/id", value: "Mia!")]).contains {
            $0.hasPrefix("seed/birthdayquest.json: characters[0].id: must match")
        })
        #expect(try errors([.replace(path: "/characters/0/pin", value: "12a4")]) == ["seed/birthdayquest.json: characters[0].pin: must be 4 to 8 digits"])
    }
}
