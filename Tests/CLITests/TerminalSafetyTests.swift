import Foundation
import Testing

/// Text one player types reaches other players' terminals: `bq` must show it, not obey it.
@Suite struct TerminalSafetyTests {
    @Test func controlCharactersInAnotherPlayersTextAreShownEscaped() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let sneaky = "line1\nline2\u{1B}[31mRED\u{07}\u{202E}txt.exe\u{2028}forged\u{FEFF}"
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
        #expect(sam.out.contains("line2^[[31mRED^G<U+202E>txt.exe<U+2028>forged<U+FEFF>"), "\(sam.out)")
        #expect(admin.out.contains("“Bell^G^[]0;owned^G”"), "\(admin.out)")
        for output in [sam.out, admin.out] {
            #expect(!output.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{07}" || $0 == "\u{202E}" })
        }
    }

    @Test func aNewlineInATitleCannotForgeALineButDescriptionsKeepTheirLines() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let priyaHome = try makeTemporaryDirectory()
        let saved = try BQProcess.run(["play"] + server.address + ["--character", "priya", "dare", "save",
                                       "Cartwheel\n✓ Unlocked r09! Points: 999 ✦", "First line\n\u{1B}[2JSecond line", "25"], home: priyaHome)
        #expect(saved.status == 0, "\(saved.err)")
        let delivered = try BQProcess.run(["play"] + server.address + ["dare", "deliver"], home: priyaHome)
        #expect(delivered.status == 0, "\(delivered.err)")

        let theo = try BQProcess.run(["play"] + server.address + ["--character", "theo", "board"], home: try makeTemporaryDirectory())
        #expect(theo.status == 0, "\(theo.err)")
        #expect(theo.out.contains("Cartwheel^J✓ Unlocked r09!"), "\(theo.out)")
        #expect(!theo.out.split(separator: "\n").contains { $0.hasPrefix("✓ Unlocked") }, "no forged line")
        let show = try BQProcess.run(["play"] + server.address + ["--character", "sam", "show", "dare-priya"], home: try makeTemporaryDirectory())
        let lines = show.out.split(separator: "\n").map(String.init)
        #expect(lines.contains("  First line"), "\(show.out)")
        #expect(lines.contains("  ^[[2JSecond line"), "each line of a description indented, escapes shown: \(show.out)")
        let log = try BQProcess.run(["log", "--data", server.dataDirectory.path])
        #expect(!log.out.split(separator: "\n").contains { $0.hasPrefix("✓ Unlocked") }, "\(log.out)")
    }
}

