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

        // An unlock does not say who: the organizer may have forced it.
        let unlocked = try BQProcess.run(["admin", "force-unlock", "r07", "--no-deduct"] + server.adminFlags)
        #expect(unlocked.status == 0, "\(unlocked.err)")
        let after = try BQProcess.run(["play"] + server.address + ["timeline"], home: home)
        #expect(after.out.contains("Gift unlocked: “A Song on Four Strings” from Leo (little brother) free"), "\(after.out)")
        #expect(!after.out.contains("Mia unlocked"), "\(after.out)")
    }

    /// On a phone's width a long entry goes on under its text, not from the terminal's first
    /// column, and its amount stays whole.
    @Test func aLongEntryWrapsUnderItsText() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let unlocked = try BQProcess.run(["admin", "force-unlock", "r07", "--no-deduct"] + server.adminFlags)
        #expect(unlocked.status == 0, "\(unlocked.err)")
        let home = try makeTemporaryDirectory()
        let timeline = try BQProcess.run(["play"] + server.address + ["--character", "mia", "timeline"], home: home,
                                         environment: ["COLUMNS": "40"])
        #expect(timeline.status == 0, "\(timeline.err)")
        let lines = timeline.out.split(separator: "\n").map(String.init)
        guard let first = lines.firstIndex(where: { $0.contains("Gift unlocked") }) else {
            Issue.record("no unlock in the timeline:\n\(timeline.out)")
            return
        }
        // "  Tue 11:52 " is 12 columns wide: the entry's other lines start there.
        let entry = Array(lines[first...].prefix { $0 == lines[first] || $0.hasPrefix(String(repeating: " ", count: 12)) })
        #expect(entry.count >= 2, "the entry wraps at 40 columns:\n\(timeline.out)")
        #expect(lines.allSatisfy { $0.count <= 40 }, "no line runs past 40 columns:\n\(timeline.out)")
        let words = entry.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        #expect(words.hasSuffix("Gift unlocked: “A Song on Four Strings” from Leo (little brother) free"), "\(timeline.out)")

        // Too narrow to go on under the text: under the time, still within the screen.
        let narrow = try BQProcess.run(["play"] + server.address + ["--character", "mia", "timeline"], home: home,
                                       environment: ["COLUMNS": "24"])
        #expect(narrow.out.split(separator: "\n").allSatisfy { $0.count <= 24 }, "no line runs past 24 columns:\n\(narrow.out)")
    }
}

/// The start screen on a terminal too short for it: its top, with the points, scrolls away, so
/// the points are said again at its foot; on one tall enough, once.
@Suite struct HomeScreenHeightTests {
    @Test(arguments: [(UInt16(24), 2), (UInt16(60), 1)])
    func thePointsAreOnTheScreenWhateverItsHeight(rows: UInt16, times: Int) throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let mia = try TerminalProcess(["play"] + server.address + ["--character", "mia"], home: try makeTemporaryDirectory(),
                                      rows: rows)
        #expect(mia.screen.waitFor("Type help for commands."), "\(mia.errors.text)")
        let screen = mia.screen.text
        let foot = screen.components(separatedBy: "Type help for commands.")[0].split(whereSeparator: \.isNewline).suffix(3).joined(separator: "\n")
        #expect(screen.components(separatedBy: "Points: ").count - 1 == times, "\(screen)")
        #expect(foot.contains("Points: ") == (times == 2), "\(foot)")
        #expect(foot.contains("Final badge: ") == (times == 2), "\(foot)")
        // Ctrl-D once the prompt is drawn: typed before, it waits for a line editor not yet there.
        #expect(mia.screen.waitFor("> "))
        mia.type("\u{04}")
        #expect(mia.waitForExit() == 0, "\(mia.errors.text)")
    }
}

/// `help` fits the screen: a command's description goes under it where the two would not fit
/// side by side, broken between words.
@Suite struct HelpWidthTests {
    @Test(arguments: [40, 80])
    func helpFitsTheScreen(columns: Int) throws {
        let server = try ServerProcess()
        defer { server.stop() }
        for character in ["mia", "sam", "theo"] {
            let help = try BQProcess.run(["play"] + server.address + ["--character", character, "help"],
                                         home: try makeTemporaryDirectory(), environment: ["COLUMNS": String(columns)])
            #expect(help.status == 0, "\(help.err)")
            let lines = help.out.split(separator: "\n").map(String.init)
            #expect(lines.allSatisfy { $0.count <= columns }, "\(character) at \(columns) columns:\n\(help.out)")
            let words = help.out.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            #expect(words.contains("unlock <reward> spend points on a reward") || character != "mia", "\(help.out)")
        }
    }
}

