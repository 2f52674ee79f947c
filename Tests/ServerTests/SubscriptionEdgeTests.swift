import Foundation
import JSON
import Testing

/// Subscriptions where something other than a plain commit happens on the connection.
@Suite struct SubscriptionEdgeTests {
    /// "A request that commits nothing leaves [the version] as it is", so it is no commit to
    /// push: a keyed no-op stores its idempotency record and nothing else.
    @Test func aKeyedMutationThatChangesNothingSendsNoPatch() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        defer { try? server.stop() }
        let organizer = try server.connect()
        try organizer.ok("claim", ["character": "sam", "device": "sams-phone"])
        let watcher = try server.connect()
        try watcher.ok("claim", ["character": "priya", "device": "priyas-phone"])
        try watcher.subscribe()
        let start = watcher.mirrorVersion
        let day = try #require(watcher.mirror?["game"]?["day"]?.intValue)

        let same = try organizer.ok("set_day", ["day": .int(day), "idem": "same-day"])
        #expect(same["version"]?.intValue == start, "nothing committed")
        let real = try organizer.ok("adjust_points", ["delta": 5, "reason": "a real change", "idem": "real"])
        let version = try #require(real["version"]?.intValue)

        let patch = try watcher.waitForPush("patch")
        #expect(patch["from"]?.intValue == start && patch["to"]?.intValue == version,
                "the first patch is the real change's: \(patch.serialized())")
        #expect(watcher.problems.isEmpty, "\(watcher.problems)")
    }

    @Test func signingInAsSomeoneElseKeepsTheSubscriptionWithTheNewView() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        defer { try? server.stop() }
        let device = try server.connect()
        try device.ok("claim", ["character": "priya", "device": "shared-tablet"])
        try device.subscribe()
        #expect(device.mirror?["me"]?["character"] == "priya")

        // The snapshot comes with the sign-in, ahead of its reply.
        try device.ok("claim", ["character": "theo", "device": "shared-tablet"])
        #expect(device.snapshots == 2)
        #expect(device.mirror?["me"]?["character"] == "theo")

        let admin = try server.connect()
        try admin.signInAsAdmin()
        let change = try admin.ok("adjust_points", ["delta": 3, "reason": "after the switch"])
        let patch = try device.waitForPush("patch")
        #expect(patch["to"] == change["version"])
        try device.checkMirror(step: "after the switch to theo")

        // And on to the admin console's view, on the same connection.
        try device.ok("admin", ["key": .string(ServerHarness.adminKey)])
        #expect(device.snapshots == 3)
        #expect(device.mirror?["me"]?["role"] == "admin")
        try admin.ok("adjust_points", ["delta": 4, "reason": "after the second switch"])
        try device.waitForPush("patch")
        try device.checkMirror(step: "after the switch to admin")
        #expect(device.problems.isEmpty, "\(device.problems)")
    }
}
