import Foundation
import JSON
import Testing

/// `bq play` as a person sees it: a real server, real processes, stdin and stdout.
@Suite struct PlayTests {
    @Test func claimCompleteAndUnlock() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let home = try makeTemporaryDirectory()
        let mia = try BQProcess(["play"] + server.address + ["--character", "mia"], home: home)
        #expect(mia.output.waitFor("You are now Mia (birthday)."))
        #expect(mia.output.waitFor("Challenges (0/15 done)"))
        #expect(mia.output.waitFor("Type help for commands."))

        mia.send(#"complete c15 text "we paddled all the way" --option a"#)
        #expect(mia.output.waitFor("Completed “Paddle to Heron Island”. Points: 100 ✦"))
        mia.send("unlock r04")
        #expect(mia.output.waitFor("Unlocked r04! Points: 0 ✦"))
        mia.send("rewards")
        #expect(mia.output.waitFor("Rosa's Lemon Cake, Finally"))
        #expect(mia.output.waitFor("unlocked"))
        mia.send("show c15")
        #expect(mia.output.waitFor("proof: “we paddled all the way”"))
        mia.send("quit")
        #expect(mia.waitForExit() == 0)

        // The device file kept the token: the next start resumes without asking.
        let again = try BQProcess.run(["play"] + server.address + ["whoami"], home: home)
        #expect(again.status == 0)
        #expect(again.out.contains("You are Mia (birthday)."), "resumed as mia without being asked")
        #expect(!again.out.contains("Welcome back"), "a one-shot prints its result, not a greeting")
        #expect(again.out.contains("Points: 0 ✦  (earned 100, spent 100)"))
        let greeted = try BQProcess(["play"] + server.address, home: home)
        #expect(greeted.output.waitFor("Welcome back, Mia."), "by name, as the game shows it")
        greeted.send("quit")
        #expect(greeted.waitForExit() == 0)
    }

    /// `claims_need_pin`: nobody reaches a character first without its PIN, not even a free one;
    /// the device that then holds it signs in as usual.
    @Test func aServerWhereClaimsNeedThePinSaysToGiveIt() throws {
        let server = try ServerProcess(environment: ["BQ_CLAIMS_NEED_PIN": "1"])
        defer { server.stop() }
        let home = try makeTemporaryDirectory()
        let without = try BQProcess.run(["play"] + server.address + ["--character", "sam", "whoami"], home: home)
        #expect(without.status == 1, "\(without.err)")
        #expect(without.err.contains("Claiming Sam needs Sam's PIN on this server"), "\(without.err)")
        #expect(without.err.contains("Give Sam's PIN with --pin"), "\(without.err)")
        let wrong = try BQProcess.run(["play"] + server.address + ["--character", "sam", "--pin", "0000", "whoami"], home: home)
        #expect(wrong.status == 1 && wrong.err.contains("Cannot claim Sam: wrong PIN"), "\(wrong.err)")
        let right = try BQProcess.run(["play"] + server.address + ["--character", "sam", "--pin", "7305", "whoami"], home: home)
        #expect(right.status == 0, "\(right.err)")
        #expect(right.out.contains("You are Sam (organizer)"), "\(right.out)")
        // The same device again, from its saved session and by a fresh claim, needs no PIN.
        let resumed = try BQProcess.run(["play"] + server.address + ["whoami"], home: home)
        #expect(resumed.status == 0 && resumed.out.contains("You are Sam (organizer)"), "\(resumed.out) \(resumed.err)")
        let characters = try BQProcess.run(["admin"] + server.adminFlags + ["status"])
        #expect(characters.out.contains("sam"), "\(characters.out)")
    }

    /// At the picker, a free character on such a server is asked for its PIN, as a takeover is.
    @Test func pickingAFreeCharacterWhereClaimsNeedThePinAsksForIt() throws {
        let server = try ServerProcess(environment: ["BQ_CLAIMS_NEED_PIN": "true"])
        defer { server.stop() }
        let priya = try BQProcess(["play"] + server.address, home: try makeTemporaryDirectory())
        #expect(priya.output.waitFor("Who are you?"))
        priya.send("priya")
        #expect(priya.output.waitFor("Claiming Priya needs Priya's PIN on this server"), "\(priya.output.text)")
        #expect(priya.output.waitFor("PIN for priya (empty to choose another):"))
        priya.send("1964")
        #expect(priya.output.waitFor("You are now Priya (friend)."))
        #expect(priya.finish() == 0)
    }

