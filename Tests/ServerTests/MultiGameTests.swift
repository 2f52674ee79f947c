import Foundation
import JSON
import Testing
@testable import EventLog

/// Several games on one server: each has its own characters, version and subscribers.
@Suite struct MultiGameTests {
    @Test func gamesAreSeparate() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path) { $0.games = ["main", "g2"] }
        defer { try? server.stop() }

        let mainAdmin = try server.connect()
        mainAdmin.label = "main admin"
        #expect(mainAdmin.hello["game"] == "main", "hello names the default game")
        try mainAdmin.signInAsAdmin()
        try mainAdmin.subscribe()
        let mainVersion = mainAdmin.mirrorVersion

        let g2Admin = try server.connect()
        g2Admin.label = "g2 admin"
        #expect(try g2Admin.signInAsAdmin(game: "g2")["result"]?["game"] == "g2")
        try g2Admin.subscribe()
        let g2Start = g2Admin.mirrorVersion
        // Every sign-in says the game it signed into: a client need not trust its own memory.
        #expect(try g2Admin.ok("whoami")["result"] == ["character": nil, "role": "admin", "game": "g2"])

        // Characters and claims are per game.
        let lobby = try server.connect()
        let g2Characters = try lobby.ok("characters", ["game": "g2"])["result"]?["characters"]?.arrayValue ?? []
        #expect(g2Characters.compactMap { $0["id"]?.stringValue }.sorted() == ["dani", "mia", "priya", "sam", "theo"])
        #expect(try lobby.refusal("characters", ["game": "nope"]) == "not_found")
        #expect(try lobby.refusal("admin", ["key": .string(ServerHarness.adminKey), "game": "nope"]) == "not_found")
        #expect(try lobby.refusal("claim", ["character": "mia", "device": "x", "game": "nope"]) == "not_found")

        let g2Mia = try server.connect()
        g2Mia.label = "g2 mia"
        let claim = try g2Mia.ok("claim", ["character": "mia", "device": "phone", "game": "g2"])
        #expect(claim.versionNumber == g2Start + 1)
        let token = try #require(claim["result"]?["token"])
        #expect(claim["result"]?["game"] == "g2")
        #expect(try g2Mia.ok("whoami")["result"] == ["character": "mia", "role": "birthday", "game": "g2"])
        try g2Mia.subscribe()

        let claimedIn: (String?) throws -> Bool? = { game in
            let args: [String: JSONValue] = game.map { ["game": .string($0)] } ?? [:]
            let list = try lobby.ok("characters", args)["result"]?["characters"]?.arrayValue ?? []
            return list.first { $0["id"] == "mia" }?["claimed"]?.boolValue
        }
        #expect(try claimedIn("g2") == true)
        #expect(try claimedIn(nil) == false, "the claim in g2 leaves main's mia free")
        #expect(try claimedIn("main") == false)

        // The g2 token signs a new connection into g2.
        let resumed = try server.connect()
        #expect(try resumed.ok("auth", ["token": token])["result"] == ["character": "mia", "role": "birthday", "game": "g2"])
        #expect(try resumed.currentVersion() == g2Start + 1)

        // A commit in g2 moves only g2's version and reaches only g2's subscribers.
        let mainPatches = mainAdmin.patches
        let adjusted = try g2Admin.ok("adjust_points", ["delta": 30, "reason": "g2 only"])
        #expect(adjusted.versionNumber == g2Start + 2)
        #expect(g2Admin.mirrorVersion == g2Start + 2)
        try g2Mia.ok("complete_challenge", ["challenge": "c02", "proof": ["kind": "done"]])
        // The ping's reply comes after anything queued for the connection before it.
        #expect(try mainAdmin.currentVersion() == mainVersion)
        #expect(mainAdmin.patches == mainPatches, "main's subscriber got nothing from g2's commits")
        #expect(try mainAdmin.ok("state")["result"]?["state"]?["game"]?["points"] == 0)
        #expect(try g2Admin.ok("state")["result"]?["state"]?["game"]?["points"] == 65)

        // And the other way round.
        let g2Patches = g2Mia.patches
        let mainCommit = try mainAdmin.ok("adjust_points", ["delta": 5, "reason": "main only"])
        #expect(mainCommit.versionNumber == mainVersion + 1)
        #expect(try g2Mia.currentVersion() == g2Start + 3)
        #expect(g2Mia.patches == g2Patches)

        for client in [mainAdmin, g2Admin, g2Mia] { try client.checkMirror(step: "end") }

        // An admin connection can move to the other game by signing in again.
        try mainAdmin.signInAsAdmin(game: "g2")
        #expect(try mainAdmin.currentVersion() == g2Start + 3)
        #expect(try mainAdmin.ok("events", ["after": .int(g2Start)])["result"]?["events"]?.arrayValue?.count == 3)
        #expect(mainAdmin.problems + g2Admin.problems + g2Mia.problems == [])
    }

    @Test func gamesSurviveARestartAndANewGameIsSeededAlone() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let first = try ServerHarness(dataDirectory: dir.path) { $0.games = ["main", "g2"] }
        let g2 = try first.connect()
        try g2.signInAsAdmin(game: "g2")
        try g2.ok("adjust_points", ["delta": 12, "reason": "before restart", "idem": "g2-key"])
        let g2Version = try g2.currentVersion()
        let g2State = try g2.ok("state")["result"]
        let main = try first.connect()
        try main.signInAsAdmin()
        let mainVersion = try main.currentVersion()
        try first.stop()

        let second = try ServerHarness(dataDirectory: dir.path) {
            $0.games = ["main", "g2", "g3"]
            $0.defaultGame = "g3"
        }
        defer { try? second.stop() }
        let lobby = try second.connect()
        #expect(lobby.hello["game"] == "g3", "hello names the configured default game")
        #expect(lobby.hello["version"] == 1, "the new game was seeded: one event")
        let g2Again = try second.connect()
        try g2Again.signInAsAdmin(game: "g2")
        #expect(try g2Again.currentVersion() == g2Version, "g2 was not seeded again")
        #expect(try g2Again.ok("state")["result"] == g2State)
        #expect(try g2Again.ok("adjust_points", ["delta": 12, "reason": "before restart", "idem": "g2-key"])["replayed"] == true)
        let mainAgain = try second.connect()
        try mainAgain.signInAsAdmin(game: "main")
        #expect(try mainAgain.currentVersion() == mainVersion)
        try mainAgain.ok("adjust_points", ["delta": 1, "reason": "main moves"])
        #expect(try mainAgain.currentVersion() == mainVersion + 1)
        #expect(try g2Again.currentVersion() == g2Version)
    }

    /// A connection signed in to one game may claim a character of another: its token there is
    /// not one the other game could have revoked.
    @Test func aConnectionSignedInToOneGameClaimsInAnother() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path) { $0.games = ["main", "g2"] }
        defer { try? server.stop() }
        let player = try server.connect()
        try player.ok("claim", ["character": "mia", "device": "phone"])
        let claim = try player.ok("claim", ["character": "sam", "device": "phone", "game": "g2"])
        #expect(claim["result"]?["role"] == "organizer")
        #expect(try player.ok("whoami")["result"]?["character"] == "sam")
    }

    /// A refusal waits behind the commits of the game it was decided in; a connection of
    /// another game that claimed there is answered with them, and must get nothing of that
    /// game's view (a friend's draft dare, say).
    @Test func aRefusedClaimInAnotherGameShowsNothingOfIt() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path) {
            $0.games = ["main", "g2"]
            $0.busyTimeoutMilliseconds = 30_000
        }
        defer { try? server.stop() }
        let g2Priya = try server.connect()
        try g2Priya.ok("claim", ["character": "priya", "device": "priya-phone", "game": "g2"])
        try g2Priya.ok("save_secret", ["title": "Secret of g2", "description": "only g2's priya may read this", "points": 25])
        let g2Admin = try server.connect()
        try g2Admin.signInAsAdmin(game: "g2")
        try g2Admin.subscribe()  // so that g2's commits have an admin's patch to send
        let g2Before = try g2Admin.currentVersion()

        let watcher = try server.connect()
        watcher.label = "main admin"
        watcher.recordsLines = true
        try watcher.signInAsAdmin()
        try watcher.subscribe()
        let mainVersion = watcher.mirrorVersion

        // A g2 commit held on its way to disk, so that the claim's refusal waits behind it.
        let locker = try EventStore(path: dir.path + "/birthdayquest.sqlite",
                                    options: StoreOptions(synchronous: .off, busyTimeoutMilliseconds: 5_000, checkIntegrity: false))
        defer { locker.close() }
        try locker.executeForTesting("BEGIN IMMEDIATE")
        let held = try g2Priya.send("save_secret", ["title": "Secret of g2", "description": "only g2's priya, still", "points": 50])
        try #require(try g2Admin.waitUntilDecided(atVersion: g2Before + 1), "the g2 commit was never decided")
        let claim = try watcher.send("claim", ["character": "priya", "device": "not-priyas", "game": "g2"])
        try locker.executeForTesting("ROLLBACK")
        #expect(try g2Priya.reply(to: held)["ok"] == true)

        #expect(try watcher.reply(to: claim).errorCode == "already_claimed")
        #expect(watcher.snapshots == 1 && watcher.mirrorVersion == mainVersion, "no push of g2's view reached main's subscriber")
        #expect(!watcher.lines.contains { String(decoding: $0.raw, as: UTF8.self).contains("Secret of g2") })
        try watcher.checkMirror(step: "after the refused claim")
        #expect(watcher.problems == [])
    }
}
