import Foundation
import Testing

/// `force-unlock` says the final badge unlocked only when this unlock is what did it.
@Suite struct FinalBadgeMessageTests {
    private func unlockAll(_ server: ServerProcess) throws -> [String] {
        try (1...9).map { number in
            let result = try BQProcess.run(["admin", "force-unlock", "r0\(number)", "--no-deduct"] + server.adminFlags)
            #expect(result.status == 0, "\(result.err)")
            return result.out
        }
    }

    @Test func theLastGiftUnlocksTheBadgeAndSaysSo() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let outputs = try unlockAll(server)
        #expect(outputs.dropLast().allSatisfy { !$0.contains("final badge") }, "\(outputs)")
        #expect(outputs.last?.contains("The final badge unlocked with it.") == true, "\(outputs.last ?? "")")
    }

    @Test func aBadgeTriggeredEarlierIsNotNewsAtTheLastGift() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let triggered = try BQProcess.run(["admin", "final-badge"] + server.adminFlags)
        #expect(triggered.status == 0, "\(triggered.err)")
        let outputs = try unlockAll(server)
        #expect(outputs.allSatisfy { !$0.contains("final badge") }, "\(outputs)")
    }
}
