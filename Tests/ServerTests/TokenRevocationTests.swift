import Foundation
import JSON
import Testing
@testable import EventLog

/// "The old token stops working at once" (GAME.md): at its place in the order of commands,
/// not when the takeover reaches the disk.
@Suite struct TokenRevocationTests {
    /// One connection's requests are decided in order, and a claim holds the ones behind it
    /// until it is answered, so the race is between connections: the old device's command
    /// arrives after the takeover was decided and before it is on disk.
    @Test func aMutationDecidedAfterATakeoverOfItsTokenIsRefused() throws {
        let race = try LockedTakeover()
        defer { race.close() }
        let takeover = try race.decideTakeover()
        // Refused at its place in the order, and answered once the takeover it was decided
        // after is on disk (a refusal never describes a state that might yet be taken back).
        let late = try race.oldDevice.send("adjust_points", ["delta": 5, "reason": "sent with the old token"])

        try race.releaseTheLog()
        #expect(try race.newDevice.reply(to: takeover)["ok"] == true)
        let refusal = try race.oldDevice.reply(to: late)
        #expect(refusal.errorCode == "unauthenticated", "\(refusal.serialized())")
        #expect(try race.oldDevice.waitForPush("bye")["reason"] == "unclaimed")
        #expect(try race.admin.currentVersion() == race.before + 1, "only the takeover committed")
        let types = try race.admin.allEvents().compactMap { $0["type"]?.stringValue }
        #expect(types.last == "character_claimed")
    }

