import Foundation
import JSON
import Testing

/// At a terminal, `bq play` edits the line being typed itself, so that news arriving meanwhile
/// is printed above the typing and the typing shown again below, instead of landing in the
/// middle of it. The terminal is given back as it was found.
@Suite struct LineEditingTests {
    /// A server for Mia whose answer to `discover_secrets` waits until `release` is signalled:
    /// a command that runs for as long as the test wants.
    /// `arrived` is signalled when the discovery reaches the server: the client has it among
    /// its requests waiting for an answer by then.
    private static func slowToDiscover(_ release: DispatchSemaphore, arrived: DispatchSemaphore? = nil) -> FakeServer {
        LiveNewsTests.miaServer { id in
            arrived?.signal()
            _ = release.wait(timeout: .now() + 20)
            return [["id": id, "ok": true, "version": 1, "result": ["found": 0]]]
        }
    }

    /// A terminal that takes no cursor moves (`TERM=dumb`) but echoes the typing: the typing is
    /// still the editor's, drawn again line by line. Left to the terminal driver, a line typed
    /// before some news was kept unseen and sent with what was typed after it.
    @Test func onADumbTerminalNewsGoesAboveTheTypingLineByLine() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let mia = try TerminalProcess(["play"] + server.address + ["--character", "mia"], home: try makeTemporaryDirectory(),
                                      environment: ["TERM": "dumb"])
        #expect(mia.screen.waitFor("Type help for commands."), "\(mia.errors.text)")
        #expect(mia.screen.waitFor("> "))
        mia.type("who")
        #expect(mia.screen.waitFor("who"))
        let adjust = try BQProcess.run(["admin", "adjust-points", "10", "--reason", "karaoke"] + server.adminFlags)
        #expect(adjust.status == 0, "\(adjust.err)")
        #expect(mia.screen.waitFor("+10 ✦"))
        #expect(mia.screen.waitFor("\n> who"), "the typing again, on a line below the news: \(mia.screen.text.debugDescription)")
        // Once, below the news's lines, not between them.
        #expect(mia.screen.text.components(separatedBy: "> who").count == 3,
                "as typed, and once again: \(mia.screen.text.debugDescription)")
        mia.type("ami\r")
        #expect(mia.screen.waitFor("You are Mia (birthday)."), "\(mia.screen.text.debugDescription)")
        // Backspace rubs out, as the terminal driver would.
        #expect(mia.screen.waitFor("> "))
        mia.type("pointz\u{7F}")
        #expect(mia.screen.waitFor("pointz\u{8} \u{8}"), "\(mia.screen.text.debugDescription)")
        mia.type("s\r")
        #expect(mia.screen.waitFor("Points: 10 ✦"), "\(mia.screen.text.debugDescription)")
        #expect(!mia.screen.text.unicodeScalars.contains("\u{1B}"), "no escape sequence: \(mia.screen.text.debugDescription)")
        #expect(mia.screen.waitFor("> "))
        mia.type("\u{04}")
        #expect(mia.waitForExit() == 0, "\(mia.errors.text)")
    }

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
        // Keys are the editor's once the next prompt is drawn (typed while a command runs, they
        // wait for it). Backspace takes back a character.
        #expect(mia.screen.waitFor("> "))
        mia.type("pointz\u{7F}")
        #expect(mia.screen.waitFor("\r\u{1B}[J> point"), "the line drawn again without the z: \(mia.screen.text.debugDescription)")
        mia.type("s\r")
        #expect(mia.screen.waitFor("Points: 10 ✦"), "\(mia.screen.text.debugDescription)")
        // Enter in the middle of a key's escape sequence is still Enter.
        #expect(mia.screen.waitFor("> "))
        mia.type("whoami\u{1B}[\r")
        #expect(mia.screen.waitFor("You are Mia (birthday)."), "\(mia.screen.text.debugDescription)")
        #expect(mia.screen.waitFor("> "))
        mia.type("help\r")
        #expect(mia.screen.waitFor("empty line leaves. News never lands"), "the keys are in the help at a terminal")
        // Ctrl-D on an empty line ends the input, as the terminal driver's would.
        #expect(mia.screen.waitFor("> "))
        mia.type("\u{04}")
        #expect(mia.waitForExit() == 0, "\(mia.errors.text)")
        let modes = try #require(mia.localModes())
        #expect(modes & tcflag_t(ECHO) != 0 && modes & tcflag_t(ICANON) != 0 && modes & tcflag_t(ISIG) != 0,
                "the terminal is given back with its echo, line editing and signal keys")
    }

    /// The cursor moves along the line, and keys go in where it is: the line is drawn again
    /// with the cursor put back on its character, also on a row above the typing's last.
    @Test func theCursorMovesAndKeysGoInWhereItIs() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let mia = try TerminalProcess(["play"] + server.address + ["--character", "mia"], home: try makeTemporaryDirectory())
        #expect(mia.screen.waitFor("Type help for commands."), "\(mia.errors.text)")
        #expect(mia.screen.waitFor("> "))
        // Home, Right, then an h: "> w" leaves the cursor on the o, in the fourth column.
        mia.type("woami\u{1B}[H\u{1B}[C")
        #expect(mia.screen.waitFor("\r\u{1B}[J> woami\r\u{1B}[3C"), "\(mia.screen.text.debugDescription)")
        mia.type("h\r")
        #expect(mia.screen.waitFor("You are Mia (birthday)."), "\(mia.screen.text.debugDescription)")
        // Ctrl-A, Ctrl-F, an o; Alt-F to the end of the word, Ctrl-K for the rest; End, Enter.
        #expect(mia.screen.waitFor("> "))
        mia.type("pints extra\u{01}\u{06}o\u{1B}f\u{0B}\u{05}\r")
        #expect(mia.screen.waitFor("Points: 0 ✦"), "\(mia.screen.text.debugDescription)")
        // Delete takes the character under the cursor; Ctrl-Left goes back a word.
        #expect(mia.screen.waitFor("> "))
        mia.type("xwhoami\u{1B}[1;5D\u{1B}[3~\r")
        #expect(mia.screen.waitFor("You are Mia (birthday).\r\n"), "\(mia.screen.text.debugDescription)")
        // A character of several bytes put in before others is drawn once whole, never cut.
        #expect(mia.screen.waitFor("> "))
        mia.type("🎂x\u{01}é")
        #expect(mia.screen.waitFor("\r\u{1B}[J> é🎂x\r\u{1B}[3C"), "\(mia.screen.text.suffix(300).debugDescription)")
        #expect(!mia.screen.text.contains("\u{FFFD}"), "\(mia.screen.text.suffix(300).debugDescription)")
        mia.type("\u{15}\u{0B}")
        // "> " and 85 x take two rows of 80; Home puts the cursor on the first row, one up.
        mia.type(String(repeating: "x", count: 85) + "\u{1B}[H")
        #expect(mia.screen.waitFor(String(repeating: "x", count: 85) + "\u{1B}[1A\r\u{1B}[2C"), "\(mia.screen.text.suffix(300).debugDescription)")
        // News clears from the cursor's row, the first: not from a row above it.
        let adjust = try BQProcess.run(["admin", "adjust-points", "10", "--reason", "karaoke"] + server.adminFlags)
        #expect(adjust.status == 0, "\(adjust.err)")
        #expect(mia.screen.waitFor("\r\u{1B}[JThe organizer adjusted the points"), "\(mia.screen.text.suffix(300).debugDescription)")
        // Enter with the cursor on the first row: the line is drawn again to its end first, so
        // that the answer starts below the typing, not over its second row.
        mia.type("\r")
        #expect(mia.screen.waitFor(String(repeating: "x", count: 85) + "\r\n"), "\(mia.screen.text.suffix(300).debugDescription)")
        #expect(mia.screen.waitFor("Unknown command"), "\(mia.screen.text.suffix(300).debugDescription)")
        #expect(mia.screen.waitFor("> "))
        mia.type("\u{04}")
        #expect(mia.waitForExit() == 0, "\(mia.errors.text)")
    }

    /// A paste into the middle of the line is drawn once it is all in, not once per byte (each
    /// drawing clears the typing and writes it whole again: pages of text took minutes).
    @Test func aPasteIntoTheLineIsDrawnOnceItIsAllIn() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let mia = try TerminalProcess(["play"] + server.address + ["--character", "mia"], home: try makeTemporaryDirectory())
        #expect(mia.screen.waitFor("Type help for commands."), "\(mia.errors.text)")
        #expect(mia.screen.waitFor("> "))
        // "ami", the cursor back at its start: what comes now goes into the line, not at its end.
        mia.type("ami\u{01}")
        #expect(mia.screen.waitFor("\r\u{1B}[J> ami\r\u{1B}[2C"), "\(mia.screen.text.suffix(300).debugDescription)")
        let clearsBefore = mia.screen.text.components(separatedBy: "\u{1B}[J").count
        // 400 characters pasted in one write, then Ctrl-U takes them back off; "who" makes "whoami".
        mia.type(String(repeating: "x", count: 400) + "\u{15}")
        mia.type("who\r")
        #expect(mia.screen.waitFor("You are Mia (birthday)."), "\(mia.screen.text.suffix(300).debugDescription)")
        let clears = mia.screen.text.components(separatedBy: "\u{1B}[J").count - clearsBefore
        // A handful: the pty may hand the paste over in a few pieces, each drawn once.
        #expect(clears < 50, "the typing was cleared and drawn \(clears) times")
        #expect(mia.screen.waitFor("> "))
        mia.type("\u{04}")
        #expect(mia.waitForExit() == 0, "\(mia.errors.text)")
    }

    /// A character of several bytes typed with the cursor in a row's last column: the line is
    /// cleared from the row it is on, not one above (which would rub out the line before it).
    @Test func aCharacterTypedAtARowsEndClearsFromItsOwnRow() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let mia = try TerminalProcess(["play"] + server.address + ["--character", "mia"], home: try makeTemporaryDirectory(), columns: 20)
        #expect(mia.screen.waitFor("> "), "\(mia.errors.text)")
        // "> " and 18 a fill the row; Ctrl-A and 17 Ctrl-F put the cursor on the last a, in the last column.
        mia.type(String(repeating: "a", count: 18) + "\u{01}" + String(repeating: "\u{06}", count: 17) + "é")
        #expect(mia.screen.waitFor("\r\u{1B}[J> " + String(repeating: "a", count: 17) + "éa"), "\(mia.screen.text.suffix(200).debugDescription)")
        mia.type("\u{15}\u{0B}\u{04}")
        #expect(mia.waitForExit() == 0, "\(mia.errors.text)")
    }

    /// Typed at a terminal with the output sent elsewhere (`bq play --json > file`): the prompts
    /// go to the terminal, and the output holds the protocol's lines alone.
    @Test func promptsStayOnTheTerminalWhenTheOutputGoesElsewhere() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let mia = try TerminalProcess(["play", "--json"] + server.address + ["--character", "mia"],
                                      home: try makeTemporaryDirectory(), stdoutPiped: true)
        let output = try #require(mia.output)
        #expect(mia.screen.waitFor("> "), "the prompt, on the terminal: \(mia.screen.text.debugDescription)")
        let adjust = try BQProcess.run(["admin", "adjust-points", "2", "--reason", "news"] + server.adminFlags)
        #expect(adjust.status == 0, "\(adjust.err)")
        #expect(output.waitFor(#""push":"patch""#))
        mia.type("discover\r")
        #expect(output.waitFor(#""result":{"found":0}"#))
        #expect(mia.screen.waitFor("> "), "prompted again: \(mia.screen.text.debugDescription)")
        mia.type("quit\r")
        #expect(mia.waitForExit() == 0)
        #expect(output.waitForEnd())
        let lines = output.text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(!lines.isEmpty && lines.allSatisfy { (try? JSONParser.parse(Array($0.utf8)))?.objectValue != nil },
                "only JSON objects, one a line: \(output.text.debugDescription)")
    }

    /// Up and Down bring back earlier commands, and Down past the newest what was being typed.
    @Test func upAndDownBringBackEarlierCommands() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let mia = try TerminalProcess(["play"] + server.address + ["--character", "mia"], home: try makeTemporaryDirectory())
        #expect(mia.screen.waitFor("Type help for commands."), "\(mia.errors.text)")
        #expect(mia.screen.waitFor("> "))
        mia.type("whoami\r")
        #expect(mia.screen.waitFor("You are Mia (birthday)."), "\(mia.screen.text.debugDescription)")
        #expect(mia.screen.waitFor("> "))
        mia.type("points\r")
        #expect(mia.screen.waitFor("Points: 0 ✦"), "\(mia.screen.text.debugDescription)")
        #expect(mia.screen.waitFor("> "))
        // Up twice (the second in application mode, as some terminals send it), then Enter.
        mia.type("who\u{1B}[A")
        #expect(mia.screen.waitFor("\r\u{1B}[J> points"), "\(mia.screen.text.debugDescription)")
        mia.type("\u{1B}OA")
        #expect(mia.screen.waitFor("\r\u{1B}[J> whoami"), "\(mia.screen.text.debugDescription)")
        mia.type("\u{1B}[A\r")
        #expect(mia.screen.waitFor("You are Mia (birthday)."), "the oldest stays: \(mia.screen.text.debugDescription)")
        // Down past the newest gives back the typing.
        #expect(mia.screen.waitFor("> "))
        mia.type("poi\u{1B}[A")
        #expect(mia.screen.waitFor("\r\u{1B}[J> whoami"), "\(mia.screen.text.debugDescription)")
        mia.type("\u{1B}[B")
        #expect(mia.screen.waitFor("\r\u{1B}[J> poi"), "\(mia.screen.text.debugDescription)")
        mia.type("nts\r")
        #expect(mia.screen.waitFor("Points: 0 ✦"), "\(mia.screen.text.debugDescription)")
        // The typing comes back with its cursor where it was left.
        #expect(mia.screen.waitFor("> "))
        mia.type("pints\u{01}\u{06}\u{1B}[A\u{1B}[Bo\r")
        #expect(mia.screen.waitFor("Points: 0 ✦"), "\(mia.screen.text.debugDescription)")
        #expect(mia.screen.waitFor("> "))
        mia.type("\u{04}")
        #expect(mia.waitForExit() == 0, "\(mia.errors.text)")
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
        try #require(mia.waitForExit() != nil)
        #expect(mia.process.terminationReason == .uncaughtSignal && mia.process.terminationStatus == SIGINT,
                "ended by SIGINT, as before")
        let modes = try #require(mia.localModes())
        #expect(modes & tcflag_t(ECHO) != 0 && modes & tcflag_t(ICANON) != 0)
    }

    /// What is typed while a command waits for the server is not echoed among its output and
    /// the news: it waits, unshown, and the next prompt shows it, ready to edit.
    @Test func keysTypedWhileACommandRunsWaitForTheNextPrompt() throws {
        let release = DispatchSemaphore(value: 0)
        let fake = Self.slowToDiscover(release)
        defer { fake.stop() }
        let mia = try TerminalProcess(["play", "--port", String(fake.port), "--character", "mia"], home: try makeTemporaryDirectory())
        #expect(mia.screen.waitFor("Type help for commands."), "\(mia.errors.text)")
        #expect(mia.screen.waitFor("> "))
        mia.type("discover\r")
        #expect(mia.screen.waitFor("discover"))
        // The command is running once the editor has handed the terminal back to its quiet mode.
        #expect(mia.waitForLocalModes { $0 & tcflag_t(ISIG) != 0 && $0 & tcflag_t(ECHO) == 0 },
                "while a command runs: no echo, signal keys on")
        mia.type("board")
        release.signal()
        #expect(mia.screen.waitFor("No hidden dares right now."))
        let afterDiscover = mia.screen.text.components(separatedBy: "discover").dropFirst().joined(separator: "discover")
        #expect(mia.screen.waitFor("> board"), "the typed-ahead keys, at the next prompt: \(mia.screen.text.debugDescription)")
        #expect(!afterDiscover.components(separatedBy: "No hidden dares").first!.contains("board"),
                "not echoed before the answer: \(mia.screen.text.debugDescription)")
        mia.type("\r")
        #expect(mia.screen.waitFor("Challenges"))
        #expect(mia.screen.waitFor("> "))
        mia.type("\u{04}")
        #expect(mia.waitForExit() == 0)
    }

    /// SIGINT (what Ctrl-C sends while a command waits for the server: the terminal's signal
    /// keys are on then) still ends `bq play` at once, names the change whose answer it gives
    /// up, and gives the terminal back. (This pseudo-terminal is no one's controlling terminal,
    /// so the test sends the signal itself.)
    @Test func anInterruptWhileACommandRunsEndsPlayNamesItsChangeAndGivesTheTerminalBack() throws {
        let release = DispatchSemaphore(value: 0)
        let arrived = DispatchSemaphore(value: 0)
        let fake = Self.slowToDiscover(release, arrived: arrived)
        defer {
            release.signal()
            fake.stop()
        }
        let mia = try TerminalProcess(["play", "--port", String(fake.port), "--character", "mia"], home: try makeTemporaryDirectory())
        #expect(mia.screen.waitFor("> "), "\(mia.errors.text)")
        mia.type("discover\r")
        // The signal keys are on once the line is read, a moment before the change is sent.
        #expect(mia.waitForLocalModes { $0 & tcflag_t(ISIG) != 0 && $0 & tcflag_t(ECHO) == 0 })
        #expect(arrived.wait(timeout: .now() + 30) == .success, "the discovery never reached the server")
        kill(mia.process.processIdentifier, SIGINT)
        try #require(mia.waitForExit() != nil)
        #expect(mia.process.terminationReason == .uncaughtSignal && mia.process.terminationStatus == SIGINT)
        // The change it cut short is named, as a Ctrl-C at the prompt names a kept one.
        #expect(mia.errors.waitFor("Left with no answer to discover: it may or may not have been made"), "\(mia.errors.text)")
        let modes = try #require(mia.localModes())
        #expect(modes & tcflag_t(ECHO) != 0 && modes & tcflag_t(ICANON) != 0 && modes & tcflag_t(ISIG) != 0)
    }

    /// A wide character that does not fit at a row's end goes to the next row whole: the rows
    /// to clear before printing news count it so.
    @Test func aWideCharacterWrappedWholeIsClearedWithItsRows() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let mia = try TerminalProcess(["play"] + server.address + ["--character", "mia"], home: try makeTemporaryDirectory())
        #expect(mia.screen.waitFor("Type help for commands."), "\(mia.errors.text)")
        #expect(mia.screen.waitFor("> "))
        // "> " and 77 x fill 79 columns; the cake takes the next row's first two; 79 y run onto a third.
        mia.type(String(repeating: "x", count: 77) + "🎂" + String(repeating: "y", count: 79))
        #expect(mia.screen.waitFor(String(repeating: "y", count: 79)), "all of it read before the news")
        let adjust = try BQProcess.run(["admin", "adjust-points", "10", "--reason", "karaoke"] + server.adminFlags)
        #expect(adjust.status == 0, "\(adjust.err)")
        #expect(mia.screen.waitFor("\r\u{1B}[2A\u{1B}[J"), "two rows up, not one: \(mia.screen.text.suffix(300).debugDescription)")
        mia.type("\u{15}\u{04}")
        #expect(mia.waitForExit() == 0)
    }
}
