import Foundation
import JSON
import Testing

/// A server of another version, a faulty one, or something else on the port may send numbers
/// the real server never does: `bq` shows what it can and goes on, never stops on them.
@Suite struct FaultyServerTests {
    /// Answers as a server whose view and versions hold `game` and `version`.
    static func server(game: [String: JSONValue], version: JSONValue) -> FakeServer {
        var members = LiveNewsTests.view.objectValue ?? [:]
        var fields = members["game"]?.objectValue ?? [:]
        for (key, value) in game { fields[key] = value }
        members["game"] = .object(fields)
        let view = JSONValue.object(members)
        return FakeServer { request in
            let id = request["id"] ?? .null
            switch request["op"]?.stringValue {
            case "claim":
                return [["id": id, "ok": true, "version": version, "result": ["token": "t", "character": "mia", "role": "birthday"]]]
            case "admin":
                return [["id": id, "ok": true, "version": version, "result": ["role": "admin"]]]
            case "state":
                return [["id": id, "ok": true, "version": version, "result": ["state": view]]]
            case "subscribe":
                return [["id": id, "ok": true, "version": version, "result": ["mode": "snapshot"]],
                        ["push": "snapshot", "version": version, "state": view]]
            case "events":
                return [["id": id, "ok": true, "version": version,
                         "result": ["events": [["version": version, "type": "points_adjusted", "at": "2026-11-25T10:00:00Z",
                                                "actor": "admin", "data": ["delta": 1, "reason": "r"]]]]]]
            case "save_challenge":
                // An id no real server makes: a terminal's commands (set the title, clear the screen).
                return [["id": id, "ok": true, "version": version, "result": ["challenge": "c9\u{1B}]0;owned\u{07}\u{1B}[2J"]]]
            case "characters":
                return [["id": id, "ok": true, "version": version, "result": ["characters": [
                    ["id": "mia", "name": "Mia", "role": "birthday", "claimed": false],
                ]]]]
            default:
                return [["id": id, "ok": true, "version": version, "result": [:]]]
            }
        }
    }

    @Test func aBadgeBarFromImpossibleCountsIsDrawn() throws {
        for (unlocked, total) in [(12, 9), (-3, 9), (Int.max, 7), (Int.min, 7)] {
            let fake = Self.server(game: ["rewards_unlocked": .int(unlocked), "rewards_total": .int(total)], version: 4)
            defer { fake.stop() }
            let home = try makeTemporaryDirectory()
            let run = try BQProcess.run(["play", "--no-color", "--port", String(fake.port), "--character", "mia", "home"], home: home)
            #expect(run.status == 0, "\(unlocked)/\(total): \(run.err)")
            #expect(run.out.contains("Final badge: "), "\(unlocked)/\(total): \(run.out)")
        }
    }

    @Test func theOrganizersToolsTakeAVersionBelowZeroForNone() throws {
        let fake = Self.server(game: [:], version: .int(Int.min))
        defer { fake.stop() }
        for operation in [["status"], ["log", "--last", "5"], ["log"]] {
            let run = try BQProcess.run(["admin"] + operation + ["--port", String(fake.port), "--key", "k"])
            #expect(run.status == 0, "\(operation): \(run.err)")
        }
    }

    /// Typed by the organizer, against the real server: the console's check before it asks "are
    /// you sure?" (enough points?) must not trap on the most negative number.
    @Test func anAdjustmentOfMinus2To63IsRefusedNotATrap() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let console = try TerminalProcess(["admin", "console", "--no-color"] + server.adminFlags, home: try makeTemporaryDirectory())
        #expect(console.screen.waitFor("> "), "\(console.errors.text)")
        console.type("adjust-points -9223372036854775808 --reason x\r")
        #expect(console.screen.waitFor("Not enough points: have 0, cannot take 9223372036854775808"), "\(console.screen.text) \(console.errors.text)")
        console.type("quit\r")
        #expect(console.waitForExit() == 0)
    }

    @Test func aPickBeyondAnyNumberIsNoCharacter() throws {
        let fake = Self.server(game: [:], version: 4)
        defer { fake.stop() }
        let run = try BQProcess.run(["play", "--no-color", "--port", String(fake.port)], home: try makeTemporaryDirectory(),
                                    stdin: "-9223372036854775808\n0\n2\nquit\n")
        #expect(run.status != nil, "bq play stopped on a signal: \(run.err)")
        #expect(run.out.contains("No character -9223372036854775808: pick 1 to 1"), "\(run.out)")
        #expect(run.out.contains("No character 0:"), "\(run.out)")
    }

    @Test func anIdTheServerNamesReachesTheTerminalEscaped() throws {
        let fake = Self.server(game: [:], version: 4)
        defer { fake.stop() }
        let added = try BQProcess.run(["admin", "add-challenge", "--port", String(fake.port), "--key", "k", "--title", "T",
                                       "--description", "D", "--points", "5", "--difficulty", "easy", "--category", "social"])
        #expect(!added.out.contains("\u{1B}") && !added.out.contains("\u{07}"), "\(added.out.debugDescription)")
        #expect(added.out.contains("Added challenge c9^[]0;owned^G^[[2J."), "\(added.out.debugDescription) \(added.err)")
    }

    /// `--json` prints the protocol's lines for programs; on a terminal, what would drive it
    /// (a faulty server's bytes, or a player's text in a view) is escaped, the JSON's meaning kept.
    @Test func rawLinesForProgramsCannotDriveTheTerminal() throws {
        let fake = FakeServer(afterHello: { connection in
            [["push": "note", "text": "a\u{9B}2Jb\u{202E}c"]] + (connection == 1 ? [FakeServer.raw("\u{1B}]0;owned\u{07} not JSON")] : [])
        }) { request in
            let id = request["id"] ?? .null
            return [["id": id, "ok": true, "version": 1, "result": ["token": "t", "character": "mia", "role": "birthday"]]]
        }
        defer { fake.stop() }
        // Interactive: the line that is not JSON costs the client its connection, and a one-shot
        // would wait for its answer on the next ones.
        let play = try BQProcess(["play", "--json", "--port", String(fake.port), "--character", "mia"], home: try makeTemporaryDirectory())
        defer { play.kill() }
        #expect(play.output.waitFor("not JSON"), "\(play.output.text.debugDescription)")
        #expect(play.output.waitFor(#""a\u009B2Jb\u202Ec""#), "the same JSON string: \(play.output.text.debugDescription)")
        let shown = play.output.text
        for raw in ["\u{1B}", "\u{07}", "\u{9B}", "\u{202E}"] {
            #expect(!shown.contains(raw), "\(shown.debugDescription)")
        }
        #expect(shown.contains("^[]0;owned^G not JSON"), "\(shown.debugDescription)")
    }
}

/// Another program on the port (a web or ssh server that speaks first) is said at once, with
/// what it said, rather than tried again for half a minute and reported as a JSON error.
@Suite struct NotABQServerTests {
    @Test func aPortHeldBySomethingElseIsNamedAtOnce() throws {
        let fake = FakeServer(hello: FakeServer.raw("SSH-2.0-OpenSSH_9.2p1 Debian-2\u{1B}[2J")) { _ in [] }
        defer { fake.stop() }
        let run = try BQProcess.run(["play", "--port", String(fake.port), "--character", "mia", "whoami"], home: try makeTemporaryDirectory())
        #expect(run.status == 2, "\(run.err)")
        #expect(run.err.contains("answered, but not as a bq server (its first line: \"SSH-2.0-OpenSSH_9.2p1 Debian-2?[2J\")"),
                "\(run.err.debugDescription)")
    }
}
