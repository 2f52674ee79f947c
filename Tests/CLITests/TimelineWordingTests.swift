import Foundation
import Testing

/// The timeline says who did what: the organizer's forced completions are not the birthday
/// person's.
@Suite struct TimelineWordingTests {
    @Test func aForcedCompletionIsCreditedToTheOrganizer() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let forced = try BQProcess.run(["admin", "force-complete", "c03"] + server.adminFlags)
        #expect(forced.status == 0, "\(forced.err)")
        let home = try makeTemporaryDirectory()
        let done = try BQProcess.run(["play"] + server.address + ["--character", "mia", "complete", "c02"], home: home)
        #expect(done.status == 0, "\(done.err)")
        let timeline = try BQProcess.run(["play"] + server.address + ["timeline"], home: home)
        #expect(timeline.out.contains("marked done by the organizer"), "\(timeline.out)")
        #expect(timeline.out.components(separatedBy: "Mia completed").count == 2, "only c02 is Mia's: \(timeline.out)")
    }
}