/// A terminal that says it is dumb (`TERM=dumb`) takes no escape sequences: no colours for it.
@Suite struct DumbTerminalTests {
    @Test(arguments: ["dumb", "xterm"])
    func colorsOnlyWhereTheTerminalTakesThem(term: String) throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let mia = try TerminalProcess(["play"] + server.address + ["--character", "mia"], home: try makeTemporaryDirectory(),
                                      environment: ["TERM": term, "NO_COLOR": nil])
        #expect(mia.screen.waitFor("Type help for commands."), "\(mia.errors.text)")
        let escapes = mia.screen.text.unicodeScalars.contains("\u{1B}")
        #expect(escapes == (term != "dumb"), "\(mia.screen.text.debugDescription)")
        // Ctrl-D once the prompt is drawn: typed before, it waits for a line editor not yet there.
        #expect(mia.screen.waitFor("> "))
        mia.type("\u{04}")
        #expect(mia.waitForExit() == 0, "\(mia.errors.text)")
    }
}

/// The board's columns line up whatever the titles are written in.
@Suite struct BoardLayoutTests {
    @Test func wideTitlesAndLongStatusesKeepTheColumnsInLine() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        for title in ["🎂 Cake at dawn", "誕生日ケーキ"] {
            let added = try BQProcess.run(["admin", "add-challenge", "--title", title, "--description", "Together",
                                           "--points", "40", "--difficulty", "easy", "--category", "social"] + server.adminFlags)
            #expect(added.status == 0, "\(added.err)")
        }
        let forced = try BQProcess.run(["admin", "force-complete", "c03"] + server.adminFlags)
        #expect(forced.status == 0, "\(forced.err)")
        let home = try makeTemporaryDirectory()
        let done = try BQProcess.run(["play"] + server.address + ["--character", "mia", "complete", "c15", "--option", "b"], home: home)
        #expect(done.status == 0, "\(done.err)")
        // A pipe: no terminal width, so titles get their full 32 columns.
        let board = try BQProcess.run(["play"] + server.address + ["board"], home: home, environment: ["COLUMNS": ""])
        #expect(board.status == 0, "\(board.err)")
        // "🎂" takes two columns and "誕生日ケーキ" twelve: both padded to the same 32, then two spaces.
        #expect(board.out.contains("🎂 Cake at dawn" + String(repeating: " ", count: 32 - 15) + "  open"), "\(board.out)")
        #expect(board.out.contains("誕生日ケーキ" + String(repeating: " ", count: 32 - 12) + "  open"), "\(board.out)")
        // Every status is as wide as the longest, so the facts after it start in one column
        // (rows whose titles are narrow, so that characters are columns).
        let categories = ["c02": "social", "c03": "creative", "c15": "adventure"]
        let starts = categories.compactMap { id, category -> Int? in
            guard let row = board.out.split(separator: "\n").first(where: { $0.contains(" \(id) ") }),
                  let found = row.range(of: category) else { return nil }
            return row.distance(from: row.startIndex, to: found.lowerBound)
        }
        #expect(starts.count == 3 && Set(starts).count == 1, "\(board.out)")
        #expect(board.out.contains("done (forced)") && board.out.contains("done (option B)"))
    }

    /// On a terminal narrower than the widest row, the titles of every row give up the same
    /// room: the columns still line up.
    @Test func aNarrowTerminalShortensEveryTitleAlike() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let home = try makeTemporaryDirectory()
        for columns in ["60", "80"] {
            let board = try BQProcess.run(["play"] + server.address + ["--character", "mia", "board"], home: home,
                                          environment: ["COLUMNS": columns])
            #expect(board.status == 0, "\(board.err)")
            let rows = board.out.split(separator: "\n").filter { $0.contains(" open ") }
            let statusColumns = Set(rows.compactMap { row in row.range(of: " open ").map { row.distance(from: row.startIndex, to: $0.lowerBound) } })
            #expect(rows.count == 15 && statusColumns.count == 1, "at \(columns) columns:\n\(board.out)")
            #expect(rows.allSatisfy { $0.count <= Int(columns)! }, "no row wraps at \(columns) columns:\n\(board.out)")
        }
    }

    /// On a phone's 40 columns a row keeps its mark, id, title and points, and fits; on 80, a
    /// dare's long id on the board takes no room from the rewards' costs, which come before the
    /// other facts and are never cut.
    @Test func pointsAndCostsShowOnAnyWidth() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let home = try makeTemporaryDirectory()
        let dare = try BQProcess.run(["play"] + server.address + ["--character", "theo", "dare", "save", "Sing", "Sing loudly", "50"],
                                     home: home)
        #expect(dare.status == 0, "\(dare.err)")
        for columns in [40, 80] {
            for list in ["board", "rewards"] {
                let shown = try BQProcess.run(["play"] + server.address + [list], home: home, environment: ["COLUMNS": String(columns)])
                #expect(shown.status == 0, "\(shown.err)")
                let rows = shown.out.split(separator: "\n").filter { $0.hasPrefix("  ") && $0.contains(" ✦") }
                // The board: 15 challenges and Theo's dare; the rewards: 9, and the one Theo gave.
                #expect(rows.count == (list == "board" ? 16 : 10), "\(list) at \(columns) columns:\n\(shown.out)")
                #expect(rows.allSatisfy { $0.count <= columns }, "no row wraps at \(columns) columns:\n\(shown.out)")
                let costs = rows.filter { $0.range(of: #"\d+ ✦"#, options: .regularExpression) != nil }
                #expect(costs.count == rows.count, "every row shows its points at \(columns) columns:\n\(shown.out)")
            }
        }
    }
}
