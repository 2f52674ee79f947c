import Foundation
import Testing

/// At a terminal, `bq play` edits the line being typed itself, so that news arriving meanwhile
/// is printed above the typing and the typing shown again below, instead of landing in the
/// middle of it. The terminal is given back as it was found.
@Suite struct LineEditingTests {
    @Test func newsArrivingWhileTypingGoesAboveTheTyping() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let mia = try TerminalProcess(["play"] + server.address + ["--character", "mia"], home: try makeTemporaryDirectory())
        #expect(mia.screen.waitFor("Type help for commands."), "\(mia.errors.text)")
        #expect(mia.screen.waitFor("> "))
        mia.type("who")
        #expect(mia.screen.waitFor("who"), "the typing is shown as it is typed")

        let adjust = try BQProcess.run(["admin", "adjust-points", "10", "--reason", "karaoke"] + server.adminFlags)
        #expect(adjust.status == 0, "\(adjust.err)")
        // The typed line is cleared, the news printed, and the prompt and typing drawn again.
        #expect(mia.screen.waitFor("\r\u{1B}[J"), "\(mia.screen.text.debugDescription)")
        #expect(mia.screen.waitFor("+10 ✦"))
        #expect(mia.screen.waitFor("> who"), "the typing again, below the news: \(mia.screen.text.debugDescription)")

        mia.type("ami\r")
        #expect(mia.screen.waitFor("You are Mia (birthday)."), "the whole line was sent: \(mia.screen.text.debugDescription)")
        // Keys are the editor's once the next prompt is drawn (while a command runs, the terminal
        // driver has them). Backspace takes back a character; cursor keys are ignored.
        #expect(mia.screen.waitFor("> "))
        mia.type("pointz\u{7F}")
        #expect(mia.screen.waitFor("\r\u{1B}[J> point"), "the line drawn again without the z: \(mia.screen.text.debugDescription)")
        mia.type("\u{1B}[Ds\r")
        #expect(mia.screen.waitFor("Points: 10 ✦"), "\(mia.screen.text.debugDescription)")
        // Enter in the middle of a key's escape sequence is still Enter.
        #expect(mia.screen.waitFor("> "))
        mia.type("whoami\u{1B}[\r")
        #expect(mia.screen.waitFor("You are Mia (birthday)."), "\(mia.screen.text.debugDescription)")
        #expect(mia.screen.waitFor("> "))
        mia.type("help\r")
        #expect(mia.screen.waitFor("Ctrl-D on an empty line leaves"), "the keys are in the help at a terminal")
        // Ctrl-D on an empty line ends the input, as the terminal driver's would.
        #expect(mia.screen.waitFor("> "))
        mia.type("\u{04}")
        #expect(mia.waitForExit() == 0, "\(mia.errors.text)")
        let modes = try #require(mia.localModes())
        #expect(modes & tcflag_t(ECHO) != 0 && modes & tcflag_t(ICANON) != 0 && modes & tcflag_t(ISIG) != 0,
                "the terminal is given back with its echo, line editing and signal keys")
    }

    @Test func ctrlCEndsPlayAndGivesTheTerminalBack() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let mia = try TerminalProcess(["play"] + server.address + ["--character", "mia"], home: try makeTemporaryDirectory())
        #expect(mia.screen.waitFor("Type help for commands."), "\(mia.errors.text)")
        #expect(mia.screen.waitFor("> "))
        mia.type("half a comm")
        #expect(mia.screen.waitFor("half a comm"))
        mia.type("\u{03}")
        _ = mia.waitForExit()
        #expect(mia.process.terminationReason == .uncaughtSignal && mia.process.terminationStatus == SIGINT,
                "ended by SIGINT, as before")
        let modes = try #require(mia.localModes())
        #expect(modes & tcflag_t(ECHO) != 0 && modes & tcflag_t(ICANON) != 0)
    }
}
