import JSON
import Testing
@testable import Protocol

/// A client keys the ops in `mutationOps` and re-sends them after a reconnect: an op that
/// changes the game but is missing from the list would be re-sent without a key and could be
/// applied twice.
@Suite struct MutationOpsTests {
    /// Every op the server decodes: PROTOCOL.md's table and any beyond it (kept by hand; also
    /// the ops `MemberListTests` fuzzes).
    static let allOps = ["ping", "characters", "claim", "auth", "admin", "whoami", "state", "subscribe", "unsubscribe",
                         "timeline", "events", "complete_challenge", "discover_secrets", "unlock_reward", "save_secret",
                         "deliver_secret", "force_complete", "force_unlock", "trigger_final_badge", "unclaim",
                         "adjust_points", "set_day", "save_challenge", "save_reward"]

    @Test(arguments: allOps) func theListNamesExactlyTheOpsThatDecodeAsChanges(op: String) {
        let decodesAsChange: Bool
        do {
            decodesAsChange = try RequestDecoder.mutation(op, Arguments(fields: [:])) != nil
        } catch {
            decodesAsChange = true  // a change whose arguments are missing
        }
        #expect(decodesAsChange == RequestDecoder.mutationOps.contains(op))
    }

    @Test func everyListedOpIsInTheTable() {
        #expect(RequestDecoder.mutationOps.isSubset(of: Set(Self.allOps)))
    }
}
