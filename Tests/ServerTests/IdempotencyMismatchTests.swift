import Foundation
import JSON
import Testing

/// Every argument of a keyed request is part of what its key stands for, end to end.
@Suite struct IdempotencyMismatchTests {
    @Test func aKeyReusedForAnotherRewardOrProofIsRefused() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        defer { try? server.stop() }
        let mia = try server.connect()
        try mia.ok("claim", ["character": "mia", "device": "phone"])
        let proof: JSONValue = ["kind": "text", "text": "asked three strangers"]
        try mia.ok("complete_challenge", ["challenge": "c02", "proof": proof, "idem": "done-c02"])
        #expect(try mia.refusal("complete_challenge", ["challenge": "c02", "proof": ["kind": "done"], "idem": "done-c02"])
                == "idempotency_mismatch", "another proof under the same key")
        try mia.ok("complete_challenge", ["challenge": "c13", "proof": ["kind": "done"]])

        let unlocked = try mia.ok("unlock_reward", ["reward": "r02", "idem": "gift"])
        #expect(try mia.refusal("unlock_reward", ["reward": "r03", "idem": "gift"]) == "idempotency_mismatch")
        let replay = try mia.ok("unlock_reward", ["reward": "r02", "idem": "gift"])
        #expect(replay["replayed"] == true)
        #expect(replay["version"] == unlocked["version"])
        #expect(try mia.ok("state")["result"]?["state"]?["rewards"]?["r03"]?["unlocked"] == false, "r03 was not unlocked")
    }

    /// A refusal is not remembered under its key: the same request, sent again once the game
    /// allows it, is decided again and commits (a client retries a key it holds until it gets
    /// an `ok`, and must not be told "not enough points" for ever).
    @Test func aRefusedKeyedChangeSentAgainLaterCommits() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        defer { try? server.stop() }
        let mia = try server.connect()
        try mia.ok("claim", ["character": "mia", "device": "phone"])
        let admin = try server.connect()
        try admin.signInAsAdmin()

        #expect(try mia.refusal("unlock_reward", ["reward": "r04", "idem": "cake"]) == "insufficient_points")
        try admin.ok("adjust_points", ["delta": 100, "reason": "for the cake", "idem": "cake"])
        let unlocked = try mia.ok("unlock_reward", ["reward": "r04", "idem": "cake"])
        #expect(unlocked["replayed"] == nil, "decided, not replayed: \(unlocked.serialized())")
        #expect(unlocked["result"]?["points"] == 0, "100 given, 100 paid: \(unlocked.serialized())")
        #expect(try mia.ok("state")["result"]?["state"]?["rewards"]?["r04"]?["unlocked"] == true)
        // The organizer's own "cake" was another identity's key: it neither replayed Mia's
        // refusal nor was refused as a mismatch. Her key now replays her unlock.
        #expect(try mia.ok("unlock_reward", ["reward": "r04", "idem": "cake"])["replayed"] == true)
    }

    /// A key belongs to the character, not to the device or the connection: Mia's second
    /// device sending her key gets her first answer back.
    @Test func aCharactersKeyReplaysOnHerOtherDevice() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        defer { try? server.stop() }
        let phone = try server.connect()
        let token = try #require(try phone.ok("claim", ["character": "mia", "device": "phone"])["result"]?["token"])
        let tablet = try server.connect()
        try tablet.ok("auth", ["token": token])
        let first = try phone.ok("complete_challenge", ["challenge": "c02", "proof": ["kind": "done"], "idem": "c02-done"])
        let again = try tablet.ok("complete_challenge", ["challenge": "c02", "proof": ["kind": "done"], "idem": "c02-done"])
        #expect(again["replayed"] == true)
        #expect(again["version"] == first["version"])
        #expect(again["result"] == first["result"])
    }
}
