import Foundation
import JSON
import Testing

/// The organizer's and admin's operations over the wire, the reads with paging, and
/// `unsubscribe`: what the weekend walk-through does not reach.
@Suite struct OperationsTests {
    /// A fresh server with mia (birthday), sam (organizer), priya (friend) and the admin signed in.
    final class Cast {
        let dir: TempDirectory
        let server: ServerHarness
        let admin: TestClient
        let mia: TestClient
        let sam: TestClient
        let priya: TestClient

        init() throws {
            dir = try TempDirectory()
            server = try ServerHarness(dataDirectory: dir.path)
            admin = try server.connect()
            admin.label = "admin"
            try admin.signInAsAdmin()
            mia = try server.connect()
            mia.label = "mia"
            try mia.ok("claim", ["character": "mia", "device": "mia-phone"])
            sam = try server.connect()
            sam.label = "sam"
            try sam.ok("claim", ["character": "sam", "device": "sam-phone"])
            priya = try server.connect()
            priya.label = "priya"
            try priya.ok("claim", ["character": "priya", "device": "priya-phone"])
        }

        var all: [TestClient] { [admin, mia, sam, priya] }

        func state() throws -> JSONValue { try admin.ok("state")["result"]?["state"] ?? .null }

        func close() {
            try? server.stop()
            dir.remove()
        }
    }

    static let done: JSONValue = ["kind": "done"]

    /// A `bad_request` about one field names it apart from the message, whether the decoder or
    /// the rules found the fault; other refusals name none.
    @Test func aRefusedFieldIsNamedForPrograms() throws {
        let cast = try Cast()
        defer { cast.close() }
        let wrongType = try cast.mia.call("unlock_reward", ["reward": 7])
        #expect(wrongType["error"]?["field"] == "reward", "\(wrongType.serialized())")
        let noOptionB = try cast.mia.call("complete_challenge", ["challenge": "c02", "proof": Self.done, "option": "b"])
        #expect(noOptionB["error"]?["code"] == "bad_request" && noOptionB["error"]?["field"] == "option", "\(noOptionB.serialized())")
        let unaffordable = try cast.mia.call("unlock_reward", ["reward": "r01"])
        #expect(unaffordable.errorCode == "insufficient_points" && unaffordable["error"]?["field"] == nil, "\(unaffordable.serialized())")
    }

    @Test func timelinePagesByAfterAndLimit() throws {
        let cast = try Cast()
        defer { cast.close() }
        for challenge in ["c02", "c06", "c13", "c14", "c04"] {
            try cast.mia.ok("complete_challenge", ["challenge": .string(challenge), "proof": Self.done])
        }
        let all = try cast.mia.ok("timeline")["result"]?["entries"]?.arrayValue ?? []
        #expect(all.compactMap { $0["seq"]?.intValue } == [1, 2, 3, 4, 5])
        #expect(all.compactMap { $0["ref"]?.stringValue } == ["c02", "c06", "c13", "c14", "c04"])
        #expect(all.first?["subtitle"] == "+35 ✦")

        let page = try cast.priya.ok("timeline", ["after": 2, "limit": 2])["result"]?["entries"]?.arrayValue ?? []
        #expect(page.compactMap { $0["seq"]?.intValue } == [3, 4])
        let rest = try cast.priya.ok("timeline", ["after": 4, "limit": 500])["result"]?["entries"]?.arrayValue ?? []
        #expect(rest.compactMap { $0["seq"]?.intValue } == [5])
        #expect(try cast.priya.ok("timeline", ["after": 5])["result"]?["entries"] == [])
        #expect(try cast.priya.ok("timeline", ["after": 999])["result"]?["entries"] == [])
        // The timeline op and the view's timeline agree.
        #expect(try cast.mia.ok("state")["result"]?["state"]?["timeline"]?.arrayValue == all)

        for bad: [String: JSONValue] in [["limit": 501], ["limit": 0], ["after": -1], ["limit": "ten"]] {
            let reply = try cast.priya.call("timeline", bad)
            #expect(reply.errorCode == "bad_request", "\(bad)")
        }
        let stranger = try cast.server.connect()
        #expect(try stranger.refusal("timeline") == "unauthenticated")
    }

