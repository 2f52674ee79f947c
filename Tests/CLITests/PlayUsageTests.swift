import Foundation
import Testing

/// A command `bq play` cannot read is pointed out and sends nothing; a one-shot exits 64.
@Suite struct PlayUsageTests {
    @Test func wordsMissingOrLeftOverAreUsageErrorsAndChangeNothing() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let home = try makeTemporaryDirectory()
        let claimed = try BQProcess.run(["play"] + server.address + ["--character", "mia", "whoami"], home: home)
        #expect(claimed.status == 0, "\(claimed.err)")
        let mistakes: [(words: [String], says: String)] = [
            (["complete", "c03", "done", "twice"], "Usage: complete"),
            (["complete", "c03", "photo"], "Usage: complete"),
            (["unlock", "r02", "r03"], "Usage: unlock"),
            (["discover", "now"], "discover takes no arguments"),
            (["board", "c01"], "board takes no arguments"),
            (["frobnicate"], "Unknown command frobnicate"),
        ]
        for mistake in mistakes {
            let result = try BQProcess.run(["play"] + server.address + mistake.words, home: home)
            #expect(result.status == 64, "\(mistake.words): \(result.err)")
            #expect(result.err.contains(mistake.says), "\(mistake.words): \(result.err)")
        }
        let status = try BQProcess.run(["admin", "status"] + server.adminFlags)
        #expect(status.out.contains("Challenges 0/15 done"), "\(status.out)")
        #expect(status.out.contains("Points 0 ✦"), "\(status.out)")
    }

    /// A one-shot's unknown command is known before the server is asked anything: the
    /// character named with it is not claimed by the mistake.
    @Test func aMistypedOneShotClaimsNothing() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        for words in [["frobnicate"], ["--bogus", "whoami"]] {
            let result = try BQProcess.run(["play"] + server.address + ["--character", "dani"] + words, home: try makeTemporaryDirectory())
            #expect(result.status == 64, "\(words): \(result.err)")
            #expect(result.err.contains("Unknown"), "\(words): \(result.err)")
        }
        let status = try BQProcess.run(["admin", "status"] + server.adminFlags)
        let dani = status.out.split(separator: "\n").first { $0.contains("dani") && $0.contains("friend") }
        #expect(dani?.hasSuffix("free") == true, "\(status.out)")
    }

    /// A name two characters share names neither of them: `bq play` claims nobody by a guess
    /// (it used to take the first), as `bq admin` acts on nobody.
    @Test func aNameTwoCharactersShareClaimsNeither() throws {
        let seed = try String(contentsOf: packageRoot.appendingPathComponent("seed/birthdayquest.json"), encoding: .utf8)
        let twin = seed.replacingOccurrences(of: #""name": "Priya""#, with: #""name": "Sunny""#)
            .replacingOccurrences(of: #""name": "Theo""#, with: #""name": "Sunny""#)
        #expect(twin != seed)
        let path = try makeTemporaryDirectory().appendingPathComponent("twins.json")
        try twin.write(to: path, atomically: true, encoding: .utf8)
        let server = try ServerProcess(extraArguments: ["--seed", path.path])
        defer { server.stop() }
        let shared = try BQProcess.run(["play"] + server.address + ["--character", "sunny", "whoami"], home: try makeTemporaryDirectory())
        #expect(shared.status == 1, "\(shared.out) \(shared.err)")
        #expect(shared.err.contains("2 characters are called sunny (priya, theo): name one by its id"), "\(shared.err)")
        let byId = try BQProcess.run(["play"] + server.address + ["--character", "PRIYA", "whoami"], home: try makeTemporaryDirectory())
        #expect(byId.status == 0, "an id in any case still names its character: \(byId.err)")
        let status = try BQProcess.run(["admin", "status"] + server.adminFlags)
        let rows = status.out.split(separator: "\n").filter { $0.contains("friend") }
        #expect(rows.contains { $0.contains("theo") && $0.hasSuffix("free") }, "\(status.out)")
        #expect(rows.contains { $0.contains("priya") && $0.contains("claimed") }, "\(status.out)")
        // The organizer's tools act on nobody by such a name either.
        let unclaim = try BQProcess.run(["admin", "unclaim", "Sunny"] + server.adminFlags)
        #expect(unclaim.status != 0, "\(unclaim.out)")
        let after = try BQProcess.run(["admin", "status"] + server.adminFlags)
        #expect(after.out.split(separator: "\n").contains { $0.contains("priya") && $0.contains("claimed") }, "\(after.out)")
    }

    @Test func anUnclosedQuoteSendsNothing() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let result = try BQProcess.run(["play"] + server.address + ["--character", "mia", "--script"], home: try makeTemporaryDirectory(),
                                       stdin: "# the one with the poem\ncomplete c09 text \"we wrote thirty\ncomplete c02\nunlock r99\n")
        #expect(result.status == 1, "a script with a failed line fails")
        // Each refusal names the script's line, comments counted, as an editor numbers them.
        #expect(result.err.contains("line 2: A quote is not closed: nothing was sent."), "\(result.err)")
        #expect(result.err.contains("line 4: "), "\(result.err)")
        #expect(result.out.contains("Completed “Wisdom From Strangers”"), "the next line still runs: \(result.out)")
        let status = try BQProcess.run(["admin", "status"] + server.adminFlags)
        #expect(status.out.contains("Challenges 1/15 done"), "\(status.out)")
    }

    @Test func aDareLeftOverWordDoesNotDeliverIt() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let home = try makeTemporaryDirectory()
        let saved = try BQProcess.run(["play"] + server.address + ["--character", "priya", "dare", "save", "Cartwheel", "On the lawn", "25"],
                                      home: home)
        #expect(saved.status == 0, "\(saved.err)")
        let deliver = try BQProcess.run(["play"] + server.address + ["dare", "deliver", "now"], home: home)
        #expect(deliver.status == 64)
        let dare = try BQProcess.run(["play"] + server.address + ["dare"], home: home)
        #expect(dare.out.contains("draft"), "\(dare.out)")

        // The birthday person writes no dare: `dare` says what dares are for them instead.
        let miaHome = try makeTemporaryDirectory()
        let mia = try BQProcess.run(["play"] + server.address + ["--character", "mia", "dare"], home: miaHome)
        #expect(mia.status == 0, "\(mia.err)")
        #expect(mia.out.contains("Secret dares are written by your friends"), "\(mia.out)")
        let save = try BQProcess.run(["play"] + server.address + ["dare", "save", "x", "y", "25"], home: miaHome)
        #expect(save.status == 1, "another role's command is refused, as a friend's complete is")
        #expect(save.err.contains("Secret dares are written by your friends"), "on stderr, as every refusal: \(save.err)")
    }

    @Test func noServerIsSaidPlainly() throws {
        // Nothing listens on port 1 (a privileged port no test server can have).
        let result = try BQProcess.run(["play", "--port", "1", "--character", "mia", "whoami"], home: try makeTemporaryDirectory())
        #expect(result.status == 2)
        #expect(result.err.contains("Is bq serve running at 127.0.0.1:1?"), "\(result.err)")
    }

    @Test func aScreenShownOfflineSaysItIsTheLastOneSeen() throws {
        let server = try ServerProcess()
        let mia = try BQProcess(["play"] + server.address + ["--character", "mia"], home: try makeTemporaryDirectory())
        #expect(mia.output.waitFor("Type help for commands."))
        mia.send("points")
        #expect(mia.output.waitFor("Points: 0 ✦"))
        server.stop()
        #expect(mia.output.waitFor("The server is stopping (a restart?); reconnecting when it is back…"))
        mia.send("points")
        #expect(mia.output.waitFor("Points: 0 ✦"))
        #expect(mia.output.waitFor("Offline: this is the game as last seen (version "))
        #expect(mia.finish() == 0)
    }

    @Test func theOrganizersQuestionIsShownWhenTheInputIsNotATerminal() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let sam = try BQProcess(["play"] + server.address + ["--character", "sam"], home: try makeTemporaryDirectory())
        #expect(sam.output.waitFor("Type help for commands."))
        sam.send("adjust-points -5 --reason oops")
        #expect(sam.output.waitFor("are you sure? [y/N]"), "the line read next is the answer: it must be asked")
        sam.send("n")
        #expect(sam.output.waitFor("Cancelled."))
        sam.send("whoami")
        #expect(sam.output.waitFor("You are Sam"), "the command after the answer runs")
        #expect(sam.finish() == 0)
    }
}

