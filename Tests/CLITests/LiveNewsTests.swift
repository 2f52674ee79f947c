import Foundation
import JSON
import Testing

/// What `bq play` tells a person while they wait: every change, once, also when one patch
/// carries several commits.
@Suite struct LiveNewsTests {
    @Test func anAdjustmentMergedWithACompletionIsTold() throws {
        let entry: JSONValue = ["seq": 1, "at": "2026-11-21T18:02:11.345Z", "kind": "challenge_completed", "ref": "c02",
                                "title": "Wisdom From Strangers", "subtitle": "+35 ✦", "from": .null]
        // Asked once the game is on screen: one patch of two commits, a completion (+35) and an
        // organizer's adjustment (+10) that no timeline entry explains.
        let fake = Self.miaServer { id in
            [["push": "patch", "from": 1, "to": 3, "ops": [
                 ["op": "replace", "path": "/game/points", "value": 45],
                 ["op": "replace", "path": "/game/earned", "value": 45],
                 ["op": "replace", "path": "/challenges/c02/status", "value": "completed"],
                 ["op": "add", "path": "/timeline/-", "value": entry]]],
             ["id": id, "ok": true, "version": 3, "result": ["found": 0]]]
        }
        defer { fake.stop() }
        let mia = try BQProcess(["play", "--port", String(fake.port), "--character", "mia"], home: try makeTemporaryDirectory())
        #expect(mia.output.waitFor("Type help for commands."))
        mia.send("discover")
        #expect(mia.output.waitFor("Mia completed “Wisdom From Strangers” +35 ✦"), "news, not the home screen: its timeline was empty")
        #expect(mia.output.waitFor("The organizer adjusted the points: +10 ✦"), "\(mia.output.text)")
        #expect(mia.output.waitFor("Points: 45 ✦"))
        #expect(mia.finish() == 0)
        #expect(!mia.output.text.contains("in all"), "live, one adjustment beside a completion is not a sum: \(mia.output.text)")
    }

    /// Someone else's change that committed before the person's own is told after the reply:
    /// the balance it ends with must not be older than the one the reply gave.
    @Test func newsOlderThanTheOwnChangeEndsWithTheCurrentBalance() throws {
        let balances = try Self.balancesToldAfterCompleting(committedAt: 3, finalVersion: 3, finalPoints: 55,
                                                            expecting: "The organizer adjusted the points: +20 ✦")
        #expect(balances.last?.contains("Points: 55 ✦") == true, "the last balance told is the current one: \(balances)")
    }

    /// The same, when a later change of someone else's comes in the patch with the person's own:
    /// the current balance is told once.
    @Test func theCurrentBalanceIsToldOnceWhenNewsFollowsTheOwnChange() throws {
        // Her completion (version 3) and an adjustment of 10 after it (version 4), in one patch.
        let balances = try Self.balancesToldAfterCompleting(committedAt: 3, finalVersion: 4, finalPoints: 65,
                                                            expecting: "The organizer adjusted the points: +10 ✦")
        #expect(balances.last?.contains("Points: 65 ✦") == true, "\(balances)")
        #expect(balances.filter { $0.contains("Points: 65 ✦") }.count == 1, "told once: \(balances)")
        #expect(!balances.contains { $0.contains("Points: 20 ✦") }, "no balance older than the reply's: \(balances)")
    }

