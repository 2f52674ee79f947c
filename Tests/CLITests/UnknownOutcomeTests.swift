import Foundation
import Testing

/// A change whose reply does not come in time: a one-shot cannot send it again (it ends), so
/// it must say that the change may have been made, and exit 75 for scripts to tell.
@Suite struct UnknownOutcomeTests {
    @Test func aOneShotChangeWithNoReplyInTimeExits75AndTheChangeIsMadeOnce() throws {
        let (server, home) = try Self.serverWithMiaClaimed()
        defer { server.stop() }

        // Another connection holds SQLite's write lock: the change is decided but cannot commit.
        let lock = try LogLock(server)
        let stuck = try BQProcess.run(["play"] + server.address + ["--timeout", "1", "complete", "c15", "done"], home: home)
        try lock.release()
        #expect(stuck.status == 75, "\(stuck.out) \(stuck.err)")
        #expect((stuck.out + stuck.err).contains("it may or may not have been applied"), "\(stuck.out) \(stuck.err)")

        // The server kept it and made it once the disk was free. An organizer's change after it
        // is decided after it, so its reply means the completion is durable too.
        let adjusted = try BQProcess.run(["admin"] + server.adminFlags + ["adjust-points", "1", "--reason", "after"])
        #expect(adjusted.status == 0, "\(adjusted.err)")
        let after = try BQProcess.run(["play"] + server.address + ["whoami"], home: home)
        #expect(after.out.contains("Points: 101 ✦  (earned 101, spent 0)"), "c15 counted once: \(after.out)")
    }

