import Foundation
import JSON
import Testing

/// A subscriber that stops reading must not make the server buffer without bound, and
/// must converge (one snapshot, then patches) once it reads again.
@Suite struct SlowSubscriberTests {
    static let mutations = 5_000
    /// One request at a time, so each edit is its own commit and its own patch (a pipelined
    /// burst is group-committed into a few patches that would not fill anything).
    static let batch = 1

    /// Edits c01 with a fresh 2,000-character description: ~2 KB of patch per commit, so the
    /// patches (~10 MB) far outgrow the kernel's socket buffers and the server's own bound is
    /// what keeps memory flat. (adjust_points patches are ~100 bytes: 5,000 of them fit in
    /// the kernel buffers and would never reach the bound.)
    static func edit(_ number: Int) -> [String: JSONValue] {
        let stamp = String(number)
        let description = String(repeating: "\(stamp) ", count: 2000 / (stamp.count + 1))
        return ["challenge": "c01", "title": "Sunrise Swim", "description": .string(String(description.prefix(2000))),
                "points": 75, "difficulty": "hard", "category": "physical"]
    }

    static func commit(_ range: Range<Int>, on admin: TestClient) throws -> Int {
        var version = 0
        for start in stride(from: range.lowerBound, to: range.upperBound, by: batch) {
            let ids = try (start..<min(start + batch, range.upperBound)).map { try admin.send("save_challenge", edit($0)) }
            for id in ids {
                let reply = try admin.reply(to: id)
                guard reply["ok"] == .bool(true) else { throw HarnessError("edit refused: \(reply.serialized())") }
                version = reply["version"]?.intValue ?? version
            }
        }
        return version
    }

    @Test func slowSubscriberStaysBoundedAndConverges() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        // The server runs as its own process so that its memory is measured alone: tests run in
        // parallel, and anything else in this process (a 16 MiB socket test, say) would count.
        let server = try BQProcess(dataDirectory: dir.path, environment: [
            "BQ_SYNCHRONOUS": "off",
            "BQ_MAX_QUEUED_BYTES": String(64 << 10),
            "BQ_REQUESTS_PER_SECOND": "1000000",
            "BQ_IDLE_TIMEOUT_SECONDS": "0",
        ])
        defer {
            server.signal(SIGKILL)
            _ = server.waitForExit()
        }
        let admin = try TestClient(port: server.port)
        try admin.ok("admin", ["key": .string(ServerHarness.adminKey)])
        let slow = try TestClient(port: server.port, receiveBufferBytes: 4096)
        slow.label = "slow"
        try slow.ok("claim", ["character": "mia", "device": "phone"])
        try slow.subscribe()
        #expect(slow.snapshots == 1)

        // Warm up allocator pools and SQLite's cache before the baseline.
        _ = try Self.commit(0..<300, on: admin)
        let baseline = server.residentBytes()
        let finalVersion = try Self.commit(300..<(300 + Self.mutations), on: admin)
        let growth = server.residentBytes() - baseline
        #expect(baseline > 0)
        #expect(growth < 6 << 20, "the server's resident memory grew by \(growth >> 10) KiB while a subscriber did not read")

        // Reading again: it catches up through one fresh snapshot, with no gap.
        while slow.mirrorVersion < finalVersion {
            guard try slow.readMessage() != nil else { throw HarnessError("slow subscriber got EOF") }
        }
        #expect(slow.snapshots >= 2, "the subscriber fell behind and was sent a fresh snapshot")
        #expect(slow.patches < Self.mutations, "patches were held back, not queued")
        try slow.checkMirror(step: "caught up")
        #expect(slow.mirror?["challenges"]?["c01"]?["description"] == Self.edit(299 + Self.mutations)["description"])
        #expect(slow.problems == [])
    }

    /// A retry answered from the log names the version its first answer named. When that
    /// answer went to another device of the same player while this one's patches were held, the
    /// view must still come first: a snapshot, then the replayed answer.
    @Test func aReplayToAHeldSubscriberComesAfterItsView() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let server = try ServerHarness(dataDirectory: dir.path) { config in
            config.limits.maxQueuedBytes = 64 << 10
            config.limits.requestsPerSecond = 1_000_000
        }
        defer { try? server.stop() }
        let admin = try server.connect()
        try admin.ok("admin", ["key": .string(ServerHarness.adminKey)])
        let phone = try server.connect(receiveBufferBytes: 4096)
        phone.label = "phone"
        let token = try #require(try phone.ok("claim", ["character": "mia", "device": "phone"])["result"]?["token"])
        try phone.subscribe()
        let laptop = try server.connect()
        try laptop.ok("auth", ["token": token])

        // Far more patch bytes than the kernel's buffers on both ends take: the phone, not
        // reading, is held.
        _ = try Self.commit(0..<3_000, on: admin)
        let keyed: [String: JSONValue] = ["challenge": "c02", "proof": ["kind": "done"], "idem": "from the laptop"]
        let first = try laptop.ok("complete_challenge", keyed)
        let version = try #require(first["version"]?.intValue)

        let retry = try phone.reply(to: try phone.send("complete_challenge", keyed))
        #expect(retry["replayed"] == true && retry["version"]?.intValue == version, "\(retry.serialized())")
        #expect(phone.mirrorVersion >= version, "the replay named version \(version) ahead of the view, at \(phone.mirrorVersion)")
        try phone.checkMirror(step: "after the replay")
        #expect(phone.problems == [])
    }
}

/// Past `max_total_queued_bytes`, clients that do not read are closed; subscribers are not (the
/// contract promises a slow subscriber is never disconnected): their patches are held instead,
/// and each converges through a snapshot once it reads.
@Suite struct SlowSubscribersPastTheWholeBoundTests {
    @Test func manySlowSubscribersAreHeldNotClosed() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        // Forty subscribers, each held once it owes 4 KiB, owe well over the 64 KiB bound between them.
        let server = try ServerHarness(dataDirectory: dir.path) { config in
            config.limits.maxQueuedBytes = 4_096
            config.limits.maxTotalQueuedBytes = 65_536
            config.limits.requestsPerSecond = 1_000_000
        }
        defer { try? server.stop() }
        let admin = try server.connect()
        try admin.ok("admin", ["key": .string(ServerHarness.adminKey)])
        var slow: [TestClient] = []
        for number in 1...40 {
            let client = try server.connect(receiveBufferBytes: 4096)
            client.label = "slow \(number)"
            try client.ok("admin", ["key": .string(ServerHarness.adminKey)])
            try client.subscribe()
            slow.append(client)
        }
        let finalVersion = try SlowSubscriberTests.commit(0..<3_000, on: admin)
        for client in slow {
            while client.mirrorVersion < finalVersion {
                guard try client.readMessage() != nil else { throw HarnessError("\(client.label) was closed") }
            }
            try client.checkMirror(step: "caught up")
            #expect(client.problems == [])
        }
        #expect(slow.contains { $0.snapshots >= 2 }, "no subscriber was held: the test did not reach the bound")
    }
}