    /// Mia completes c02 (+35) while the organizer adds 20 just before (version 2); the patch
    /// with her completion reaches `finalVersion` at `finalPoints`. The lines with a balance
    /// that `bq play` printed, in order.
    static func balancesToldAfterCompleting(committedAt version: Int, finalVersion: Int, finalPoints: Int,
                                            expecting news: String) throws -> [String] {
        let fake = miaServer(answering: "complete_challenge") { id in
            [["push": "patch", "from": 1, "to": 2, "ops": [
                 ["op": "replace", "path": "/game/points", "value": 20],
                 ["op": "replace", "path": "/game/earned", "value": 20]]],
             ["push": "patch", "from": 2, "to": .int(finalVersion), "ops": c02Completed(forced: false, points: finalPoints)],
             ["id": id, "ok": true, "version": .int(version), "result": ["challenge": "c02", "points": 55]]]
        }
        defer { fake.stop() }
        let mia = try BQProcess(["play", "--port", String(fake.port), "--character", "mia", "--no-color"],
                                home: try makeTemporaryDirectory())
        #expect(mia.output.waitFor("Type help for commands."))
        mia.send("complete c02 done")
        #expect(mia.output.waitFor("Points: 55 ✦"), "the reply: \(mia.output.text)")
        #expect(mia.output.waitFor(news), "\(mia.output.text)")
        #expect(mia.finish() == 0)
        return mia.output.text.split(separator: "\n").map(String.init).filter { $0.contains("Points: ") }
    }

    /// Two adjustments committed together reach a subscriber as one patch: told as their sum,
    /// said to be one.
    @Test func adjustmentsMergedInOnePatchAreToldAsASum() throws {
        let fake = Self.miaServer { id in
            [["push": "patch", "from": 1, "to": 3, "ops": [
                 ["op": "replace", "path": "/game/points", "value": 10],
                 ["op": "replace", "path": "/game/earned", "value": 10]]],
             ["id": id, "ok": true, "version": 3, "result": ["found": 0]]]
        }
        defer { fake.stop() }
        let mia = try BQProcess(["play", "--port", String(fake.port), "--character", "mia"], home: try makeTemporaryDirectory())
        #expect(mia.output.waitFor("Type help for commands."))
        mia.send("discover")
        #expect(mia.output.waitFor("The organizer adjusted the points: +10 ✦ in all"), "\(mia.output.text)")
        #expect(mia.finish() == 0)
    }

    @Test func dareEditsAreNewsToTheOrganizerAndOwnDoingsAreNotNewsToTheirAuthor() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let sam = try BQProcess(["play"] + server.address + ["--character", "sam"], home: try makeTemporaryDirectory())
        #expect(sam.output.waitFor("Type help for commands."))
        let priya = try BQProcess(["play"] + server.address + ["--character", "priya"], home: try makeTemporaryDirectory())
        #expect(priya.output.waitFor("Type help for commands."))
        #expect(sam.output.waitFor("Priya joined the game"))