    @Test func pickingACharacterInteractively() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let dani = try BQProcess.run(["play"] + server.address + ["--character", "dani", "whoami"], home: try makeTemporaryDirectory())
        #expect(dani.status == 0, "\(dani.err)")
        let theo = try BQProcess(["play"] + server.address, home: try makeTemporaryDirectory())
        #expect(theo.output.waitFor("Who are you?"))
        #expect(theo.output.waitFor("theo Theo (friend)"))
        #expect(theo.output.waitFor("Claimed on other devices: dani (type its id to take it over with its PIN)"))
        theo.send("theo")
        #expect(theo.output.waitFor("You are now Theo (friend)."))
        #expect(theo.output.waitFor("Your dare: none yet."))
        #expect(theo.output.waitFor("dare save \"title\" \"description\" <25|50|75|100>"), "the points a dare may have")
        #expect(theo.output.waitFor("Rewards you gave"))
        #expect(theo.output.waitFor("One Year of Chauffeur Service"))
        #expect(theo.finish() == 0)

        // Leaving at the picker is a choice, not a failure.
        let left = try BQProcess.run(["play"] + server.address, home: try makeTemporaryDirectory(), stdin: "quit\n")
        #expect(left.status == 0, "\(left.err)")
        // The end of a script piped in without --character is no choice: it failed.
        let ended = try BQProcess.run(["play"] + server.address, home: try makeTemporaryDirectory(), stdin: "")
        #expect(ended.status == 1, "\(ended.err)")
    }

    /// The PIN question is shown even when the input is a pipe: the next line is read as the
    /// PIN either way, and unannounced it would be spent on a wrong guess.
    @Test func takingOverFromThePickerAsksForThePinVisibly() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let first = try BQProcess.run(["play"] + server.address + ["--character", "theo", "whoami"], home: try makeTemporaryDirectory())
        #expect(first.status == 0, "\(first.err)")
        let theo = try BQProcess(["play"] + server.address, home: try makeTemporaryDirectory())
        #expect(theo.output.waitFor("Claimed on other devices: theo"))
        theo.send("theo")
        #expect(theo.output.waitFor("PIN for theo (empty to choose another):"))
        theo.send("3390")
        #expect(theo.output.waitFor("You are now Theo (friend)."))
        #expect(theo.finish() == 0)
    }

    /// At a terminal the PIN is typed unseen, and the terminal is given back as it was.
    @Test func aPinTypedAtATerminalIsNotShown() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let first = try BQProcess.run(["play"] + server.address + ["--character", "theo", "whoami"], home: try makeTemporaryDirectory())
        #expect(first.status == 0, "\(first.err)")
        let theo = try TerminalProcess(["play", "--no-color"] + server.address, home: try makeTemporaryDirectory())
        #expect(theo.screen.waitFor("Claimed on other devices: theo"), "\(theo.screen.text)")
        theo.type("theo\r")
        #expect(theo.screen.waitFor("PIN for theo (empty to choose another):"), "\(theo.screen.text)")
        theo.type("3390\r")
        #expect(theo.screen.waitFor("You are now Theo (friend)."), "\(theo.screen.text)")
        #expect(!theo.screen.text.contains("3390"), "\(theo.screen.text)")
        theo.type("quit\r")
        #expect(theo.waitForExit() == 0)
    }

    @Test func anotherPlayersChangeAppearsWithoutInput() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let home = try makeTemporaryDirectory()
        let mia = try BQProcess(["play"] + server.address + ["--character", "mia"], home: home)
        #expect(mia.output.waitFor("??? no hidden dares"))
        #expect(mia.output.waitFor("Type help for commands."))

        let priyaHome = try makeTemporaryDirectory()
        let saved = try BQProcess.run(["play"] + server.address + ["--character", "priya", "dare", "save",
                                       "Cannonball", "Jump into the lake with all your clothes on", "75"], home: priyaHome)
        #expect(saved.status == 0, "\(saved.err)")
        let delivered = try BQProcess.run(["play"] + server.address + ["dare", "deliver"], home: priyaHome)
        #expect(delivered.status == 0, "\(delivered.err)")
        // Mia typed nothing: the push alone printed this.
        #expect(mia.output.waitFor("A secret dare arrived: ??? now hides 1"))

        let bonus = try BQProcess.run(["admin", "adjust-points", "60", "--reason", "karaoke bonus"] + server.adminFlags)
        #expect(bonus.status == 0, "\(bonus.err)")
        #expect(mia.output.waitFor("The organizer adjusted the points: +60 ✦"))
        #expect(mia.output.waitFor("Points: 60 ✦  (earned 60, spent 0)"))

        let forced = try BQProcess.run(["admin", "force-complete", "c02"] + server.adminFlags)
        #expect(forced.status == 0, "\(forced.err)")
        #expect(mia.output.waitFor("★"))
        #expect(mia.output.waitFor("“Wisdom From Strangers” marked done by the organizer +35 ✦"), "forced: not Mia's doing")

        mia.send("discover")
        #expect(mia.output.waitFor("You found 1 dare!"))
        mia.send("board")
        #expect(mia.output.waitFor("Cannonball"))
        #expect(mia.output.waitFor("dare by Priya"))

        // The organizer frees Mia's character: her running client is told and stops.
        let unclaimed = try BQProcess.run(["admin", "unclaim", "mia"] + server.adminFlags)
        #expect(unclaimed.status == 0, "\(unclaimed.err)")
        #expect(mia.output.waitFor("You were signed out"))
        #expect(mia.waitForExit() == 3)
        // A script's output is its commands' results: the note waits for a person.
        let script = try BQProcess.run(["play"] + server.address + ["whoami"], home: home)
        #expect(!script.out.contains("Your last session"), "\(script.out)")
        // The next interactive start says why the saved session is gone, once, and then asks.
        let next = try BQProcess(["play"] + server.address, home: home)
        #expect(next.output.waitFor("Your last session as mia was ended by the server: "))
        #expect(next.output.waitFor("Who are you?"))
        next.closeInput()
        _ = next.waitForExit()
        let after = try BQProcess(["play"] + server.address, home: home)
        #expect(after.output.waitFor("Who are you?"))
        after.closeInput()
        _ = after.waitForExit()
        #expect(!after.output.text.contains("Your last session"), "\(after.output.text)")
    }

    @Test func refusalsShowTheServersMessage() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let home = try makeTemporaryDirectory()
        let mia = try BQProcess(["play"] + server.address + ["--character", "mia"], home: home)
        #expect(mia.output.waitFor("Type help for commands."))
        mia.send("unlock r04")
        #expect(mia.output.waitFor("✗ Not enough points: have 0, need 100"))
        mia.send("complete c06")
        #expect(mia.output.waitFor("Completed “Thirty Push-ups, Eventually”. Points: 35 ✦"))
        mia.send("complete c06")
        #expect(mia.output.waitFor("✗ "))
        #expect(mia.output.waitFor("already completed"))
        // Worded for her, not for the protocol's fields.
        mia.send("complete c04 text \"\"")
        #expect(mia.output.waitFor("✗ The text must be 1 to 2000 characters, got 0"), "\(mia.output.text)")
        #expect(mia.finish() == 0)

        // One-shot: the refusal goes to stderr and the exit status says it failed.
        let again = try BQProcess.run(["play"] + server.address + ["complete", "c06", "done"], home: home)
        #expect(again.status == 1)
        #expect(again.err.contains("already completed"))

        // A friend may not complete challenges: the server's forbidden message is shown.
        let dani = try BQProcess.run(["play"] + server.address + ["--character", "dani", "complete", "c01"],
                                     home: try makeTemporaryDirectory())
        #expect(dani.status == 1)
        #expect(!dani.err.isEmpty)

        // Mia is claimed by another device: claiming without the PIN is refused with the server's words.
        let thief = try BQProcess.run(["play"] + server.address + ["--character", "mia", "board"],
                                      home: try makeTemporaryDirectory())
        #expect(thief.status == 1)
        #expect(thief.err.lowercased().contains("claimed"))
        #expect(thief.err.contains("give its PIN with --pin"), "\(thief.err)")
    }

    @Test func scriptModeRunsCommandsFromStdin() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let result = try BQProcess.run(["play"] + server.address + ["--character", "mia", "--script"],
                                       home: try makeTemporaryDirectory(),
                                       stdin: "# Saturday's plan\ncomplete c13 photo https://example.com/menu.jpg\ncomplete c02\n"
                                           + "  # then the first gift\nunlock r02\ntimeline\n"
                                           + "complete c15 photo https://example.com/cairn.jpg --option b\n")
        #expect(result.status == 0, "comments are skipped: \(result.err)")
        #expect(result.out.contains("Completed “Menu Poet”. Points: 35 ✦"))
        #expect(result.out.contains("Completed “The Ridge Walk”"), "option B's own title")
        #expect(result.out.contains("Unlocked r02! Points: 20 ✦"))
        #expect(result.out.contains("Gift unlocked: “A Letter From Home” from Mom & Dad -50 ✦"))
    }

    @Test func helpIsShownWhereverItIsAsked() throws {
        // The command words after the options are captured as they are; a help request must
        // not be taken for one, nor need a server.
        for arguments in [["play", "--help"], ["play", "-h", "--port", "1"], ["play", "--port", "1", "--help"]] {
            let result = try BQProcess.run(arguments, home: try makeTemporaryDirectory())
            #expect(result.status == 0, "\(arguments): \(result.err)")
            #expect(result.out.contains("OVERVIEW: Play BirthdayQuest"), "\(arguments)")
        }
    }

    @Test func theDeviceFileGoesUnderHome() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let home = try makeTemporaryDirectory()
        // HOME alone, as a person would set it: no XDG_CONFIG_HOME to fall back on.
        let result = try BQProcess.run(["play"] + server.address + ["--character", "mia", "whoami"],
                                       environment: ["HOME": home.path, "XDG_CONFIG_HOME": ""])
        #expect(result.status == 0, "\(result.err)")
        let directory = home.appendingPathComponent(".config/bq").path
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        #expect(files.count == 1 && files.first?.hasPrefix("play-") == true, "\(files)")
    }

    @Test func theOrganizerRunsTheGameFromPlay() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let home = try makeTemporaryDirectory()
        let organizer = try BQProcess.run(["play"] + server.address + ["--character", "sam", "--script"], home: home,
                                          stdin: "adjust-points 15 --reason \"karaoke bonus\"\nforce-complete --help\nhelp\n")
        #expect(organizer.status == 0, "\(organizer.err)")
        #expect(organizer.out.contains("Points: 15 ✦"), "\(organizer.out)")
        #expect(!organizer.out.contains("[version"), "a version is the console's, no use on a player's screen: \(organizer.out)")
        #expect(organizer.out.contains("USAGE: force-complete"), "help inside play, not an error")
        #expect(organizer.out.contains("adjust-points <delta>"), "the organizer's help lists the tools")

        let player = try BQProcess.run(["play"] + server.address + ["--character", "mia", "adjust-points", "15", "--reason", "x"],
                                       home: try makeTemporaryDirectory())
        #expect(player.status == 1, "refused, as the server would: the command exists")
        #expect(player.err.contains("adjust-points is the organizer's"), "\(player.err)")
        // Asked at the game (from a pipe, not --script): the question quotes what had quotes.
        let asked = try BQProcess.run(["play"] + server.address + ["--character", "sam"], home: home,
                                      stdin: "adjust-points -5 --reason \"pipe test\"\nn\n")
        #expect(asked.out.contains(#"adjust-points -5 --reason "pipe test": are you sure?"#), "\(asked.out)")
        let quoting = try BQProcess.run(["play"] + server.address + ["--character", "sam"], home: home,
                                        stdin: #"adjust-points -5 --reason "say \"hi\"""# + "\nn\n")
        #expect(quoting.out.contains(#"--reason "say \"hi\"": are you sure?"#), "as it would be typed again: \(quoting.out)")
        let option = try BQProcess.run(["play"] + server.address + ["--bogus", "whoami"], home: home)
        #expect(option.status == 64)
        #expect(option.err.contains("Unknown option --bogus"), "\(option.err)")
        let state = try BQProcess.run(["admin", "status", "--port", String(server.port), "--data", server.dataDirectory.path])
        #expect(state.out.contains("Points 15 ✦"), "\(state.out)")
    }

    /// A one-shot's words are checked before it connects: a mistyped option or a word too many
    /// is a usage error (64) that signs nobody in and claims nothing, as an unknown command is.
    @Test func aOneShotWithBadWordsClaimsNothing() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let home = try makeTemporaryDirectory()
        let mistakes: [(words: [String], says: String)] = [
            (["unlock", "r01", "--bogus"], "Usage: unlock <reward id> (one at a time)"),
            (["complete", "c02", "done", "--opton", "b"], "Usage: complete <challenge>"),
            (["dare", "save", "Cannonball", "Into the lake", "fifty"], "Usage: dare save"),
            (["whoami", "please"], "Usage: whoami takes no arguments (got please)"),
            (["force-unlock", "r01", "--no-deduc"], "Unknown option '--no-deduc'"),
            (["adjust-points", "5", "--reason", "karaoke", "--idem", "k1"], "--idem is for running a one-shot again"),
            (["bogus"], "Unknown command bogus"),
        ]
        for mistake in mistakes {
            let run = try BQProcess.run(["play"] + server.address + ["--character", "dani"] + mistake.words, home: home)
            #expect(run.status == 64, "\(mistake.words): \(run.err)")
            #expect(run.err.contains(mistake.says), "\(mistake.words): \(run.err)")
            #expect(!run.out.contains("You are now"), "signed in: \(run.out)")
        }
        let log = try BQProcess.run(["admin", "log", "--port", String(server.port), "--data", server.dataDirectory.path])
        #expect(log.status == 0, "\(log.err)")
        #expect(log.out.contains("game_seeded") && !log.out.contains("character_claimed"), "a claim was made: \(log.out)")
    }

    @Test func theTimelineShowsLocalTimeAndDay() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let home = try makeTemporaryDirectory()
        // Five hours and three quarters from UTC: no clock reading could be mistaken for it.
        let zone = ["TZ": "Asia/Kathmandu"]
        let human = try BQProcess.run(["play"] + server.address + ["--character", "mia", "--script"], home: home,
                                      stdin: "complete c02\ntimeline\n", environment: zone)
        #expect(human.status == 0, "\(human.err)")
        let raw = try BQProcess.run(["play"] + server.address + ["--character", "mia", "--json", "timeline"], home: home)
        let at = try #require(raw.out.split(separator: "\n").compactMap { line -> String? in
            guard let range = line.range(of: #""at":""#) else { return nil }
            return String(line[range.upperBound...].prefix(24))
        }.first)
        let parser = ISO8601DateFormatter()
        parser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        // Without the zone's data both sides would be UTC and prove nothing.
        let kathmandu = try #require(TimeZone(identifier: "Asia/Kathmandu"))
        try #require(kathmandu.secondsFromGMT() == 20_700)
        formatter.timeZone = kathmandu
        formatter.dateFormat = "EEE HH:mm"
        let expected = formatter.string(from: try #require(parser.date(from: at)))
        #expect(human.out.contains(expected), "expected \(expected) for \(at) in \(human.out)")
    }

    @Test func rowsFitAnEightyColumnTerminal() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let home = try makeTemporaryDirectory()
        // A done option B has the longest status of a row.
        let result = try BQProcess.run(["play"] + server.address + ["--character", "mia", "--script"], home: home,
                                       stdin: "complete c15 photo https://example.com/cairn.jpg --option b\nboard\nrewards\nshow c01\nshow r01\nhelp\n",
                                       environment: ["COLUMNS": "80"])
        #expect(result.status == 0, "\(result.err)")
        let rows = result.out.split(separator: "\n").filter { $0.hasPrefix("  ") && $0.count > 10 }
        #expect(rows.count >= 24, "\(result.out)")
        #expect(rows.contains { $0.contains("done (option B)") })
        for row in rows { #expect(row.count <= 80, "\(row.count) columns: \(row)") }
        // Long texts (a challenge's description, the help's notes) are broken between words to fit too.
        #expect(result.out.contains("Be in the lake before eight"))
        #expect(result.out.contains("Quote text with spaces"))
        for line in result.out.split(separator: "\n") { #expect(line.count <= 80, "\(line.count) columns: \(line)") }
        // Without a width (a pipe), rows are whole.
        let whole = try BQProcess.run(["play"] + server.address + ["--character", "mia", "rewards"], home: home)
        #expect(whole.out.contains("One Year of Chauffeur Service"))
    }

    @Test func jsonModePrintsProtocolLines() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let result = try BQProcess.run(["play"] + server.address + ["--character", "sam", "--json", "whoami"],
                                       home: try makeTemporaryDirectory())
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.hasPrefix(#"{"push":"hello""#))
        #expect(result.out.contains(#""role":"organizer""#))
        #expect(result.out.contains(#""push":"snapshot""#))
        #expect(!result.out.contains("You are"))
    }

    /// One device file holds one session: naming another character says that it switched, and
    /// a session the server ended is named when a one-shot finds none that works.
    @Test func aSwitchAndAnEndedSessionAreSaidWithTheCharacterTheyConcern() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let home = try makeTemporaryDirectory()
        #expect(try BQProcess.run(["play"] + server.address + ["--character", "mia", "whoami"], home: home).status == 0)
        let switched = try BQProcess.run(["play"] + server.address + ["--character", "sam", "whoami"], home: home)
        #expect(switched.status == 0, "\(switched.err)")
        #expect(switched.out.contains("This device's file held mia's session and now holds sam's"), "\(switched.out)")

        #expect(try BQProcess.run(["admin", "unclaim", "sam"] + server.adminFlags).status == 0)
        let ended = try BQProcess.run(["play"] + server.address + ["whoami"], home: home)
        #expect(ended.status == 1)
        #expect(ended.err.contains("The session as sam saved here no longer works: claim again with --character sam"), "\(ended.err)")
        #expect(!ended.err.contains("--character mia"), "\(ended.err)")
        let again = try BQProcess.run(["play"] + server.address + ["whoami"], home: home)
        #expect(again.err.contains("claim again with --character sam"), "still named the next time: \(again.err)")
    }

    /// A completion cannot be undone: at a terminal, a 2-in-1 completed without `--option` asks
    /// which option was done instead of recording option A; from a pipe option A stays the default.
    @Test func aTwoInOneAsksWhichOptionAtATerminal() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let home = try makeTemporaryDirectory()
        let mia = try TerminalProcess(["play", "--no-color"] + server.address + ["--character", "mia"], home: home)
        #expect(mia.screen.waitFor("> "), "\(mia.errors.text)")
        mia.type("complete c01 done\r")
        #expect(mia.screen.waitFor("c01 is 2-in-1: did you do a) “Sunrise Swim” or b) “Sunrise Run”? [a/b] "), "\(mia.screen.text)")
        mia.type("\r")
        #expect(mia.screen.waitFor("Nothing completed: answer a or b"), "\(mia.screen.text)")
        mia.type("complete c01 done\r")
        #expect(mia.screen.waitFor("[a/b] "))
        mia.type("c\r")
        #expect(mia.screen.waitFor("Answer a or b (Enter completes nothing): [a/b] "), "asked again: \(mia.screen.text)")
        mia.type("b\r")
        #expect(mia.screen.waitFor("Completed “Sunrise Run”. Points: 75 ✦"), "\(mia.screen.text)")
        mia.type("quit\r")
        #expect(mia.waitForExit() == 0)

        let piped = try BQProcess.run(["play", "--no-color"] + server.address + ["--script"], home: home, stdin: "complete c15 done\n")
        #expect(piped.status == 0, "\(piped.err)")
        #expect(piped.out.contains("Completed “Paddle to Heron Island”"), "\(piped.out)")
    }

    /// The device is saved per server address and port: after the organizer moves the server,
    /// a player whose character is "claimed by another device" is pointed at the file that
    /// holds the device it was claimed with.
    @Test func aCharacterClaimedBeforeTheServerMovedPointsAtItsDeviceFile() throws {
        let first = try ServerProcess()
        let home = try makeTemporaryDirectory()
        let claimed = try BQProcess.run(["play"] + first.address + ["--character", "mia", "whoami"], home: home)
        #expect(claimed.status == 0, "\(claimed.err)")
        first.stop()
        let moved = try ServerProcess(dataDirectory: first.dataDirectory)
        defer { moved.stop() }
        // Port 0 picks a free port: the freed one again is possible, if unlikely, and then
        // the server has not moved.
        guard moved.port != first.port else { return }
        let stranger = try BQProcess.run(["play"] + moved.address + ["--character", "mia", "whoami"], home: home)
        #expect(stranger.status == 1, "\(stranger.err)")
        let saved = home.appendingPathComponent(".config/bq/play-127.0.0.1-\(first.port)-default.json").path
        #expect(stranger.err.contains("start with --device-file \(saved)"), "\(stranger.err)")
        let back = try BQProcess.run(["play"] + moved.address + ["--device-file", saved, "whoami"], home: home)
        #expect(back.status == 0, "\(back.err)")
        #expect(back.out.contains("Mia"), "\(back.out)")
    }

    /// Ids and names are what the screens show, in whatever case they are typed.
    @Test func charactersAndIdsAreFoundInAnyCase() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let home = try makeTemporaryDirectory()
        let claimed = try BQProcess.run(["play", "--no-color"] + server.address + ["--character", "Mia", "complete", "C02"], home: home)
        #expect(claimed.status == 0, "\(claimed.err)")
        #expect(claimed.out.contains("You are now Mia (birthday)."), "\(claimed.out)")
        #expect(claimed.out.contains("Completed “Wisdom From Strangers”"), "\(claimed.out)")
        let shown = try BQProcess.run(["play", "--no-color"] + server.address + ["show", "R02"], home: home)
        #expect(shown.out.contains("A Letter From Home"), "\(shown.out)")

        let picked = try BQProcess.run(["play", "--no-color"] + server.address, home: try makeTemporaryDirectory(), stdin: "PRIYA\nquit\n")
        #expect(picked.out.contains("You are now Priya (friend)."), "\(picked.out) \(picked.err)")

        // The server's words name the field for programs; a person reads a sentence.
        let wrong = try BQProcess.run(["play", "--no-color"] + server.address + ["complete", "c03", "--option", "b"], home: home)
        #expect(wrong.status == 1)
        #expect(wrong.err.contains("\"Blind Portrait Gallery\" has no option b, only a"), "\(wrong.err)")
        #expect(!wrong.err.contains("option: "), "\(wrong.err)")

        // `--option=b` is the option, not words of the proof: a completion is for good.
        let joined = try BQProcess.run(["play", "--no-color"] + server.address + ["complete", "c07", "text", "sang it", "--option=b"],
                                       home: home)
        #expect(joined.status == 0, "\(joined.err)")
        let recorded = try BQProcess.run(["admin", "show", "c07"] + server.adminFlags)
        #expect(!recorded.out.contains("--option"), "\(recorded.out)")
        #expect(recorded.out.contains("done (option B)") && recorded.out.contains("proof: “sang it”"), "\(recorded.out)")
        let keyInProof = try BQProcess.run(["play", "--no-color"] + server.address + ["complete", "c06", "text", "hello", "--idem=k2"],
                                           home: home)
        #expect(keyInProof.status == 64, "\(keyInProof.out) \(keyInProof.err)")
        // No one to ask: a 2-in-1 done without `--option` is option A, and the answer says so.
        let unasked = try BQProcess.run(["play", "--no-color"] + server.address + ["complete", "c01"], home: home)
        #expect(unasked.out.contains("Completed “Sunrise Swim” as option A (no --option b was given)"), "\(unasked.out) \(unasked.err)")
        let shownDone = try BQProcess.run(["play", "--no-color"] + server.address + ["show", "c01"], home: home)
        #expect(shownDone.out.contains("done (option A)") && shownDone.out.contains("Option A: Sunrise Swim"), "\(shownDone.out)")
    }

    /// Output read by a program that stops early (`| head -1`): the change is still made and
    /// the exit status says so, rather than SIGPIPE ending the command half way.
    @Test func aReaderThatStopsEarlyDoesNotEndTheChange() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let home = try makeTemporaryDirectory()
        let process = Process()
        // With SIGPIPE as a shell leaves it (the test runner ignores it, and children inherit that).
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["--default-signal=PIPE", try bqExecutable().path, "play", "--json"] + server.address
            + ["--character", "mia", "complete", "c02", "done"]
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home.path
        environment["XDG_CONFIG_HOME"] = home.appendingPathComponent(".config").path
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try spawnWithDefaultSignalMask(process)
        // Nobody reads: every line the command writes meets a closed pipe.
        try output.fileHandleForReading.close()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0,
                "\(process.terminationReason) \(process.terminationStatus)")
        let state = try BQProcess.run(["admin", "show", "c02"] + server.adminFlags)
        #expect(state.out.contains("proof: done"), "made: \(state.out) \(state.err)")
    }

    /// A one-shot with no saved session names the game's own characters, not an example from
    /// another seed.
    @Test func aOneShotWithoutASessionNamesTheCharacters() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let run = try BQProcess.run(["play"] + server.address + ["points"], home: try makeTemporaryDirectory())
        #expect(run.status == 1)
        #expect(run.err.contains("No saved session") && run.err.contains("the characters: mia, sam, priya, theo, dani."), "\(run.err)")
    }

    /// A wrapper's `bq play -- "$@"`: the `--` ends the options and is not a command. A port
    /// out of range is bad arguments (64), not a server that cannot be reached (2).
    @Test func aDoubleDashEndsTheOptionsAndAPortOutOfRangeIsBadArguments() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let run = try BQProcess.run(["play"] + server.address + ["--character", "mia", "--", "points"], home: try makeTemporaryDirectory())
        #expect(run.status == 0, "\(run.err)")
        #expect(run.out.contains("Points: 0 ✦"), "\(run.out)")
        let badPort = try BQProcess.run(["play", "--port", "99999", "points"], home: try makeTemporaryDirectory())
        #expect(badPort.status == 64 && badPort.err.contains("--port must be 1 to 65535, got 99999"), "\(badPort.err)")
    }

    /// A device file path with something at it that is no device file yet: an empty file or a
    /// dangling link is replaced (as `mktemp` makes one), a directory is refused; none hangs.
    @Test func anEmptyOrDanglingDeviceFileIsReplacedAndADirectoryRefused() throws {
        let home = try makeTemporaryDirectory()
        let empty = home.appendingPathComponent("empty.json")
        try Data().write(to: empty)
        let dangling = home.appendingPathComponent("dangling.json")
        try FileManager.default.createSymbolicLink(atPath: dangling.path, withDestinationPath: home.appendingPathComponent("gone").path)
        // Nothing listens on port 1: the device file is settled before connecting.
        for file in [empty, dangling] {
            let run = try BQProcess.run(["play", "--port", "1", "--device-file", file.path, "points"], home: home)
            #expect(run.status == 2, "it ends, at the connect: \(run.err)")
            let saved = try JSONParser.parse(Array(try Data(contentsOf: file)))
            #expect(saved["device"]?.stringValue?.hasPrefix("dev-") == true, "\(saved)")
        }
        let directory = home.appendingPathComponent("dir.json")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let refused = try BQProcess.run(["play", "--port", "1", "--device-file", directory.path, "points"], home: home)
        #expect(refused.status == 2 && refused.err.contains("it is a directory"), "\(refused.err)")
    }
}
