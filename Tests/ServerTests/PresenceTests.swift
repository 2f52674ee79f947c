import Foundation
import JSON
import Testing

/// `characters` tells the organizer and the admin console who is online; nobody else.
@Suite struct PresenceTests {
    private func connected(_ reply: JSONValue) -> [String: JSONValue] {
        var found: [String: JSONValue] = [:]
        for character in reply["result"]?["characters"]?.arrayValue ?? [] {
            if let id = character["id"]?.stringValue, let count = character["connected"] { found[id] = count }
        }
        return found
    }

    @Test func onlyTheOrganizerAndAdminSeeWhoIsConnected() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        defer { try? server.stop() }
        let mia = try server.connect()
        try mia.ok("claim", ["character": "mia", "device": "phone"])
        let miaAgain = try server.connect()
        try miaAgain.ok("claim", ["character": "mia", "device": "phone"])
        let sam = try server.connect()
        try sam.ok("claim", ["character": "sam", "device": "sams-phone"])
        let admin = try server.connect()
        try admin.signInAsAdmin()

        let seen = connected(try admin.ok("characters"))
        #expect(seen["mia"] == 2 && seen["sam"] == 1 && seen["priya"] == 0, "\(seen)")
        #expect(connected(try sam.ok("characters")) == seen, "the organizer sees it too")
        #expect(connected(try mia.ok("characters")).isEmpty, "a player does not")
        #expect(connected(try server.connect().ok("characters")).isEmpty, "nor does a connection that is not signed in")

        miaAgain.socket.close()
        var after: [String: JSONValue] = [:]
        // The server learns of the close when it reads the end of the connection; ask until it
        // has (nothing tells the admin's connection when that was).
        let deadline = Date().addingTimeInterval(20)
        while after["mia"] != 1 && Date() < deadline { after = connected(try admin.ok("characters")) }
        #expect(after["mia"] == 1)
    }
}
