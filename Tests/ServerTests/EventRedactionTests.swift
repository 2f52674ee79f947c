import Foundation
import JSON
import Server
import Testing
import Views

/// The organizer reads the event log; it must not hand them any player's credentials.
@Suite struct EventRedactionTests {
    @Test func theEventLogShowsNoDeviceTokenHashOrPin() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        defer { try? server.stop() }
        let mia = try server.connect()
        try mia.ok("claim", ["character": "mia", "device": "mias-phone"])
        let sam = try server.connect()
        try sam.ok("claim", ["character": "sam", "device": "sams-phone"])

        let events = try sam.allEvents()
        let text = JSONValue.array(events).serialized()
        #expect(!text.contains("mias-phone") && !text.contains("sams-phone"), "a device id is readable")
        #expect(!text.contains("token_hash"))
        #expect(!text.contains("\"pin\"") && !text.contains("4821"), "a PIN is readable")

        // What is left is still the log: who claimed what, and the seeded characters.
        let claims = events.filter { $0["type"] == "character_claimed" }
        #expect(claims.map { $0["data"]?["character"] } == ["mia", "sam"])
        let seeded = try #require(events.first { $0["type"] == "game_seeded" })
        guard case .array(let characters)? = seeded["data"]?["content"]?["characters"] else {
            Issue.record("the seeded characters are missing")
            return
        }
        #expect(characters.count == 5)
        #expect(characters.first?["name"] == "Mia")
    }

    /// A claim past a device's token bound names the token it ends: a hash like any other.
    @Test func theTokenAClaimEndsIsLeftOutToo() {
        let shown = EventRedaction.shown(type: "character_claimed", payload:
            #"{"character":"mia","device":"d","ends_token_hash":"old","takeover":false,"token_hash":"new"}"#)
        #expect(shown == ["character": "mia", "takeover": false])
    }
}
