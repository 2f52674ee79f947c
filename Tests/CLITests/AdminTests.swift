import Foundation
import JSON
import Testing

/// `bq admin` as the organizer scripts it.
@Suite struct AdminTests {
    @Test func refusedOneShotExitsNonZeroWithTheServersMessage() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let first = try BQProcess.run(["admin", "force-unlock", "r02", "--no-deduct"] + server.adminFlags)
        #expect(first.status == 0, "\(first.err)")
        #expect(first.out.contains("Unlocked r02 for free."))
        let second = try BQProcess.run(["admin", "force-unlock", "r02", "--no-deduct"] + server.adminFlags)
        #expect(second.status == 1)
        #expect(second.err.contains("already unlocked"))

        let negative = try BQProcess.run(["admin", "adjust-points", "-30", "--reason", "oops"] + server.adminFlags)
        #expect(negative.status == 1)
        #expect(negative.err.contains("Not enough points"))
        let unaffordable = try BQProcess.run(["admin", "force-unlock", "r04"] + server.adminFlags)
        #expect(unaffordable.status == 1)
        #expect(unaffordable.err.contains("Not enough points: have 0, need 100 (force-unlock r04 --no-deduct unlocks it for free)"),
                "\(unaffordable.err)")
    }

    @Test func noServerIsExitStatusTwoAsInPlay() throws {
        // A port nothing listens on: one from a server that has just stopped.
        let server = try ServerProcess()
        let port = String(server.port)
        server.stop()
        let admin = try BQProcess.run(["admin", "status", "--port", port, "--key", "any"])
        #expect(admin.status == 2, "\(admin.err)")
        let play = try BQProcess.run(["play", "--port", port, "whoami"], home: try makeTemporaryDirectory())
        #expect(play.status == 2, "\(play.err)")
    }

    @Test func wrongKeyIsRefused() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let result = try BQProcess.run(["admin", "status", "--key", "not-the-key"] + server.address)
        #expect(result.status == 1)
        #expect(result.err.contains("Wrong admin key (the key from --key)"), "\(result.err)")
        // Another server's data directory: the key read from it is named, and --data questioned.
        let other = try makeTemporaryDirectory()
        try Data("another-servers-key\n".utf8).write(to: other.appendingPathComponent("admin.key"))
        let elsewhere = try BQProcess.run(["admin", "status", "--data", other.path] + server.address)
        #expect(elsewhere.status == 1)
        #expect(elsewhere.err.contains("Wrong admin key (the key from \(other.path)/admin.key: is --data the data directory "
                                       + "of the server on port \(server.port)?)"), "\(elsewhere.err)")
    }

    @Test func statusShowsNumbersClaimsAndEvents() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let claim = try BQProcess.run(["play"] + server.address + ["--character", "theo", "whoami"],
                                      home: try makeTemporaryDirectory())
        #expect(claim.status == 0, "\(claim.err)")
        let day = try BQProcess.run(["admin", "set-day", "2"] + server.address, environment: ["BQ_ADMIN_KEY": server.adminKey])
        #expect(day.status == 0, "\(day.err)")
        let status = try BQProcess.run(["admin", "status"] + server.adminFlags)
        #expect(status.status == 0, "\(status.err)")
        #expect(status.out.contains("day 2"))
        #expect(status.out.contains("Rewards 0/9 unlocked"))
        let theoLine = status.out.split(separator: "\n").first { $0.contains("theo") && $0.contains("Theo") }
        #expect(theoLine?.contains("claimed") == true)
        #expect(theoLine?.contains("offline") == true, "theo's one-shot has ended")
        #expect(status.out.contains("character_claimed by theo"))

        let mia = try BQProcess(["play"] + server.address + ["--character", "mia"], home: try makeTemporaryDirectory())
        defer { mia.kill() }
        #expect(mia.output.waitFor("Type help"))
        let live = try BQProcess.run(["admin", "status"] + server.adminFlags)
        let miaLine = live.out.split(separator: "\n").first { $0.contains("mia") && $0.contains("Mia") }
        #expect(miaLine?.contains("online") == true, "\(live.out)")
        mia.closeInput()

        let log = try BQProcess.run(["admin", "log", "--after", "1"] + server.adminFlags)
        #expect(log.out.contains("v2 "))
        #expect(log.out.contains("day_set") || log.out.contains("set_day") || log.out.contains("day"))
    }

    /// On a game other than the default, the claims and who is online are that game's: the
    /// public `characters` goes to the default game unless it names one.
    @Test func statusOfAnotherGameShowsWhoIsOnlineInIt() throws {
        let server = try ServerProcess(environment: ["BQ_GAMES": "lake"])
        defer { server.stop() }
        let mia = try BQProcess(["play"] + server.address + ["--game", "lake", "--character", "mia"], home: try makeTemporaryDirectory())
        defer { mia.kill() }
        #expect(mia.output.waitFor("Type help"))
        let status = try BQProcess.run(["admin", "--game", "lake", "status"] + server.adminFlags)
        #expect(status.status == 0, "\(status.err)")
        let miaLine = status.out.split(separator: "\n").first { $0.contains("mia") && $0.contains("Mia") }
        #expect(miaLine?.contains("claimed · online") == true, "\(status.out)")
        // Every game is seeded alike: the heading says which one this is.
        #expect(status.out.contains(" · game lake · day 1"), "\(status.out)")
        mia.closeInput()
    }

    /// After a change with no answer the organizer looks for it among the newest events: a page
    /// that stops short says how many are newer, and --last shows the newest.
    @Test func theLogSaysWhatIsNewerAndShowsTheNewestOnRequest() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        for day in 2...5 {
            #expect(try BQProcess.run(["admin"] + server.adminFlags + ["set-day", String(day)]).status == 0)
        }
        let page = try BQProcess.run(["admin", "log", "--limit", "2"] + server.adminFlags)
        #expect(page.out.contains("v2 ") && !page.out.contains("v3 "), "\(page.out)")
        #expect(page.out.contains("… 3 newer events, up to version 5: --after 2 for the next ones, --last N for the newest."),
                "\(page.out)")
        let newest = try BQProcess.run(["admin", "log", "--last", "2"] + server.adminFlags)
        #expect(newest.status == 0, "\(newest.err)")
        #expect(newest.out.contains("v4 ") && newest.out.contains("v5 ") && !newest.out.contains("v3 "), "\(newest.out)")
        #expect(!newest.out.contains("newer event"), "\(newest.out)")
        let both = try BQProcess.run(["admin", "log", "--last", "2", "--after", "1"] + server.adminFlags)
        #expect(both.status == 64, "\(both.err)")
    }

    @Test func editsKeepFieldsThatWereNotGiven() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        // Words in any case, as ids and names are.
        let added = try BQProcess.run(["admin", "add-challenge", "--title", "Lake Yoga", "--description", "Ten minutes on the dock",
                                       "--points", "40", "--difficulty", "Easy", "--category", "PHYSICAL"] + server.adminFlags)
        #expect(added.status == 0, "\(added.err)")
        #expect(added.out.contains("Added challenge"))
        let edited = try BQProcess.run(["admin", "edit-challenge", "c02", "--points", "45"] + server.adminFlags)
        #expect(edited.status == 0, "\(edited.err)")
        let board = try BQProcess.run(["play"] + server.address + ["--character", "priya", "show", "c02"],
                                      home: try makeTemporaryDirectory())
        #expect(board.out.contains("Wisdom From Strangers"))
        #expect(board.out.contains("45 ✦ · social · easy"), "\(board.out)")
    }

    /// A word outside a flag's list is a value not of its type: exit 64 before anything is sent,
    /// as docs/playing.md's table says, not a refusal from the server.
    @Test func aWordOutsideItsListIsAUsageError() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let challenge = try BQProcess.run(["admin", "add-challenge", "--title", "Lake Yoga", "--description", "On the dock",
                                           "--points", "40", "--difficulty", "extreme", "--category", "physical"] + server.adminFlags)
        #expect(challenge.status == 64, "\(challenge.err)")
        #expect(challenge.err.contains("--difficulty must be one of easy, medium, hard, got extreme"), "\(challenge.err)")
        let reward = try BQProcess.run(["admin", "edit-reward", "r01", "--type", "poem"] + server.adminFlags)
        #expect(reward.status == 64, "\(reward.err)")
        #expect(reward.err.contains("--type must be one of text, image, audio, video, got poem"), "\(reward.err)")
    }

    /// Words a person gets wrong at the console are usage errors (exit 64) that say what to type,
    /// not a refusal from the server nor a complaint about something else.
    @Test func usageMistakesSayWhatToType() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let unquoted = try BQProcess.run(["admin", "adjust-points", "5", "--reason", "karaoke", "bonus"] + server.adminFlags)
        #expect(unquoted.status == 64, "\(unquoted.err)")
        #expect(unquoted.err.contains(#"a reason of several words needs quotes, e.g. --reason "karaoke bonus""#), "\(unquoted.err)")
        let afterDashes = try BQProcess.run(["admin", "adjust-points", "--reason", "bonus"] + server.adminFlags + ["--", "5"])
        #expect(afterDashes.status == 0, "a -- before the amount ends the options: \(afterDashes.err)")
        let added = try BQProcess.run(["admin", "add-challenge", "--title", "Lake Yoga"] + server.adminFlags)
        #expect(added.status == 64, "\(added.err)")
        #expect(added.err.contains("missing: --description, --points, --difficulty, --category"), "\(added.err)")
        let reward = try BQProcess.run(["admin", "add-reward", "--title", "Poem", "--from", "Gran", "--type", "text"] + server.adminFlags)
        #expect(reward.status == 64, "\(reward.err)")
        #expect(reward.err.contains("missing: --teaser"), "\(reward.err)")
    }

    @Test func editsThatCannotWorkSaySoInTheirOwnTerms() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let missing = try BQProcess.run(["admin", "edit-challenge", "c99", "--title", "X"] + server.adminFlags)
        #expect(missing.status == 1)
        #expect(missing.err.contains("No challenge c99"), "\(missing.err)")
        // c02 has no option B: half of a new one is not an option.
        let half = try BQProcess.run(["admin", "edit-challenge", "c02", "--option-b-title", "H"] + server.adminFlags)
        #expect(half.status == 1)
        #expect(half.err.contains("needs both --option-b-title and --option-b-description"), "\(half.err)")
        // A dare is its author's to edit: said as such, not as a challenge's missing field.
        let dare = try BQProcess.run(["play"] + server.address + ["--character", "priya", "dare", "save", "Cartwheel", "On the lawn", "25"],
                                     home: try makeTemporaryDirectory())
        #expect(dare.status == 0, "\(dare.err)")
        let notADare = try BQProcess.run(["admin", "edit-challenge", "dare-priya", "--points", "30"] + server.adminFlags)
        #expect(notADare.status == 1)
        #expect(notADare.err.contains("secret dare: only its author edits it"), "\(notADare.err)")
        // An edit with nothing new sends nothing: no event for the log.
        let before = try BQProcess.run(["admin", "status"] + server.adminFlags)
        // Piped, with no width to fit: a short title is shown whole (it was cut to "C…").
        #expect(before.out.contains("by priya    draft      “Cartwheel”"), "\(before.out)")
        let same = try BQProcess.run(["admin", "edit-challenge", "c02"] + server.adminFlags)
        #expect(same.status == 0, "\(same.err)")
        #expect(same.out.contains("Nothing to change: challenge c02 already has these values."), "\(same.out)")
        let after = try BQProcess.run(["admin", "status"] + server.adminFlags)
        #expect(before.out.components(separatedBy: "\n").first == after.out.components(separatedBy: "\n").first,
                "the version in the status line did not move")
    }

    @Test func consoleHelpListsWhatWorksThereAndExplainsEachCommand() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let console = try BQProcess.run(["admin", "console"] + server.adminFlags,
                                        stdin: "help\nhelp adjust-points\nforce-complete --help\nforce-complete c03\nn\nquit\n")
        #expect(console.status == 0, "\(console.err)")
        let listing = console.out.components(separatedBy: "OVERVIEW:").first ?? ""
        #expect(listing.contains("adjust-points") && listing.contains("force-complete"))
        #expect(!listing.contains("  console ") && !listing.contains("  watch "), "screens the console cannot run")
        #expect(console.out.contains("OVERVIEW: Add (or, negative, take away) points"))
        #expect(console.out.contains("OVERVIEW: Complete a challenge without proof"))
        // Signed in already: the options that say where the server is would do nothing here.
        #expect(console.out.contains("--reason <reason>") && console.out.contains("USAGE: force-complete <challenge>"),
                "\(console.out)")
        #expect(!console.out.contains("--port") && !console.out.contains("--key") && !console.out.contains("--timeout"))
        // The console makes each change at most once by itself: a key of one's own is for one-shots.
        #expect(!console.out.contains("--idem"), "\(console.out)")
        let oneShot = try BQProcess.run(["admin", "adjust-points", "--help"])
        #expect(oneShot.out.contains("--port <port>") && oneShot.out.contains("--reason <reason>"), "\(oneShot.out)")
        #expect(oneShot.out.contains("--idem <key>"), "\(oneShot.out)")
        #expect(console.out.contains("force-complete c03: are you sure? [y/N]"))
        #expect(console.out.contains("Cancelled."))
    }

    /// The console's list fits a narrow screen, broken between words: the terminal would break
    /// a description mid-word.
    @Test func consoleHelpFitsTheScreen() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let console = try BQProcess.run(["admin", "console"] + server.adminFlags, stdin: "help\nquit\n",
                                        environment: ["COLUMNS": "40"])
        #expect(console.status == 0, "\(console.err)")
        let lines = console.out.split(separator: "\n").map(String.init)
        #expect(lines.allSatisfy { $0.count <= 40 }, "\(console.out)")
        let words = console.out.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(words.contains("adjust-points Add (or, negative, take away) points"), "\(console.out)")
    }

    /// Asking a person "are you sure?" about what the game already shows done would be a
    /// question whose answer does not matter: at a terminal the console says it is done instead.
    /// From a pipe the question always comes, so that the line after a command is its answer.
    @Test func theConsoleDoesNotAskAboutWhatIsAlreadyDone() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let console = try TerminalProcess(["admin", "console"] + server.adminFlags, home: try makeTemporaryDirectory())
        #expect(console.screen.waitFor("> "), "\(console.errors.text)")
        console.type("force-unlock r01 --no-deduct\r")
        #expect(console.screen.waitFor("are you sure? [y/N] "))
        console.type("y\r")
        #expect(console.screen.waitFor("Unlocked r01"), "\(console.screen.text)")
        console.type("force-unlock r01\r")
        #expect(console.screen.waitFor("is already unlocked"), "\(console.screen.text)")
        // Nor about what the game does not have: a mistyped id.
        console.type("force-unlock r9\r")
        #expect(console.screen.waitFor("No reward \"r9\""), "\(console.screen.text)")
        console.type("force-complete c77\r")
        #expect(console.screen.waitFor("No challenge \"c77\""), "\(console.screen.text)")
        console.type("unclaim bob\r")
        #expect(console.screen.waitFor("No character \"bob\""), "\(console.screen.text)")
        console.type("quit\r")
        #expect(console.waitForExit() == 0)
        #expect(console.screen.text.components(separatedBy: "are you sure?").count - 1 == 1, "asked once: \(console.screen.text)")

        let piped = try BQProcess.run(["admin", "console"] + server.adminFlags, stdin: "force-unlock r01\ny\nquit\n")
        #expect(piped.out.contains("force-unlock r01: are you sure?"), "\(piped.out)")
        #expect((piped.out + piped.err).contains("is already unlocked"))
        #expect(!(piped.out + piped.err).contains("Unknown command y"), "the answer line was read as the answer")
    }

    /// At a terminal the console follows the game: what the players and the organizer's own
    /// bq play do is news there, and its own operations are told by their result alone.
    @Test func theConsoleTellsWhatOthersDoAsItHappens() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let console = try TerminalProcess(["admin", "console", "--no-color"] + server.adminFlags, home: try makeTemporaryDirectory())
        #expect(console.screen.waitFor("> "), "\(console.errors.text)")
        let mia = try BQProcess.run(["play"] + server.address + ["--character", "mia", "complete", "c01", "done"],
                                    home: try makeTemporaryDirectory())
        #expect(mia.status == 0, "\(mia.err)")
        #expect(console.screen.waitFor("Mia completed “Sunrise Swim” +75 ✦"), "\(console.screen.text)")
        #expect(console.screen.waitFor("Mia's points: 75 ✦"), "\(console.screen.text)")
        console.type("adjust-points 10 --reason bonus\r")
        #expect(console.screen.waitFor("Points: 85 ✦."), "\(console.screen.text)")
        console.type("edit-challenge c02 --points 45\r")
        #expect(console.screen.waitFor("Saved challenge c02."), "\(console.screen.text)")
        console.type("quit\r")
        #expect(console.waitForExit() == 0)
        #expect(!console.screen.text.contains("The organizer adjusted the points"), "\(console.screen.text)")
        #expect(!console.screen.text.contains("The organizer changed c02"), "\(console.screen.text)")
        #expect(!console.screen.text.contains("Mia's points: 85"), "told by the result: \(console.screen.text)")
    }

    /// The console does not ask "are you sure?" about taking more points than the game has:
    /// it says so at once, as the server would. Unclaiming a free character says it changed
    /// nothing.
    @Test func whatCannotBeDoneOrDoesNothingIsSaidWithoutAsking() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let console = try TerminalProcess(["admin", "console", "--no-color"] + server.adminFlags, home: try makeTemporaryDirectory())
        #expect(console.screen.waitFor("> "), "\(console.errors.text)")
        console.type("adjust-points 10 --reason bonus\r")
        #expect(console.screen.waitFor("Points: 10 ✦."), "\(console.screen.text)")
        console.type("adjust-points -500 --reason oops\r")
        #expect(console.screen.waitFor("have 10, cannot take 500"), "\(console.screen.text)")
        #expect(!console.screen.text.contains("-500 --reason oops: are you sure?"), "\(console.screen.text)")
        console.type("quit\r")
        #expect(console.waitForExit() == 0)

        let unclaimed = try BQProcess.run(["admin", "unclaim", "priya"] + server.adminFlags)
        #expect(unclaimed.status == 0, "\(unclaimed.err)")
        #expect(unclaimed.out.contains("priya was not claimed: nothing changed."), "\(unclaimed.out)")
        let unknown = try BQProcess.run(["play"] + server.address + ["--character", "mia", "frobnicate"], home: try makeTemporaryDirectory())
        #expect(unknown.err.contains("Unknown command frobnicate (bq play help lists the commands)."), "\(unknown.err)")
    }

    @Test func consoleAsksBeforeDestructiveOperations() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let console = try BQProcess(["admin", "console"] + server.adminFlags)
        #expect(console.output.waitFor("Signed in as admin."))
        console.send("force-complete c03")
        #expect(console.output.waitFor("are you sure? [y/N]"))
        console.send("n")
        #expect(console.output.waitFor("Cancelled."))
        console.send("force-complete c03")
        #expect(console.output.waitFor("are you sure? [y/N]"))
        console.send("y")
        #expect(console.output.waitFor("Completed c03. Points: 60 ✦."))
        console.send("force-complete c03")
        console.send("y")
        #expect(console.output.waitFor("already completed"))
        console.send("bogus")
        #expect(console.output.waitFor("Unknown command bogus."))
        console.send("set-day 3")
        #expect(console.output.waitFor("It is now day 3."))
        console.send("quit")
        #expect(console.waitForExit() == 0)
    }

    @Test func watchRedrawsWhenTheGameChanges() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let watch = try BQProcess(["admin", "watch"] + server.adminFlags)
        defer { watch.kill() }
        #expect(watch.output.waitFor("──── version 1 ────"))
        let day = try BQProcess.run(["admin", "set-day", "4"] + server.adminFlags)
        #expect(day.status == 0, "\(day.err)")
        #expect(watch.output.waitFor("──── version 2 ────"))
        #expect(watch.output.waitFor("day 4 · version 2"))
    }

    /// Who is online is not pushed: the watch reads it again every few seconds, and redraws
    /// when it changed although the game did not.
    @Test func watchShowsWhoComesOnlineWithoutAChangeToTheGame() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let home = try makeTemporaryDirectory()
        let claimed = try BQProcess.run(["play"] + server.address + ["--character", "mia", "whoami"], home: home)
        #expect(claimed.status == 0, "\(claimed.err)")
        let watch = try BQProcess(["admin", "watch"] + server.adminFlags)
        defer { watch.kill() }
        #expect(watch.output.waitFor("claimed · offline"), "\(watch.output.text)")
        let mia = try BQProcess(["play"] + server.address, home: home)
        defer { mia.kill() }
        #expect(mia.output.waitFor("Type help for commands."), "\(mia.output.text)")
        #expect(watch.output.waitFor("claimed · online"), "\(watch.output.text)")
        #expect(!watch.output.text.contains("──── version 3"), "no change to the game was made")
    }

    /// On a terminal the status fits the screen, so its numbers stay in sight: the oldest of the
    /// newest events give way, and no event's data runs past the edge. On a phone's 40 columns
    /// the summary breaks between its parts and the characters' rows leave out their names.
    @Test(arguments: [80, 40]) func watchFitsTheScreen(columns: Int) throws {
        let server = try ServerProcess()
        defer { server.stop() }
        for index in 0..<10 {
            let adjusted = try BQProcess.run(["admin", "adjust-points", "5", "--reason", String(repeating: "bonus \(index) ", count: 12)]
                                             + server.adminFlags)
            #expect(adjusted.status == 0, "\(adjusted.err)")
        }
        // A dare's long title is cut to the screen too.
        let dare = try BQProcess.run(["play"] + server.address + ["--character", "theo", "dare", "save",
                                      "Sing the whole of Bohemian Rhapsody on the jetty at midnight", "With harmonies", "50"],
                                     home: try makeTemporaryDirectory())
        #expect(dare.status == 0, "\(dare.err)")
        let watch = try TerminalProcess(["admin", "watch"] + server.adminFlags, home: try makeTemporaryDirectory(),
                                        columns: UInt16(columns), rows: 24)
        #expect(watch.screen.waitFor("version 13"), "\(watch.screen.text)")
        #expect(watch.screen.waitFor("\r\n  v13 "), "\(watch.screen.text)")
        let lastScreen = watch.screen.text.components(separatedBy: "\u{1B}[2J\u{1B}[H").last ?? ""
        // As shown: without the colours' escape sequences.
        let rows = lastScreen.replacingOccurrences(of: "\u{1B}\\[[0-9;]*m", with: "", options: .regularExpression)
            .components(separatedBy: "\r\n").filter { !$0.isEmpty }
        #expect(rows.count <= 23, "\(rows.count) rows on a screen of 24:\n\(lastScreen)")
        #expect(rows.allSatisfy { $0.count <= columns }, "a row wider than the screen:\n\(rows.joined(separator: "\n"))")
        #expect(rows.prefix(2).joined(separator: " · ").contains("· day 1 · version 13") && rows.contains { $0.hasPrefix("Points 50 ✦") },
                "\(lastScreen)")
        #expect(rows.contains { $0.hasPrefix("  theo     ") && $0.contains("claimed") }, "\(lastScreen)")
        #expect(rows.contains { $0.contains("dare-theo") && (columns < 80 || $0.contains("“Sing the whole of")) }, "\(lastScreen)")
        // On a phone, under its row rather than cut to nothing beside it.
        #expect(rows.contains { $0.contains("“Sing the whole") }, "\(lastScreen)")
    }

    @Test func aRewardsGiverCanBeForgottenAndThenNoLongerReadsItEarly() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let theoHome = try makeTemporaryDirectory()
        let before = try BQProcess.run(["play"] + server.address + ["--character", "theo", "show", "r05"], home: theoHome)
        #expect(before.status == 0, "\(before.err)")
        let gift = "This voucher entitles the bearer"
        #expect(before.out.contains(gift), "the giver reads the gift before it is unlocked: \(before.out)")

        let both = try BQProcess.run(["admin", "edit-reward", "r05", "--from-character", "dani", "--no-from-character"] + server.adminFlags)
        #expect(both.status == 64, "bad arguments")
        #expect(both.err.contains("not both"), "\(both.err)")
        let edited = try BQProcess.run(["admin", "edit-reward", "r05", "--from", "A friend", "--no-from-character"] + server.adminFlags)
        #expect(edited.status == 0, "\(edited.err)")
        let after = try BQProcess.run(["play"] + server.address + ["show", "r05"], home: theoHome)
        #expect(after.status == 0, "\(after.err)")
        #expect(!after.out.contains(gift), "no longer the giver: \(after.out)")
        #expect(after.out.contains("A friend"), "\(after.out)")
    }

    @Test func negativeNumbersAndDashedTextReachTheRules() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let day = try BQProcess.run(["admin", "set-day", "-1"] + server.adminFlags)
        #expect(day.status == 1, "\(day.err)")
        #expect(day.err.contains("day"), "the rule's words, not a missing argument: \(day.err)")
        let points = try BQProcess.run(["admin", "edit-challenge", "c11", "--points", "-5"] + server.adminFlags)
        #expect(points.status == 1, "\(points.err)")
        #expect(points.err.contains("points"), "\(points.err)")
        #expect(!points.err.contains("Missing value"), "\(points.err)")
        let reason = try BQProcess.run(["admin", "adjust-points", "5", "--reason", "-5 for cheating, +10 for the apology"] + server.adminFlags)
        #expect(reason.status == 0, "\(reason.err)")
        let log = try BQProcess.run(["admin", "log"] + server.adminFlags)
        #expect(log.out.contains("-5 for cheating"), "\(log.out)")
    }

    @Test func aGiftAddedWithoutContentIsPointedOut() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let empty = try BQProcess.run(["admin", "add-reward", "--from", "Aunt Jo", "--title", "A Jumper", "--teaser", "Knitted",
                                       "--type", "text"] + server.adminFlags)
        #expect(empty.status == 0, "\(empty.err)")
        #expect(empty.out.contains("Note: r10 has no content yet"), "\(empty.out)")
        let full = try BQProcess.run(["admin", "add-reward", "--from", "Aunt Jo", "--title", "A Scarf", "--teaser", "Knitted",
                                      "--type", "text", "--text", "It is green"] + server.adminFlags)
        #expect(full.status == 0, "\(full.err)")
        #expect(!full.out.contains("no content"), "\(full.out)")
    }

    @Test func noAdminKeyIsABadArgumentSaidInOneLine() throws {
        let missing = try makeTemporaryDirectory().appendingPathComponent("no-such-data").path
        let result = try BQProcess.run(["admin", "status", "--port", "1", "--data", missing], environment: ["BQ_ADMIN_KEY": ""])
        #expect(result.status == 64)
        #expect(result.err == "bq admin: cannot read \(missing)/admin.key\n", "\(result.err)")
    }

    @Test func theOrganizerReadsAGiftAndADraftInFullAndTheTimeline() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let gift = try BQProcess.run(["admin", "show", "r05"] + server.adminFlags)
        #expect(gift.status == 0, "\(gift.err)")
        #expect(gift.out.contains("This voucher entitles the bearer"), "the content, locked or not: \(gift.out)")
        let dare = try BQProcess.run(["play"] + server.address + ["--character", "priya", "dare", "save", "Cartwheel", "On the lawn at noon", "25"],
                                     home: try makeTemporaryDirectory())
        #expect(dare.status == 0, "\(dare.err)")
        let draft = try BQProcess.run(["admin", "show", "dare-priya"] + server.adminFlags)
        #expect(draft.out.contains("On the lawn at noon"), "\(draft.out)")
        let missing = try BQProcess.run(["admin", "show", "r99"] + server.adminFlags)
        #expect(missing.status == 1)
        #expect(missing.err.contains("No challenge, dare or reward r99"), "\(missing.err)")
        let forced = try BQProcess.run(["admin", "force-complete", "c02"] + server.adminFlags)
        #expect(forced.status == 0, "\(forced.err)")
        let timeline = try BQProcess.run(["admin", "timeline"] + server.adminFlags)
        #expect(timeline.out.contains("“Wisdom From Strangers” marked done by the organizer"), "\(timeline.out)")
    }

    /// The seed's ids are lower case; the organizer types them as readily in capitals.
    @Test func theOrganizersToolsTakeIdsInAnyCase() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let claim = try BQProcess.run(["play"] + server.address + ["--character", "theo", "whoami"], home: try makeTemporaryDirectory())
        #expect(claim.status == 0, "\(claim.err)")
        let steps: [(args: [String], says: String)] = [
            (["force-complete", "C02"], "Completed c02."),
            (["show", "R05"], "This voucher entitles the bearer"),
            (["edit-reward", "R03", "--cost", "10"], "Saved reward r03."),
            (["force-unlock", "R03"], "Unlocked r03."),
            (["edit-challenge", "C04", "--points", "5"], "Saved challenge c04."),
            (["unclaim", "Theo"], "theo is free to claim again."),
        ]
        for step in steps {
            let result = try BQProcess.run(["admin"] + step.args + server.adminFlags)
            #expect(result.status == 0 && result.out.contains(step.says), "\(step.args): \(result.out) \(result.err)")
        }
        let missing = try BQProcess.run(["admin", "force-complete", "C99"] + server.adminFlags)
        #expect(missing.status == 1 && missing.err.contains("C99"), "named as typed: \(missing.err)")
    }

    /// A rerun under the key of an unclaim that went through says what the first did, not that
    /// the character (freed by it) "was not claimed".
    @Test func aReplayedUnclaimSaysTheCharacterWasFreed() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let claimed = try BQProcess.run(["play"] + server.address + ["--character", "theo", "points"], home: try makeTemporaryDirectory())
        #expect(claimed.status == 0, "\(claimed.err)")
        let key = "unclaim-theo-once"
        let first = try BQProcess.run(["admin", "unclaim", "theo", "--idem", key] + server.adminFlags)
        #expect(first.status == 0 && first.out.contains("theo is free to claim again."), "\(first.out) \(first.err)")
        let again = try BQProcess.run(["admin", "unclaim", "theo", "--idem", key] + server.adminFlags)
        #expect(again.status == 0, "\(again.err)")
        #expect(again.out.contains("theo is free to claim again. (applied once, by an earlier send of this request)"), "\(again.out)")
    }

    /// Counts out of range are bad arguments (64) before anything is asked, whichever option.
    @Test func countsOutOfRangeAreBadArguments() throws {
        for (arguments, says) in [(["status", "--events=-1"], "--events must be 0 to 1000, got -1"),
                                  (["status", "--events", "5000"], "--events must be 0 to 1000, got 5000"),
                                  (["log", "--limit", "0"], "--limit must be 1 to 1000, got 0"),
                                  (["log", "--last", "0"], "--last must be 1 to 1000, got 0"),
                                  (["status", "--port", "0"], "--port must be 1 to 65535, got 0")] {
            let run = try BQProcess.run(["admin"] + arguments + ["--key", "unused"])
            #expect(run.status == 64, "\(arguments): \(run.err)")
            #expect(run.err.contains(says), "\(arguments): \(run.err)")
        }
    }

    /// `log --json` gives scripts each event whole, one JSON object per line.
    @Test func theLogAsJSONGivesEachEventWhole() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let reason = String(repeating: "a long reason ", count: 12)
        let adjusted = try BQProcess.run(["admin", "adjust-points", "5", "--reason", reason] + server.adminFlags)
        #expect(adjusted.status == 0, "\(adjusted.err)")
        let log = try BQProcess.run(["admin", "log", "--json", "--last", "1"] + server.adminFlags)
        #expect(log.status == 0, "\(log.err)")
        let lines = log.out.split(separator: "\n")
        #expect(lines.count == 1, "\(log.out)")
        let event = try JSONParser.parse(Array((lines.first ?? "").utf8))
        #expect(event["type"] == "points_adjusted" && event["actor"] == "admin", "\(log.out)")
        #expect(event["data"]?["reason"]?.stringValue == reason, "uncut: \(log.out)")
    }

    /// With SIGPIPE ignored (so that a change is never cut half told), a command that would go
    /// on for ever ends once nobody reads its output (`bq admin watch | head -1`).
    @Test func aWatchEndsOnceNobodyReadsIt() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let process = Process()
        process.executableURL = try bqExecutable()
        process.arguments = ["admin", "watch"] + server.adminFlags
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try spawnWithDefaultSignalMask(process)
        // The first screen read, as `head` would, then the pipe closed.
        var first = Data()
        while !String(decoding: first, as: UTF8.self).contains("──── version 1 ────") {
            let more = output.fileHandleForReading.availableData
            if more.isEmpty { break }
            first += more
        }
        #expect(String(decoding: first, as: UTF8.self).contains("──── version 1 ────"))
        try output.fileHandleForReading.close()
        // The next screen meets a closed pipe.
        let adjusted = try BQProcess.run(["admin", "adjust-points", "5", "--reason", "applause"] + server.adminFlags)
        #expect(adjusted.status == 0, "\(adjusted.err)")
        let ended = DispatchSemaphore(value: 0)
        DispatchQueue.global().async { process.waitUntilExit(); ended.signal() }
        // Bounded only so that a regression fails here instead of hanging the run.
        #expect(ended.wait(timeout: .now() + 20) == .success, "watch went on writing to nobody")
        if process.isRunning { process.terminate() }
    }
}
