import Testing
@testable import EventLog

@Suite struct IdempotencyTests {
    @Test func recordsSurviveCloseAndReopenInCommitOrderWithTheirFingerprints() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/log.sqlite"
            let first = IdempotencyRecord(identity: "alice", key: "k1", fingerprint: "sha-aaa",
                                          reply: #"{"ok":true,"version":1}"#, version: 1)
            let second = IdempotencyRecord(identity: "bob", key: "k2", fingerprint: "sha-bbb",
                                           reply: #"{"ok":true,"version":3}"#, version: 3)
            let other = IdempotencyRecord(identity: "alice", key: "k1", fingerprint: "sha-ccc",
                                          reply: #"{"ok":true}"#, version: 1)
            do {
                let store = try EventStore(path: path)
                #expect(store.append(request("g", expected: 0, idempotency: [first])) == .committed(version: 1))
                #expect(store.append(request("h", expected: 0, idempotency: [other])) == .committed(version: 1))
                #expect(store.append(request("g", expected: 1, count: 2, idempotency: [second])) == .committed(version: 3))
                // A conflicting request writes no record.
                let lost = IdempotencyRecord(identity: "carol", key: "k9", fingerprint: "x", reply: "{}", version: 2)
                #expect(store.append(request("g", expected: 1, idempotency: [lost])) == .conflict(expected: 1, actual: 3))
                store.close()
            }
            let reopened = try EventStore(path: path)
            defer { reopened.close() }
            let records = try reopened.idempotencyRecords(game: "g")
            #expect(records == [first, second])
            #expect(try reopened.idempotencyRecords(game: "h") == [other])
            // A retry of (alice, k1) with another body is recognisable by its fingerprint.
            let retry = (identity: "alice", key: "k1", fingerprint: "sha-zzz")
            let found = try #require(records.first { $0.identity == retry.identity && $0.key == retry.key })
            #expect(found.fingerprint != retry.fingerprint)
            #expect(found.reply == #"{"ok":true,"version":1}"#)
            // Without replies: the same records, the reply text left out.
            let bare = try reopened.idempotencyRecords(game: "g", replies: false)
            #expect(bare.map(\.reply) == ["", ""])
            #expect(bare.map { [$0.identity, $0.key, $0.fingerprint] } == records.map { [$0.identity, $0.key, $0.fingerprint] })
            #expect(bare.map(\.version) == records.map(\.version))
        }
    }

    /// A command that changed nothing writes its record alone. Such records do not move the
    /// version, so a window of versions does not bound them: a limit takes the newest, and
    /// leaves every record of a change.
    @Test func recordsOfCommandsThatChangedNothingAreMarkedAndLimited() throws {
        try withTemporaryDirectory { dir in
            let store = try EventStore(path: dir + "/log.sqlite")
            defer { store.close() }
            func record(_ key: String, version: Int64, changedNothing: Bool) -> IdempotencyRecord {
                IdempotencyRecord(identity: "admin", key: key, fingerprint: "fp-\(key)", reply: "{}", version: version,
                                  changedNothing: changedNothing)
            }
            let change = record("change", version: 1, changedNothing: false)
            #expect(store.append(AppendRequest(game: "g", expected: 0, events: [event(1, key: "change")], idempotency: [change]))
                    == .committed(version: 1))
            let unchanged = (0..<4).map { record("same \($0)", version: 1, changedNothing: true) }
            for record in unchanged {
                #expect(store.append(AppendRequest(game: "g", expected: 1, events: [], idempotency: [record])) == .committed(version: 1))
            }
            let later = record("later", version: 2, changedNothing: false)
            #expect(store.append(AppendRequest(game: "g", expected: 1, events: [event(2, key: "later")], idempotency: [later]))
                    == .committed(version: 2))

            #expect(try store.idempotencyRecords(game: "g") == [change] + unchanged + [later])
            #expect(try store.idempotencyRecords(game: "g", unchangedLimit: 2) == [change] + unchanged[2...] + [later])
            #expect(try store.idempotencyRecords(game: "g", afterVersion: 1, unchangedLimit: 0) == [later])
        }
    }

    @Test func eventsKeepTheIdempotencyKeyOfTheirRequest() throws {
        try withTemporaryDirectory { dir in
            let store = try EventStore(path: dir + "/log.sqlite")
            defer { store.close() }
            let append = AppendRequest(game: "g", expected: 0, events: [event(1, key: "k-7"), event(2)])
            #expect(store.append(append) == .committed(version: 2))
            #expect(try store.allEvents("g").map(\.idempotencyKey) == ["k-7", nil])
        }
    }
}