        priya.send(#"dare save "Cartwheel" "On the lawn" 25"#)
        #expect(priya.output.waitFor("Saved your dare dare-priya as a draft."))
        #expect(sam.output.waitFor("Priya is writing a dare: “Cartwheel”"))
        priya.send(#"dare save "Double cartwheel" "On the lawn" 50"#)
        #expect(priya.output.waitFor("Saved your dare dare-priya as a draft."))
        #expect(sam.output.waitFor("Priya edited a dare: “Double cartwheel” (50 ✦)"))
        #expect(priya.finish() == 0)
        #expect(sam.finish() == 0)
        // The patch with her own change reached her before the reply did: had it been told as
        // news, it would stand above the reply.
        #expect(!priya.output.text.contains("Priya is writing a dare"), "\(priya.output.text)")
        #expect(!priya.output.text.contains("Priya edited a dare"), "\(priya.output.text)")
    }

    /// The organizer's edits are news to the players (their boards change under them), and a
    /// dare that the organizer marks done before anyone found it is not told as found by Mia.
    @Test func organizerEditsAndAForcedDareAreToldAsTheOrganizers() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let mia = try BQProcess(["play"] + server.address + ["--character", "mia"], home: try makeTemporaryDirectory())
        #expect(mia.output.waitFor("Type help for commands."))

        #expect(try BQProcess.run(["admin", "edit-challenge", "c02", "--points", "45"] + server.adminFlags).status == 0)
        #expect(mia.output.waitFor("The organizer changed c02 “"), "\(mia.output.text)")
        #expect(mia.output.waitFor("”: now 45 ✦"), "\(mia.output.text)")
        #expect(try BQProcess.run(["admin", "edit-reward", "r01", "--title", "Postcard from Lisbon"] + server.adminFlags).status == 0)
        #expect(mia.output.waitFor("The organizer edited the gift r01 “Postcard from Lisbon”"), "\(mia.output.text)")

        let priya = try makeTemporaryDirectory()
        #expect(try BQProcess.run(["play"] + server.address + ["--character", "priya", "dare", "save", "Cartwheel", "On the lawn", "25"],
                                  home: priya).status == 0)
        #expect(try BQProcess.run(["play"] + server.address + ["dare", "deliver"], home: priya).status == 0)
        #expect(try BQProcess.run(["admin", "force-complete", "dare-priya"] + server.adminFlags).status == 0)
        #expect(mia.output.waitFor("A dare by Priya came out when the organizer marked it done: “Cartwheel”"), "\(mia.output.text)")
        #expect(mia.finish() == 0)
        #expect(!mia.output.text.contains("Mia discovered a dare"), "\(mia.output.text)")
    }

    /// The patch with a person's own change reaches them before the reply: the reply tells it,
    /// once, and what others did meanwhile is still news.
    @Test func ownChangesAreToldByTheirReplyAlone() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let mia = try BQProcess(["play"] + server.address + ["--character", "mia", "--no-color"], home: try makeTemporaryDirectory())
        #expect(mia.output.waitFor("Type help for commands."))
        let sam = try BQProcess(["play"] + server.address + ["--character", "sam", "--no-color"], home: try makeTemporaryDirectory())
        #expect(sam.output.waitFor("Type help for commands."))

        mia.send("complete c01 done")
        #expect(mia.output.waitFor("Completed “Sunrise Swim” as option A (no --option b was given). Points: 75 ✦"), "\(mia.output.text)")
        mia.send("unlock r02")
        #expect(mia.output.waitFor("Unlocked r02! Points: 25 ✦"), "\(mia.output.text)")
        #expect(sam.output.waitFor("Gift unlocked: “"), "news to the others: \(sam.output.text)")
        sam.send("set-day 2")
        #expect(sam.output.waitFor("It is now day 2."))
        sam.send("adjust-points 20 --reason karaoke")
        #expect(sam.output.waitFor("Points: 45 ✦."))
        sam.send("add-challenge --title Kayak --description Paddle --points 40 --difficulty easy --category adventure")
        #expect(sam.output.waitFor("Added challenge c16."))
        #expect(mia.output.waitFor("The organizer adjusted the points: +20 ✦"), "\(mia.output.text)")
        #expect(mia.output.waitFor("New on the board: c16 “Kayak” (40 ✦)"), "\(mia.output.text)")
        #expect(mia.finish() == 0)
        #expect(sam.finish() == 0)

        // Each said once, by the reply; the news lines would have come first.
        #expect(!mia.output.text.contains("Mia completed “Sunrise Swim”"), "\(mia.output.text)")
        #expect(!mia.output.text.contains("from Mom & Dad -50 ✦"), "\(mia.output.text)")
        #expect(!mia.output.text.contains("(earned 75, spent 0)"), "the balance, told by the reply: \(mia.output.text)")
        #expect(mia.output.text.contains("It is now day 2."), "\(mia.output.text)")
        #expect(sam.output.text.components(separatedBy: "It is now day 2.").count == 2, "\(sam.output.text)")
        #expect(!sam.output.text.contains("The organizer adjusted the points"), "\(sam.output.text)")
        #expect(!sam.output.text.contains("New on the board"), "\(sam.output.text)")
    }

    /// Only what her own command committed is left to its reply: a change of someone else's in
    /// the same wait, even of the same kind, is news, told after the reply.
    @Test func onlyTheCommandsOwnCommitIsLeftToItsReply() throws {
        let fake = Self.miaServer(answering: "complete_challenge") { id in
            [["push": "patch", "from": 1, "to": 2, "ops": Self.c02Completed(forced: false)],
             // The organizer's adjustment, committed after hers but before her reply went out.
             ["push": "patch", "from": 2, "to": 3, "ops": [
                 ["op": "replace", "path": "/game/points", "value": 45],
                 ["op": "replace", "path": "/game/earned", "value": 45]]],
             ["id": id, "ok": true, "version": 2, "result": ["points": 35]]]
        }
        defer { fake.stop() }
        let mia = try BQProcess(["play", "--port", String(fake.port), "--character", "mia", "--no-color"], home: try makeTemporaryDirectory())
        #expect(mia.output.waitFor("Type help for commands."))
        mia.send("complete c02 done")
        #expect(mia.output.waitFor("Completed “Wisdom From Strangers”. Points: 35 ✦"), "\(mia.output.text)")
        #expect(mia.output.waitFor("The organizer adjusted the points: +10 ✦"), "after the reply: \(mia.output.text)")
        #expect(mia.output.waitFor("Points: 45 ✦  (earned 45, spent 0)"), "\(mia.output.text)")
        #expect(mia.finish() == 0)
        #expect(!mia.output.text.contains("Mia completed"), "\(mia.output.text)")
    }

    /// News held while her change is on its way is bounded: past `LiveNews.mostViewsHeld` views
    /// the oldest go, and the first told covers everything since the view told before it.
    @Test func newsHeldForAnUnansweredChangeIsBounded() throws {
        let fake = Self.miaServer(answering: "complete_challenge") { id in
            var lines: [JSONValue] = [["push": "patch", "from": 1, "to": 2, "ops": Self.c02Completed(forced: false)]]
            for step in 1...200 {
                lines.append(["push": "patch", "from": .int(1 + step), "to": .int(2 + step), "ops": [
                    ["op": "replace", "path": "/game/points", "value": .int(35 + step)],
                    ["op": "replace", "path": "/game/earned", "value": .int(35 + step)]]])
            }
            return lines + [["id": id, "ok": true, "version": 2, "result": ["points": 35]]]
        }
        defer { fake.stop() }
        let mia = try BQProcess(["play", "--port", String(fake.port), "--character", "mia", "--no-color"], home: try makeTemporaryDirectory())
        #expect(mia.output.waitFor("Type help for commands."))
        mia.send("complete c02 done")
        #expect(mia.output.waitFor("The organizer adjusted the points: +137 ✦ in all"), "\(mia.output.text)")
        #expect(mia.output.waitFor("Points: 235 ✦"), "\(mia.output.text)")
        #expect(mia.finish() == 0)
        let told = mia.output.text.components(separatedBy: "The organizer adjusted the points").count - 1
        #expect(told == 64, "one line per view held, at most 64: \(told)")
    }

    /// A command refused tells nothing of what it would have changed: the same change made by
    /// someone else in the meantime (why it was refused) is news.
    @Test func aRefusedCommandLeavesTheNewsWhole() throws {
        let fake = Self.miaServer(answering: "complete_challenge") { id in
            [["push": "patch", "from": 1, "to": 2, "ops": Self.c02Completed(forced: true)],
             ["id": id, "ok": false, "error": ["code": "already_completed", "message": "\"Wisdom From Strangers\" is already completed"]]]
        }
        defer { fake.stop() }
        let mia = try BQProcess(["play", "--port", String(fake.port), "--character", "mia", "--no-color"], home: try makeTemporaryDirectory())
        #expect(mia.output.waitFor("Type help for commands."))
        mia.send("complete c02 done")
        // The news first: it says why the refusal after it.
        #expect(mia.output.waitFor("“Wisdom From Strangers” marked done by the organizer +35 ✦"), "\(mia.output.text)")
        #expect(mia.output.waitFor("Points: 35 ✦"), "\(mia.output.text)")
        #expect(mia.output.waitFor("is already completed"), "\(mia.output.text)")
        #expect(mia.finish() == 0)
    }

    /// Two organizers adjusting at once reach each other in one patch: each is told the other's
    /// amount, not the sum with their own.
    @Test func anOwnAdjustmentMergedWithAnothersIsLeftOut() throws {
        var object = Self.view.objectValue ?? [:]
        object["me"] = ["character": "sam", "role": "organizer"]
        var characters = object["characters"]?.objectValue ?? [:]
        characters["sam"] = ["name": "Sam", "role": "organizer", "tagline": "", "fun_facts": [], "claimed": true]
        object["characters"] = .object(characters)
        let view = JSONValue.object(object)
        let fake = FakeServer(hello: ["push": "hello", "protocol": 1, "server": "fake", "game": "main", "version": 1]) { [view] request in
            let id = request["id"] ?? .null
            switch request["op"]?.stringValue {
            case "claim":
                return [["id": id, "ok": true, "version": 1, "result": ["token": "t", "character": "sam", "role": "organizer"]]]
            case "subscribe":
                return [["id": id, "ok": true, "version": 1, "result": ["mode": "snapshot"]], ["push": "snapshot", "version": 1, "state": view]]
            case "adjust_points":
                // Sam's +5 at version 2 and the console's +4 at 3, in one patch.
                return [["push": "patch", "from": 1, "to": 3, "ops": [
                            ["op": "replace", "path": "/game/points", "value": 9], ["op": "replace", "path": "/game/earned", "value": 9]]],
                        ["id": id, "ok": true, "version": 2, "result": ["points": 5]]]
            default:
                return [["id": id, "ok": false, "error": ["code": "unknown_op", "message": "fake"]]]
            }
        }
        defer { fake.stop() }
        let sam = try BQProcess(["play", "--port", String(fake.port), "--character", "sam", "--no-color"], home: try makeTemporaryDirectory())
        #expect(sam.output.waitFor("Type help for commands."))
        sam.send("adjust-points 5 --reason first")
        #expect(sam.output.waitFor("Points: 5 ✦."), "\(sam.output.text)")
        #expect(sam.output.waitFor("The organizer adjusted the points: +4 ✦\n"), "\(sam.output.text)")
        #expect(sam.output.waitFor("Mia's points: 9 ✦"), "\(sam.output.text)")
        #expect(sam.finish() == 0)
        #expect(!sam.output.text.contains("+9"), "\(sam.output.text)")
    }

    /// What changed between two runs of an open game is told at the next start, after the home
    /// screen, as what changed since the person was last there.
    @Test func whatChangedSinceTheLastRunIsToldAtTheNextStart() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let home = try makeTemporaryDirectory()
        let first = try BQProcess.run(["play", "--no-color"] + server.address + ["--character", "mia"], home: home, stdin: "quit\n")
        #expect(first.status == 0, "\(first.err)")
        #expect(!first.out.contains("Since you were last here"), "\(first.out)")
        #expect(try BQProcess.run(["admin", "adjust-points", "5", "--reason", "breakfast"] + server.adminFlags).status == 0)
        #expect(try BQProcess.run(["admin", "set-day", "2"] + server.adminFlags).status == 0)

        let second = try BQProcess.run(["play", "--no-color"] + server.address, home: home, stdin: "quit\n")
        #expect(second.status == 0, "\(second.err)")
        let told = second.out.components(separatedBy: "Type help for commands.").last ?? ""
        #expect(told.contains("Since you were last here:\nThe organizer adjusted the points: +5 ✦ in all"), "\(second.out)")
        #expect(told.contains("It is now day 2."), "\(second.out)")

        let third = try BQProcess.run(["play", "--no-color"] + server.address, home: home, stdin: "quit\n")
        #expect(!third.out.contains("Since you were last here"), "nothing new: \(third.out)")
        let seen = try FileManager.default.attributesOfItem(atPath: home.path + "/.config/bq/play-127.0.0.1-\(server.port)-default.json.seen")
        #expect((seen[.posixPermissions] as? Int) == 0o600)

        // A new game on the same port (a fresh data directory) is not the one last seen, even
        // once it is further along: nothing is told as changed since.
        server.stop()
        let fresh = try ServerProcess(port: server.port)
        defer { fresh.stop() }
        for day in 2...9 { #expect(try BQProcess.run(["admin", "set-day", String(day)] + fresh.adminFlags).status == 0) }
        let elsewhere = try BQProcess.run(["play", "--no-color"] + fresh.address + ["--character", "mia"], home: home, stdin: "quit\n")
        #expect(elsewhere.status == 0, "\(elsewhere.err)")
        #expect(!elsewhere.out.contains("Since you were last here"), "\(elsewhere.out)")
    }

    /// The patch ops of c02's completion (+35) in `view`, by Mia or forced by the organizer.
    /// `points` is the balance (and the earned total) after the patch: 35, unless others' changes
    /// ride in the same patch.
    static func c02Completed(forced: Bool, points: Int = 35) -> JSONValue {
        let entry: JSONValue = ["seq": 1, "at": "2026-11-21T18:02:11.345Z", "kind": "challenge_completed", "ref": "c02",
                                "title": "Wisdom From Strangers", "subtitle": "+35 ✦", "from": .null]
        return .array([["op": "replace", "path": "/game/points", "value": .int(points)],
                       ["op": "replace", "path": "/game/earned", "value": .int(points)],
                       ["op": "replace", "path": "/challenges/c02/status", "value": "completed"]]
                      + (forced ? [["op": "replace", "path": "/challenges/c02/forced", "value": true]] : [])
                      + [["op": "add", "path": "/timeline/-", "value": entry]])
    }

    /// A server for Mia, on `view` at version 1, whose answer to `discover_secrets` (or to
    /// `op`), given its request's id, is `discover`'s lines: where each test puts what it is about.
    static func miaServer(answering op: String = "discover_secrets",
                          discover: @escaping @Sendable (JSONValue) -> [JSONValue]) -> FakeServer {
        FakeServer(hello: ["push": "hello", "protocol": 1, "server": "fake", "game": "main", "version": 1]) { request in
            let id = request["id"] ?? .null
            switch request["op"]?.stringValue {
            case "claim":
                return [["id": id, "ok": true, "version": 1, "result": ["token": "t", "character": "mia", "role": "birthday"]]]
            case "subscribe":
                return [["id": id, "ok": true, "version": 1, "result": ["mode": "snapshot"]],
                        ["push": "snapshot", "version": 1, "state": view]]
            case op:
                return discover(id)
            default:
                return [["id": id, "ok": false, "error": ["code": "unknown_op", "message": "fake"]]]
            }
        }
    }

    static let view: JSONValue = [
        "me": ["character": "mia", "role": "birthday"],
        "game": ["title": "Test", "day": 1, "points": 0, "earned": 0, "spent": 0, "challenges_completed": 0,
                 "challenges_total": 1, "secrets_hidden": 0, "secrets_found": 0, "secrets_completed": 0,
                 "rewards_unlocked": 0, "rewards_total": 0, "final_badge": false, "final_badge_at": .null],
        "characters": ["mia": ["name": "Mia", "role": "birthday", "tagline": "", "fun_facts": [], "claimed": true]],
        "challenges": ["c02": ["title": "Wisdom From Strangers", "description": "Ask", "option_b": .null, "points": 35,
                               "difficulty": "easy", "category": "social", "secret": false, "author": .null,
                               "status": "open", "completed_at": .null, "option": .null, "proof": .null, "forced": false]],
        "rewards": [:],
        "timeline": [],
    ]
}