    @Test func eventsAreForTheOrganizerAndAdminOnly() throws {
        let cast = try Cast()
        defer { cast.close() }
        try cast.mia.ok("complete_challenge", ["challenge": "c02", "proof": ["kind": "text", "text": "did it"]])
        let version = try cast.admin.currentVersion()

        #expect(try cast.priya.refusal("events") == "forbidden")
        #expect(try cast.mia.refusal("events") == "forbidden")
        #expect(try cast.server.connect().refusal("events") == "unauthenticated")

        let bySam = try cast.sam.ok("events", ["limit": 1000])
        let byAdmin = try cast.admin.ok("events", ["limit": 1000])
        #expect(bySam["result"] == byAdmin["result"])
        let events = byAdmin["result"]?["events"]?.arrayValue ?? []
        #expect(events.map(\.versionNumber) == Array(1...version))
        for event in events {
            #expect(event["type"]?.stringValue?.isEmpty == false)
            #expect(event["actor"]?.stringValue?.isEmpty == false)
            #expect(event["at"]?.stringValue?.hasSuffix("Z") == true)
            #expect(event["data"]?.objectValue != nil, "\(event.serialized())")
            #expect(event["data"]?["tokenHash"] == nil, "token hashes stay in the log: \(event.serialized())")
        }
        let claims = events.filter { $0["type"] == "character_claimed" }
        #expect(claims.count == 3)
        #expect(claims.first?["data"]?["character"] == "mia")
        let completion = try #require(events.last)
        #expect(completion["data"]?["challenge"] == "c02")
        #expect(completion["actor"] == "mia")

        let page = try cast.sam.ok("events", ["after": 1, "limit": 2])["result"]?["events"]?.arrayValue ?? []
        #expect(page.map(\.versionNumber) == [2, 3])
        #expect(try cast.sam.ok("events", ["after": .int(version)])["result"]?["events"] == [])
        for bad: [String: JSONValue] in [["limit": 1001], ["limit": 0], ["after": -1]] {
            #expect(try cast.sam.call("events", bad).errorCode == "bad_request", "\(bad)")
        }
    }

    @Test func forceCompleteAndForceUnlock() throws {
        let cast = try Cast()
        defer { cast.close() }
        try cast.mia.subscribe()
        #expect(try cast.priya.refusal("force_complete", ["challenge": "c01"]) == "forbidden")
        #expect(try cast.mia.refusal("force_complete", ["challenge": "c01"]) == "forbidden")

        let forced = try cast.sam.ok("force_complete", ["challenge": "c01"])
        #expect(forced["result"] == ["points": 75])
        let c01 = try cast.state()["challenges"]?["c01"]
        #expect(c01?["status"] == "completed")
        #expect(c01?["forced"] == true)
        #expect(try cast.admin.refusal("force_complete", ["challenge": "c01"]) == "already_completed")
        #expect(try cast.admin.refusal("force_complete", ["challenge": "c99"]) == "not_found")

        // Without deduction the points stay; with it they go, never below zero.
        let free = try cast.admin.ok("force_unlock", ["reward": "r04", "deduct": false])
        #expect(free["result"] == ["points": 75, "final_badge": false])
        #expect(try cast.state()["timeline"]?.arrayValue?.last?["subtitle"] == "free")
        let before = try cast.admin.currentVersion()
        #expect(try cast.sam.refusal("force_unlock", ["reward": "r06", "deduct": true]) == "insufficient_points")
        #expect(try cast.admin.currentVersion() == before, "a refusal commits nothing")
        let paid = try cast.sam.ok("force_unlock", ["reward": "r02", "deduct": true])
        #expect(paid["result"] == ["points": 25, "final_badge": false])
        #expect(try cast.state()["rewards"]?["r02"]?["unlocked"] == true)
        #expect(try cast.admin.refusal("force_unlock", ["reward": "r02", "deduct": false]) == "already_unlocked")
        #expect(try cast.admin.refusal("force_unlock", ["reward": "r99", "deduct": false]) == "not_found")
        #expect(try cast.admin.call("force_unlock", ["reward": "r03"]).errorCode == "bad_request", "deduct is required")
        #expect(try cast.priya.refusal("force_unlock", ["reward": "r03", "deduct": false]) == "forbidden")

        // The unlock of the last locked reward brings the badge in the same commit.
        let remaining = ["r01", "r03", "r05", "r06", "r07", "r08", "r09"]
        for reward in remaining.dropLast() {
            try cast.admin.ok("force_unlock", ["reward": .string(reward), "deduct": false])
        }
        let versionBeforeLast = try cast.admin.currentVersion()
        let last = try cast.admin.ok("force_unlock", ["reward": "r09", "deduct": false])
        #expect(last["result"]?["final_badge"] == true)
        #expect(last.versionNumber == versionBeforeLast + 2, "the unlock and the badge: two events")
        #expect(try cast.admin.refusal("trigger_final_badge") == "already_unlocked")
        try cast.mia.checkMirror(step: "after every unlock")
        #expect(cast.mia.mirror?["game"]?["final_badge"] == true)
        #expect(cast.mia.problems == [])
    }