    /// A one-shot left without an answer prints the key it sent the change under; the same
    /// command run again with it gets the first answer back, and the change is made once.
    @Test func aOneShotLeftWithoutAnAnswerCanBeRunAgainUnderItsKey() throws {
        let (server, home) = try Self.serverWithMiaClaimed()
        defer { server.stop() }

        let lock = try LogLock(server)
        let play = try BQProcess.run(["play"] + server.address + ["--timeout", "1", "complete", "c15", "done"], home: home)
        let admin = try BQProcess.run(["admin"] + server.adminFlags + ["--timeout", "1", "adjust-points", "7", "--reason", "bonus"])
        // A claim has no key to give; the device file it leaves is what makes the rerun safe.
        let theoHome = try makeTemporaryDirectory()
        let claim = try BQProcess.run(["play"] + server.address + ["--timeout", "1", "--character", "theo", "whoami"], home: theoHome)
        try lock.release()
        #expect(claim.status == 2, "\(claim.err)")
        #expect(claim.err.contains("running the same command again from this device is safe"), "\(claim.err)")
        let claimAgain = try BQProcess.run(["play"] + server.address + ["--character", "theo", "whoami"], home: theoHome)
        #expect(claimAgain.status == 0 && claimAgain.out.contains("You are Theo"), "\(claimAgain.out) \(claimAgain.err)")
        #expect(play.status == 75 && admin.status == 75, "\(play.err) \(admin.err)")
        let playKey = try #require(Self.key(in: play.err), "\(play.err)")
        let adminKey = try #require(Self.key(in: admin.err), "\(admin.err)")
        #expect(play.err.contains("or run bq play --idem \(playKey) with the same command, signed in as now: if it was made, it is not made twice"),
                "\(play.err)")
        #expect(admin.err.contains("or run the same command with --idem \(adminKey) added, signed in as now: if it was made, it is not made twice"),
                "\(admin.err)")
        #expect(playKey != adminKey)

        let playAgain = try BQProcess.run(["play"] + server.address + ["--idem", playKey, "complete", "c15", "done"], home: home)
        #expect(playAgain.status == 0, "\(playAgain.err)")
        #expect(playAgain.out.contains("(applied once, by an earlier send of this request)"), "\(playAgain.out)")
        let adminAgain = try BQProcess.run(["admin"] + server.adminFlags + ["adjust-points", "7", "--reason", "bonus", "--idem", adminKey])
        #expect(adminAgain.status == 0, "\(adminAgain.err)")
        #expect(adminAgain.out.contains("(applied once, by an earlier send of this request)"), "\(adminAgain.out)")

        let after = try BQProcess.run(["play"] + server.address + ["whoami"], home: home)
        #expect(after.out.contains("Points: 107 ✦  (earned 107, spent 0)"), "each made once: \(after.out)")
    }

    /// A server that waits as long as it takes for its disk, far longer than a client, and the
    /// home whose device file holds Mia.
    private static func serverWithMiaClaimed(sourceLocation: SourceLocation = #_sourceLocation) throws -> (ServerProcess, URL) {
        let server = try ServerProcess(environment: ["BQ_BUSY_TIMEOUT_MS": "60000"])
        let home = try makeTemporaryDirectory()
        let claimed = try BQProcess.run(["play"] + server.address + ["--character", "mia", "whoami"], home: home)
        #expect(claimed.status == 0, "\(claimed.err)", sourceLocation: sourceLocation)
        return (server, home)
    }

    /// The key in "... --idem KEY ..." of a message.
    private static func key(in message: String) -> String? {
        guard let range = message.range(of: "--idem ") else { return nil }
        let key = message[range.upperBound...].prefix { !$0.isWhitespace }
        return key.isEmpty ? nil : String(key)
    }

    /// `--idem` is one change's key: not for a game or a script, and not typed at a console,
    /// which already makes each change at most once.
    @Test func aKeyIsRefusedWhereItWouldNameManyChanges() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let script = try BQProcess.run(["play"] + server.address + ["--character", "mia", "--script", "--idem", "k1"],
                                       home: try makeTemporaryDirectory())
        #expect(script.status == 64, "\(script.err)")
        #expect(script.err.contains("--idem goes with one command"), "\(script.err)")
        let miaHome = try makeTemporaryDirectory()
        let read = try BQProcess.run(["play"] + server.address + ["--character", "mia", "--idem", "k3", "board"], home: miaHome)
        #expect(read.status == 0, "\(read.err)")
        #expect(read.err.contains("--idem k3 was not used: board makes no change"), "\(read.err)")
        let long = try BQProcess.run(["admin"] + server.adminFlags + ["set-day", "2", "--idem", String(repeating: "k", count: 129)])
        #expect(long.status == 64, "\(long.err)")
        #expect(long.err.contains("--idem must be 1 to 128 characters, got 129"), "\(long.err)")
        let console = try BQProcess.run(["admin"] + server.adminFlags + ["console"], stdin: "set-day 2 --idem k2\nstatus\n")
        #expect(console.out.contains("bq admin set-day ... --idem KEY"), "\(console.out)")
        #expect(console.out.contains("a key belongs to whoever sent the change"), "\(console.out)")
        let samHome = try makeTemporaryDirectory()
        let log = try BQProcess.run(["play"] + server.address + ["--character", "sam", "--idem", "k5", "log"], home: samHome)
        #expect(log.status == 0, "\(log.err)")
        #expect(log.err.contains("--idem k5 was not used: log makes no change"), "\(log.err)")
        let proof = try BQProcess.run(["play"] + server.address + ["complete", "c02", "text", "We sang", "--idem", "k4"], home: miaHome)
        #expect(proof.status == 64, "\(proof.out) \(proof.err)")
        #expect(proof.err.contains("--idem goes before the command, in a one-shot: bq play --idem KEY complete"), "\(proof.err)")
        #expect(!console.out.contains("It is now day 2"), "\(console.out)")
    }

    /// An open game keeps a change made while the server is away and sends it when it is back:
    /// it says so in the words typed, asks before a quit would give the change up, and tells
    /// its answer when it comes.
    @Test func anOpenGameKeepsAChangeMadeOfflineAndAsksBeforeGivingItUp() throws {
        let first = try ServerProcess()
        var restarted: ServerProcess?
        defer {
            first.stop()
            restarted?.stop()
        }
        let mia = try Self.playing("mia", whileStopping: first)
        mia.type("complete c05 done\r")
        #expect(mia.screen.waitFor("No answer yet to complete c05 (is the server running, and the network up?): it is kept"), "\(mia.screen.text)")
        mia.type("quit\r")
        #expect(mia.screen.waitFor("Still no answer to complete c05: leaving gives up sending it"), "\(mia.screen.text)")
        mia.type("n\r")
        restarted = try ServerProcess(dataDirectory: first.dataDirectory, port: first.port)
        #expect(mia.screen.waitFor("✓ complete c05, sent earlier, went through. Points: 60 ✦."), "\(mia.screen.text)")
        mia.type("quit\r")
        #expect(mia.waitForExit() == 0)
        #expect(mia.screen.text.components(separatedBy: "Leave anyway?").count == 2, "asked once: \(mia.screen.text)")
        #expect(!mia.screen.text.contains("Mia completed"), "told by its late answer alone: \(mia.screen.text)")
    }

    /// The last gift's unlock answered late still tells the birthday person that the final
    /// badge came with it (the news leaves the badge to the answer, as part of her change).
    @Test func aLateAnswerToTheLastGiftTellsTheFinalBadge() throws {
        let first = try ServerProcess()
        var restarted: ServerProcess?
        defer {
            first.stop()
            restarted?.stop()
        }
        for reward in (1...8).map({ "r0\($0)" }) {
            let unlocked = try BQProcess.run(["admin"] + first.adminFlags + ["force-unlock", reward, "--no-deduct"])
            #expect(unlocked.status == 0, "\(unlocked.err)")
        }
        let funded = try BQProcess.run(["admin"] + first.adminFlags + ["adjust-points", "500", "--reason", "for the last gift"])
        #expect(funded.status == 0, "\(funded.err)")
        let mia = try Self.playing("mia", whileStopping: first)
        mia.type("unlock r09\r")
        #expect(mia.screen.waitFor("No answer yet to unlock r09"), "\(mia.screen.text)")
        restarted = try ServerProcess(dataDirectory: first.dataDirectory, port: first.port)
        #expect(mia.screen.waitFor("✓ unlock r09, sent earlier, went through."), "\(mia.screen.text)")
        #expect(mia.screen.waitFor("🏅 That was the last gift: the final badge is unlocked!"), "\(mia.screen.text)")
        mia.type("quit\r")
        #expect(mia.waitForExit() == 0)
    }

    /// Ctrl-C ends the game at once, as it always has; a change still kept to be sent is named
    /// as it goes, so nobody believes it was made.
    @Test func ctrlCNamesTheKeptChangeItGivesUp() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let mia = try Self.playing("mia", whileStopping: server)
        mia.type("complete c05 done\r")
        #expect(mia.screen.waitFor("No answer yet to complete c05 (is the server running, and the network up?): it is kept"), "\(mia.screen.text)")
        // At the prompt again, where Ctrl-C is a byte for the editor: this terminal is not the
        // child's controlling one, so a Ctrl-C typed while the command still ran would reach no one.
        #expect(mia.waitForLocalModes { $0 & tcflag_t(ISIG | ICANON) == 0 })
        mia.type("\u{03}")
        #expect(mia.waitForExit() != nil)
        #expect(mia.errors.waitFor("Left with no answer to complete c05: it may or may not have been made"),
                "\(mia.screen.text) \(mia.errors.text)")
    }

    /// `character`'s game open at a terminal, then `server` stopped under it: the game says so,
    /// and keeps what is typed next.
    static func playing(_ character: String, whileStopping server: ServerProcess,
                        sourceLocation: SourceLocation = #_sourceLocation) throws -> TerminalProcess {
        let player = try TerminalProcess(["play", "--no-color"] + server.address + ["--character", character],
                                         home: try makeTemporaryDirectory())
        #expect(player.screen.waitFor("> "), "\(player.errors.text)", sourceLocation: sourceLocation)
        server.stop()
        #expect(player.screen.waitFor("The server is stopping"), "\(player.screen.text)", sourceLocation: sourceLocation)
        return player
    }

    /// The organizer's tools in an open game keep a change made offline as the player's
    /// commands do: a short wait, then kept, and told by its late answer alone.
    @Test func anOrganizersToolMadeOfflineIsKeptAndToldOnce() throws {
        let first = try ServerProcess()
        var restarted: ServerProcess?
        defer {
            first.stop()
            restarted?.stop()
        }
        let sam = try Self.playing("sam", whileStopping: first)
        sam.type("set-day 2\r")
        #expect(sam.screen.waitFor("No answer yet to set-day 2"), "\(sam.screen.text)")
        restarted = try ServerProcess(dataDirectory: first.dataDirectory, port: first.port)
        #expect(sam.screen.waitFor("✓ set-day 2, sent earlier, went through."), "\(sam.screen.text)")
        sam.type("quit\r")
        #expect(sam.waitForExit() == 0)
        #expect(!sam.screen.text.contains("It is now day 2."), "told by its late answer alone: \(sam.screen.text)")
    }

    /// An edit starts from the item as the server holds it: with the server away there is
    /// nothing to start from, and the organizer hears so after the short offline wait.
    @Test func anEditMadeOfflineSaysThatNothingWasSaved() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let sam = try Self.playing("sam", whileStopping: server)
        sam.type("edit-challenge C05 --points 10\r")
        #expect(sam.screen.waitFor("challenge c05 could not be read as it stands, and nothing was saved"), "\(sam.screen.text)")
        sam.type("quit\r")
        #expect(sam.waitForExit() == 0, "nothing kept to ask about: \(sam.screen.text)")
    }
}