    /// A read queued behind the old device's change starts once that change is answered, which
    /// is when the takeover it was decided after is published, before the `bye` goes out: the
    /// token no longer works then, for reads as for changes. (Answered, the read would show the
    /// game as of the takeover's publish, and whatever else committed with it.)
    @Test func aReadStartedAfterATakeoverOfItsTokenIsRefused() throws {
        let race = try LockedTakeover()
        defer { race.close() }
        let takeover = try race.decideTakeover()
        // One write: the read waits for the change ahead of it, which is refused at its place in
        // the order and answered with the takeover once that is on disk.
        try race.oldDevice.sendRaw(Array((#"{"id":700,"op":"adjust_points","delta":1,"reason":"r"}"# + "\n"
            + #"{"id":701,"op":"state"}"# + "\n" + #"{"id":702,"op":"whoami"}"# + "\n"
            + #"{"id":703,"op":"characters"}"# + "\n").utf8))

        try race.releaseTheLog()
        #expect(try race.newDevice.reply(to: takeover)["ok"] == true)
        #expect(try race.oldDevice.reply(to: 700).errorCode == "unauthenticated")
        let read = try race.oldDevice.reply(to: 701)
        #expect(read.errorCode == "unauthenticated", "\(read.serialized())")
        #expect(try race.oldDevice.reply(to: 702).errorCode == "unauthenticated")
        // Public, so answered, but as to anyone: who is online is the organizer's, which this
        // device no longer is.
        let characters = try race.oldDevice.reply(to: 703)
        #expect(characters["ok"] == true)
        #expect(!characters.serialized().contains("connected"), "\(characters.serialized())")
        #expect(try race.oldDevice.waitForPush("bye")["reason"] == "unclaimed")
    }

    /// The old device's change, decided after the takeover and so refused, also waits for a
    /// friend's commit decided between them. When the takeover reaches the disk first, the `bye`
    /// goes out then: the refusal must come before it, not never. A claim queued behind the
    /// change must not be made for a device that is being cut off (it would never hear of it,
    /// and the character would be held by nobody). (Whether the writer commits the takeover
    /// alone depends on when its thread wakes: five rounds, so that nearly every run has one.)
    @Test func aChangeRefusedAfterATakeoverIsAnsweredBeforeTheBye() throws {
        for round in 1...5 {
            let race = try LockedTakeover(friends: ["dani"])
            defer { race.close() }
            race.oldDevice.label = "old device, round \(round)"
            let dani = race.friends["dani"]!
            let takeover = try race.decideTakeover()
            let draft = try dani.send("save_secret", ["title": "A dare", "description": "d", "points": 25])
            try #require(try race.admin.waitUntilDecided(atVersion: race.before + 2), "the draft was never decided")
            try race.oldDevice.sendRaw(Array((#"{"id":800,"op":"adjust_points","delta":5,"reason":"old token"}"# + "\n"
                + #"{"id":801,"op":"claim","character":"theo","device":"old-phone"}"# + "\n").utf8))

            try race.releaseTheLog()
            #expect(try race.newDevice.reply(to: takeover)["ok"] == true)
            #expect(try dani.reply(to: draft)["ok"] == true)
            #expect(try race.oldDevice.reply(to: 800).errorCode == "unauthenticated", "round \(round)")
            let rest = try race.oldDevice.readToEOF()
            #expect(race.oldDevice.byeReason == "unclaimed")
            // The claim is refused, or never started: either way Theo is still free.
            let claim = rest.first { $0["id"] == 801 }
            #expect(claim == nil || claim?.errorCode == "unauthenticated", "round \(round): \(claim?.serialized() ?? "")")
            let theo = try race.admin.ok("characters")["result"]?["characters"]?.arrayValue?.first { $0["id"] == "theo" }
            #expect(theo?["claimed"] == false, "round \(round): \(theo?.serialized() ?? "no theo")")
        }
    }

    /// A device cut off by an unclaim gets its `bye`, and nothing of what was published with
    /// the unclaim: here a new gift's content, which the organizer it no longer is would have
    /// seen. The two are decided in one loop turn, so their outcomes come back together.
    @Test func aDeviceCutOffGetsNothingCommittedWithItsUnclaim() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        defer { try? server.stop() }
        let oldDevice = try server.connect()
        oldDevice.label = "old device"
        try oldDevice.ok("claim", ["character": "sam", "device": "prank-phone"])
        try oldDevice.subscribe()
        let admin = try server.connect()
        try admin.signInAsAdmin()
        // One write: decided in one loop turn, so published in one.
        let gift: JSONValue = [
            "id": 901, "op": "save_reward", "from": "Grandma Rosa", "title": "A late gift", "teaser": "Soon", "type": "text",
            "cost": 10, "content": ["text": "CONTENT-AFTER-THE-UNCLAIM", "urls": []],
        ]
        try admin.sendRaw(Array((#"{"id":900,"op":"unclaim","character":"sam"}"# + "\n" + gift.serialized() + "\n").utf8))
        #expect(try admin.reply(to: 900)["ok"] == true)
        #expect(try admin.reply(to: 901)["ok"] == true)

        let seen = try oldDevice.readToEOF().map { $0.serialized() }.joined(separator: "\n")
        #expect(oldDevice.byeReason == "unclaimed")
        #expect(!seen.contains("CONTENT-AFTER-THE-UNCLAIM"), "\(seen)")
        // The organizer's view does hold it: the check above looks for something real.
        #expect(try admin.ok("state").serialized().contains("CONTENT-AFTER-THE-UNCLAIM"))
    }

    /// A device subscribed as Theo claims Priya, free, while her own device takes her back with
    /// the PIN. When both claims are published together, the first device must not get Priya's
    /// view as it stands after the takeover (a gift committed with it, here): its claim's reply,
    /// then `bye`. The two land in one publish only when the server reads both claims in one turn,
    /// so the race is run a number of times; each run checks every view the device got.
    @Test func aClaimTakenOverInTheSameTurnShowsNothingAfterTheTakeover() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        defer { try? server.stop() }
        let admin = try server.connect()
        try admin.signInAsAdmin()
        for attempt in 1...20 {
            try admin.ok("unclaim", ["character": "priya"])
            try admin.ok("unclaim", ["character": "theo"])
            let device = try server.connect()
            device.label = "device, attempt \(attempt)"
            try device.ok("claim", ["character": "theo", "device": .string("theo-\(attempt)")])
            try device.subscribe()
            let priya = try server.connect()
            let gift: JSONValue = [
                "id": 900, "op": "save_reward", "from": "Priya", "from_character": "priya", "title": .string("Late \(attempt)"),
                "teaser": "t", "type": "text", "cost": 5, "content": ["text": .string("AFTER-THE-TAKEOVER-\(attempt)"), "urls": []],
            ]
            try device.sendRaw(Array((#"{"id":500,"op":"claim","character":"priya","device":"prank"}"# + "\n").utf8))
            try priya.sendRaw(Array((#"{"id":1,"op":"claim","character":"priya","device":"priyas-phone","pin":"1964"}"# + "\n").utf8))
            try admin.sendRaw(Array((gift.serialized() + "\n").utf8))
            let takeover = try priya.reply(to: 1)
            _ = try admin.reply(to: 900)

            var seen: [JSONValue] = []
            var claimed: JSONValue?
            while claimed == nil, let message = try device.readMessage() {
                if message["id"] == 500 { claimed = message } else { seen.append(message) }
            }
            guard let claimed, claimed["ok"] == true, takeover["ok"] == true,
                  takeover.versionNumber > claimed.versionNumber else {
                // Priya's own device came first: the prank claim was refused, and Theo's view goes on.
                device.socket.close()
                continue
            }
            let lost = takeover.versionNumber
            seen += try device.readToEOF()
            #expect(device.byeReason == "unclaimed", "attempt \(attempt)")
            // Theo's view stays Theo's to see (that token still works); Priya's, once a snapshot
            // switched to it, must stop short of the takeover.
            var viewer = "theo"
            for message in seen {
                if message["push"] == "snapshot" { viewer = message["state"]?["me"]?["character"]?.stringValue ?? "?" }
                guard viewer == "priya", let version = (message["version"] ?? message["to"])?.intValue else { continue }
                #expect(version < lost, "attempt \(attempt): Priya's view at \(version), taken back at \(lost): \(message.serialized())")
            }
        }
    }
}

/// Sam claimed on `oldDevice` (and each of `friends` on a connection of its own), and another
/// connection holding SQLite's write lock: commands are decided but none commits until
/// `releaseTheLog`.
private struct LockedTakeover {
    let dir: TempDirectory
    let server: ServerHarness
    let oldDevice: TestClient
    let newDevice: TestClient
    let admin: TestClient
    let friends: [String: TestClient]
    let locker: EventStore
    /// The game's version before the takeover.
    let before: Int

    init(friends names: [String] = []) throws {
        dir = try TempDirectory()
        server = try ServerHarness(dataDirectory: dir.path) { $0.busyTimeoutMilliseconds = 30_000 }
        oldDevice = try server.connect()
        oldDevice.label = "old device"
        try oldDevice.ok("claim", ["character": "sam", "device": "old-phone"])
        newDevice = try server.connect()
        newDevice.label = "new device"
        admin = try server.connect()
        try admin.signInAsAdmin()
        var friends: [String: TestClient] = [:]
        for name in names {
            let friend = try server.connect()
            try friend.ok("claim", ["character": .string(name), "device": .string("\(name)s-phone")])
            friends[name] = friend
        }
        self.friends = friends
        before = try admin.currentVersion()
        locker = try EventStore(path: dir.path + "/birthdayquest.sqlite",
                                options: StoreOptions(synchronous: .off, busyTimeoutMilliseconds: 5_000, checkIntegrity: false))
        try locker.executeForTesting("BEGIN IMMEDIATE")
    }

    /// Sends the new device's takeover of Sam (with the PIN) and waits until it is decided: a
    /// refused `expect` names the version commands are decided at. Returns the request's id.
    func decideTakeover() throws -> Int {
        let takeover = try newDevice.send("claim", ["character": "sam", "device": "new-phone", "pin": "7305"])
        try #require(try admin.waitUntilDecided(atVersion: before + 1), "the takeover was never decided")
        return takeover
    }

    func releaseTheLog() throws { try locker.executeForTesting("ROLLBACK") }

    func close() {
        locker.close()
        try? server.stop()
        dir.remove()
    }
}
