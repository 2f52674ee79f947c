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
}
