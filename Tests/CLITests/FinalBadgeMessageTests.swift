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

    /// The birthday person who unlocks the last gift is told the badge came with it, after the
    /// gift; the patch that carried both came first and is not told again as news.
    @Test func theBirthdayPersonsLastUnlockSaysTheBadgeCameWithIt() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        for number in 1...8 {
            #expect(try BQProcess.run(["admin", "force-unlock", "r0\(number)", "--no-deduct"] + server.adminFlags).status == 0)
        }
        let mia = try BQProcess(["play"] + server.address + ["--character", "mia", "--no-color"], home: try makeTemporaryDirectory())
        #expect(mia.output.waitFor("Type help for commands."))
        mia.send("complete c01 done")
        #expect(mia.output.waitFor("Points: 75 ✦"))
        mia.send("unlock r09")
        #expect(mia.output.waitFor("Unlocked r09!"), "\(mia.output.text)")
        #expect(mia.output.waitFor("🏅 That was the last gift: the final badge is unlocked!"), "\(mia.output.text)")
        #expect(mia.finish() == 0)
        #expect(!mia.output.text.contains("★"), "all of it her own doing, told by the replies: \(mia.output.text)")
    }

    @Test func aBadgeTriggeredEarlierIsNotNewsAtTheLastGift() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let triggered = try BQProcess.run(["admin", "final-badge"] + server.adminFlags)
        #expect(triggered.status == 0, "\(triggered.err)")
        let outputs = try unlockAll(server)
        #expect(outputs.allSatisfy { !$0.contains("final badge") }, "\(outputs)")
    }

    /// The badge the organizer gives before the last gift is said to be theirs: "0 of 9 gifts"
    /// beside a plain "the final badge is unlocked" read like a fault.
    @Test func aBadgeGivenEarlyIsSaidToBeTheOrganizers() throws {
        let early = try ServerProcess()
        defer { early.stop() }
        #expect(try BQProcess.run(["admin", "final-badge"] + early.adminFlags).status == 0)
        let timeline = try BQProcess.run(["play"] + early.address + ["--character", "mia", "timeline"], home: try makeTemporaryDirectory())
        #expect(timeline.out.contains("🏅 The organizer unlocked the final badge early! 0 of 9 gifts"), "\(timeline.out)")

        let earned = try ServerProcess()
        defer { earned.stop() }
        _ = try unlockAll(earned)
        let after = try BQProcess.run(["play"] + earned.address + ["--character", "mia", "timeline"], home: try makeTemporaryDirectory())
        #expect(after.out.contains("🏅 The final badge is unlocked! 9 of 9 gifts"), "\(after.out)")
        #expect(!after.out.contains("early"), "\(after.out)")
    }
}
