import Foundation
import Testing

/// Text one player types reaches other players' terminals: `bq` must show it, not obey it.
@Suite struct TerminalSafetyTests {
    @Test func controlCharactersInAnotherPlayersTextAreShownEscaped() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let sneaky = "line1\nline2\u{1B}[31mRED\u{07}\u{202E}txt.exe"
        let completed = try BQProcess.run(["play"] + server.address + ["--character", "mia", "complete", "c11", "text", sneaky],
                                          home: try makeTemporaryDirectory())
        #expect(completed.status == 0, "\(completed.err)")
        let dare = try BQProcess.run(["play"] + server.address + ["--character", "priya", "dare", "save",
                                      "Bell\u{07}\u{1B}]0;owned\u{07}", "Clear \u{1B}[2J the screen", "50"],
                                     home: try makeTemporaryDirectory())
        #expect(dare.status == 0, "\(dare.err)")

        let admin = try BQProcess.run(["admin", "status"] + server.adminFlags)
        let sam = try BQProcess.run(["play"] + server.address + ["--character", "sam", "show", "c11"],
                                      home: try makeTemporaryDirectory())
        #expect(sam.status == 0, "\(sam.err)")
        #expect(sam.out.contains("line2^[[31mRED^G<U+202E>txt.exe"), "\(sam.out)")
        #expect(admin.out.contains("“Bell^G^[]0;owned^G”"), "\(admin.out)")
        for output in [sam.out, admin.out] {
            #expect(!output.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{07}" || $0 == "\u{202E}" })
        }
    }
}