    @Test func triggerFinalBadgeOnce() throws {
        let cast = try Cast()
        defer { cast.close() }
        #expect(try cast.priya.refusal("trigger_final_badge") == "forbidden")
        #expect(try cast.mia.refusal("trigger_final_badge") == "forbidden")
        let version = try cast.sam.currentVersion()
        let first = try cast.sam.ok("trigger_final_badge")
        #expect(first["result"] == [:])
        #expect(first.versionNumber == version + 1)
        let game = try cast.state()["game"]
        #expect(game?["final_badge"] == true)
        #expect(game?["final_badge_at"]?.stringValue?.hasSuffix("Z") == true)
        #expect(try cast.admin.refusal("trigger_final_badge") == "already_unlocked")
        #expect(try cast.sam.refusal("trigger_final_badge") == "already_unlocked")
        #expect(try cast.sam.currentVersion() == version + 1)
    }

    @Test func saveChallengeAndSaveRewardCreateAndEdit() throws {
        let cast = try Cast()
        defer { cast.close() }
        try cast.mia.subscribe()
        let fields: [String: JSONValue] = ["title": "Sing", "description": "Sing a song in the street", "points": 40,
                                           "difficulty": "medium", "category": "creative"]
        #expect(try cast.priya.refusal("save_challenge", fields) == "forbidden")
        let created = try cast.sam.ok("save_challenge", fields)
        let id = try #require(created["result"]?["challenge"]?.stringValue)
        #expect(id == "c16")
        var edit = fields
        edit["challenge"] = .string(id)
        edit["title"] = "Sing loudly"
        edit["option_b"] = ["title": "Hum", "description": "Hum it instead"]
        #expect(try cast.admin.ok("save_challenge", edit)["result"] == ["challenge": .string(id)])
        let saved = try cast.state()["challenges"]?[id]
        #expect(saved?["title"] == "Sing loudly")
        #expect(saved?["points"] == 40)
        #expect(saved?["option_b"]?["title"] == "Hum")
        #expect(saved?["status"] == "open")
        #expect(try cast.state()["game"]?["challenges_total"] == 16)
        var missing = edit
        missing["challenge"] = "c77"
        #expect(try cast.admin.refusal("save_challenge", missing) == "not_found")
        try cast.mia.ok("complete_challenge", ["challenge": .string(id), "proof": Self.done, "option": "b"])
        #expect(try cast.admin.refusal("save_challenge", edit) == "already_completed")
        var outOfRange = fields
        outOfRange["points"] = 1001
        #expect(try cast.admin.refusal("save_challenge", outOfRange) == "bad_request")

        let reward: [String: JSONValue] = ["from": "Theo", "from_character": "theo", "title": "A poem", "teaser": "Words",
                                           "type": "text", "content": ["text": "Roses are red", "urls": []]]
        #expect(try cast.mia.refusal("save_reward", reward) == "forbidden")
        let newReward = try cast.admin.ok("save_reward", reward)
        let rewardID = try #require(newReward["result"]?["reward"]?.stringValue)
        #expect(rewardID == "r10")
        var rewardEdit = reward
        rewardEdit["reward"] = .string(rewardID)
        rewardEdit["cost"] = 30
        rewardEdit["title"] = "A longer poem"
        #expect(try cast.sam.ok("save_reward", rewardEdit)["result"] == ["reward": .string(rewardID)])
        let adminView = try cast.state()["rewards"]?[rewardID]
        #expect(adminView?["title"] == "A longer poem")
        #expect(adminView?["cost"] == 30)
        #expect(adminView?["content"]?["text"] == "Roses are red")
        let miaView = try cast.mia.ok("state")["result"]?["state"]?["rewards"]?[rewardID]
        #expect(miaView?["title"] == "A longer poem")
        #expect(miaView?["content"] == nil, "a locked reward's content is absent for the birthday person")
        var missingReward = rewardEdit
        missingReward["reward"] = "r77"
        #expect(try cast.sam.refusal("save_reward", missingReward) == "not_found")
        try cast.admin.ok("force_unlock", ["reward": .string(rewardID), "deduct": false])
        #expect(try cast.sam.refusal("save_reward", rewardEdit) == "already_unlocked")

        // A gift of links alone still has a string `text`, as PROTOCOL.md shows it.
        let links: [String: JSONValue] = ["from": "Theo", "title": "A playlist", "teaser": "Songs", "type": "audio",
                                          "content": ["urls": ["https://example.com/playlist"]]]
        let linksID = try #require(try cast.admin.ok("save_reward", links)["result"]?["reward"]?.stringValue)
        #expect(try cast.state()["rewards"]?[linksID]?["content"]?["text"] == "")
        try cast.mia.checkMirror(step: "after saves")
        #expect(cast.mia.problems == [])
    }

