import Foundation
import JSON
import Protocol
import Testing
@testable import EventLog

/// `subscribe since`: every version in the log can be resumed from, even one older than the
/// newest snapshot; since 0 or past the current version gives a snapshot.
@Suite struct ResumeTests {
    /// The last push received, which `subscribe` just consumed.
    static func lastPush(_ client: TestClient) -> JSONValue? {
        client.lines.last { $0.message["push"] != nil }?.message
    }

    @Test func resumeFromBeforeTheNewestSnapshot() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path) { $0.snapshotEvery = 5 }
        defer { try? server.stop() }
        let admin = try server.connect()
        admin.label = "admin"
        try admin.signInAsAdmin()
        let mia = try server.connect()
        mia.label = "mia"
        let token = try #require(try mia.ok("claim", ["character": "mia", "device": "phone"])["result"]?["token"])
        try admin.ok("adjust_points", ["delta": 10, "reason": "start"])
        let resumeFrom = try admin.currentVersion()
        #expect(resumeFrom == 3)
        let adminAt3 = try #require(try admin.ok("state")["result"]?["state"])
        let miaAt3 = try #require(try mia.ok("state")["result"]?["state"])

        let challenges = ["c02", "c06", "c13", "c14", "c04", "c07", "c11", "c03", "c05"]
        for (index, challenge) in challenges.enumerated() {
            try mia.ok("complete_challenge", ["challenge": .string(challenge), "proof": ["kind": "done"]])
            try admin.ok("adjust_points", ["delta": .int(index + 1), "reason": .string("round \(index)")])
        }
        try mia.ok("unlock_reward", ["reward": "r02"])
        let current = try admin.currentVersion()
        #expect(current == resumeFrom + 2 * challenges.count + 1)

        // The log really has snapshots newer than the version we resume from.
        let reader = try EventStore(path: dir.path + "/birthdayquest.sqlite", options: StoreOptions(readOnly: true, checkIntegrity: false))
        let snapshotVersions = try reader.snapshots(game: "main").map(\.version)
        reader.close()
        #expect(snapshotVersions.count >= 3, "\(snapshotVersions)")
        #expect(snapshotVersions.allSatisfy { $0 > Int64(resumeFrom) }, "\(snapshotVersions)")

        for (label, viewAt3) in [("admin", adminAt3), ("mia", miaAt3)] {
            let client = try server.connect()
            client.label = label + " resumed"
            client.recordsLines = true
            if label == "admin" {
                try client.signInAsAdmin()
            } else {
                try client.ok("auth", ["token": token])
            }
            client.adoptMirror(viewAt3, version: resumeFrom)
            let reply = try client.subscribe(since: resumeFrom, digest: ViewDigest.of(viewAt3))
            #expect(reply["result"] == ["mode": "patch"], "\(label)")
            #expect(reply.versionNumber == current)
            let patch = try #require(Self.lastPush(client))
            #expect(patch["push"] == "patch")
            #expect(patch["from"] == .int(resumeFrom))
            #expect(patch["to"] == .int(current))
            #expect(client.snapshots == 0)
            try client.checkMirror(step: "\(label) resumed from \(resumeFrom)")
            #expect(client.problems == [])
        }
        #expect(admin.problems + mia.problems == [])
    }

    @Test func sinceZeroPastCurrentAndCurrent() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path)
        defer { try? server.stop() }
        let admin = try server.connect()
        try admin.signInAsAdmin()
        try admin.ok("adjust_points", ["delta": 10, "reason": "something"])
        let current = try admin.currentVersion()

        for since in [0, current + 1, current + 1_000] {
            let client = try server.connect()
            client.label = "since \(since)"
            client.recordsLines = true
            try client.signInAsAdmin()
            let reply = try client.subscribe(since: since)
            // Past the current version the client saw another game (`diverged`).
            #expect(reply["result"]?["mode"] == "snapshot", "since \(since)")
            #expect(reply["result"]?["diverged"] == (since > current ? .bool(true) : nil), "since \(since)")
            let push = try #require(Self.lastPush(client))
            #expect(push["push"] == "snapshot")
            #expect(push["version"] == .int(current))
            try client.checkMirror(step: "since \(since)")
            #expect(client.problems == [])
        }

        let upToDate = try server.connect()
        upToDate.label = "since current"
        upToDate.recordsLines = true
        try upToDate.signInAsAdmin()
        let view = try #require(try upToDate.ok("state")["result"]?["state"])
        upToDate.adoptMirror(view, version: current)
        let reply = try upToDate.subscribe(since: current)
        #expect(reply["result"] == ["mode": "patch"])
        let push = try #require(Self.lastPush(upToDate))
        #expect(push["push"] == "patch")
        #expect(push["from"] == .int(current))
        #expect(push["to"] == .int(current))
        #expect(push["ops"] == [])

        // Live patches continue from there.
        try admin.ok("adjust_points", ["delta": 1, "reason": "live"])
        try upToDate.checkMirror(step: "live after since == current")
        #expect(upToDate.mirrorVersion == current + 1)
        #expect(upToDate.problems == [])

        let bad = try upToDate.call("subscribe", ["since": -1])
        #expect(bad.errorCode == "bad_request")
    }
}

/// Every version in the log can be resumed from, whatever snapshots lie around it.
@Suite struct ResumeEveryVersionTests {
    @Test func resumeFromEachVersion() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path) { $0.snapshotEvery = 3 }
        defer { try? server.stop() }
        let admin = try server.connect()
        admin.label = "admin"
        try admin.signInAsAdmin()
        var views: [Int: JSONValue] = [:]
        func record() throws {
            let answer = try admin.ok("state")
            views[answer.versionNumber] = answer["result"]?["state"]
        }
        try record()
        let mia = try server.connect()
        try mia.ok("claim", ["character": "mia", "device": "phone"])
        try record()
        for (index, challenge) in ["c02", "c06", "c13", "c14", "c04", "c07"].enumerated() {
            try mia.ok("complete_challenge", ["challenge": .string(challenge), "proof": ["kind": "done"]])
            try record()
            try admin.ok("set_day", ["day": .int(index + 2)])
            try record()
        }
        let current = try admin.currentVersion()
        #expect(views.keys.sorted() == Array(1...current))

        let client = try server.connect()
        client.label = "resumer"
        try client.signInAsAdmin()
        for since in 1...current {
            // The digest of the view `state` gave is the rebuilt view's, whatever snapshot
            // the rebuild started from.
            client.adoptMirror(views[since]!, version: since)
            let reply = try client.subscribe(since: since, digest: ViewDigest.of(views[since]!))
            #expect(reply["result"] == ["mode": "patch"], "since \(since)")
            #expect(client.mirrorVersion == current)
            let caughtUp = client.mirror == views[current]
            #expect(caughtUp, "the view at \(since) plus its patch is the current view")
        }
        #expect(client.snapshots == 0)
        #expect(client.problems == [])
    }
}