    @Test func setDayWhoamiAndUnsubscribe() throws {
        let cast = try Cast()
        defer { cast.close() }
        #expect(try cast.admin.ok("whoami")["result"] == ["character": nil, "role": "admin", "game": "main"])
        #expect(try cast.sam.ok("whoami")["result"] == ["character": "sam", "role": "organizer", "game": "main"])
        #expect(try cast.priya.ok("whoami")["result"] == ["character": "priya", "role": "friend", "game": "main"])
        #expect(try cast.server.connect().refusal("whoami") == "unauthenticated")
        #expect(try cast.state()["me"] == ["character": nil, "role": "admin"])

        try cast.priya.subscribe()
        let version = try cast.sam.currentVersion()
        #expect(try cast.priya.refusal("set_day", ["day": 2]) == "forbidden")
        #expect(try cast.sam.ok("set_day", ["day": 2]).versionNumber == version + 1)
        #expect(try cast.priya.ok("state")["result"]?["state"]?["game"]?["day"] == 2)
        let same = try cast.admin.ok("set_day", ["day": 2])
        #expect(same.versionNumber == version + 1, "the same day commits nothing")
        for day: JSONValue in [0, 367, "3"] {
            #expect(try cast.admin.call("set_day", ["day": day]).errorCode == "bad_request", "\(day)")
        }
        try cast.priya.checkMirror(step: "after set_day")
        #expect(cast.priya.mirror?["game"]?["day"] == 2)

        // After unsubscribe no patch arrives: the ping's reply comes after anything queued before it.
        #expect(try cast.priya.ok("unsubscribe")["result"] == [:])
        let patches = cast.priya.patches
        let snapshots = cast.priya.snapshots
        try cast.sam.ok("set_day", ["day": 3])
        try cast.mia.ok("complete_challenge", ["challenge": "c02", "proof": Self.done])
        #expect(try cast.priya.currentVersion() == version + 3)
        #expect(cast.priya.patches == patches)
        #expect(cast.priya.snapshots == snapshots)
        // Unsubscribing twice is harmless, and subscribing again starts with a snapshot.
        try cast.priya.ok("unsubscribe")
        try cast.priya.subscribe()
        #expect(cast.priya.snapshots == snapshots + 1)
        #expect(cast.priya.mirror?["game"]?["day"] == 3)
        try cast.priya.checkMirror(step: "subscribed again")
        #expect(cast.priya.problems == [])
    }
}
