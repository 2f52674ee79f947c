import Testing
@testable import EventLog
import SQLite

@Suite struct SchemaMigrationTests {
    private let oldRecord = IdempotencyRecord(identity: "alice", key: "k1", fingerprint: "fp-1",
                                              reply: #"{"points":1}"#, version: 2)

    /// A database as schema 1 left it: the log keyed by (game, version), every record in its own table.
    private func makeSchemaOneDatabase(at path: String) throws {
        let connection = try SQLiteConnection(path: path, readOnly: false)
        defer { connection.close() }
        try connection.execute("PRAGMA journal_mode=WAL")
        try connection.execute(Schema.migrations[0])
        try connection.execute("PRAGMA user_version=1")
        try connection.execute("""
            INSERT INTO events(game, version, type, actor, at, idem, payload) VALUES
                ('g', 1, 'tick', 'p', 10, NULL, '{"n":1}'),
                ('h', 1, 'tick', 'p', 11, NULL, '{"n":2}'),
                ('g', 2, 'tick', 'p', 12, 'k1', '{"n":3}');
            INSERT INTO idempotency(game, identity, key, fingerprint, reply, version)
                VALUES ('g', 'alice', 'k1', 'fp-1', '{"points":1}', 2);
            """)
    }

    @Test func aSchemaOneLogKeepsItsEventsAndRecordsAndGoesOnAppending() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/log.sqlite"
            try makeSchemaOneDatabase(at: path)

            let store = try EventStore(path: path)
            defer { store.close() }
            #expect(store.migratedFrom == 1, "the server says that older builds can no longer open it")
            #expect(try store.games() == ["g", "h"])
            #expect(try store.version(game: "g") == 2)
            #expect(try store.allEvents("g").map(\.payload) == [#"{"n":1}"#, #"{"n":3}"#])
            #expect(try store.allEvents("g").last?.idempotencyKey == "k1")
            #expect(try store.allEvents("h").map(\.version) == [1])
            #expect(try store.idempotencyRecords(game: "g") == [oldRecord])
            #expect(try store.storedReply(game: "g", identity: "alice", key: "k1", version: 2) == #"{"points":1}"#)

            let newRecord = IdempotencyRecord(identity: "bob", key: "k2", fingerprint: "fp-2", reply: "{}", version: 3)
            let append = AppendRequest(game: "g", expected: 2, events: [event(4, key: "k2")], idempotency: [newRecord])
            #expect(store.append(append) == .committed(version: 3))
            #expect(try store.idempotencyRecords(game: "g") == [oldRecord, newRecord])
            // The compare-and-set still holds on the migrated table.
            #expect(store.append(request("g", expected: 2)) == .conflict(expected: 2, actual: 3))
            store.close()
            let reopened = try EventStore(path: path)
            defer { reopened.close() }
            #expect(reopened.migratedFrom == nil, "migrated once")
        }
    }

    /// Schema 5 marks the records of commands that changed nothing, those already in a log
    /// included: the ones no event of their version carries the key of.
    @Test func aSchemaFourLogHasItsRecordsOfNoOpsMarked() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/log.sqlite"
            do {
                let connection = try SQLiteConnection(path: path, readOnly: false)
                defer { connection.close() }
                try connection.execute("PRAGMA journal_mode=WAL")
                for migration in Schema.migrations.prefix(4) { try connection.execute(migration) }
                try connection.execute("PRAGMA user_version=4")
                try connection.execute("""
                    INSERT INTO events(game, version, type, actor, at, idem, payload, idem_identity, idem_fingerprint, idem_reply)
                        VALUES ('g', 1, 'tick', 'p', 10, 'k1', '{"n":1}', 'alice', 'fp-1', '{}');
                    INSERT INTO events(game, version, type, actor, at, idem, payload) VALUES ('g', 2, 'tick', 'p', 11, 'k2', '{"n":2}');
                    INSERT INTO idempotency(game, identity, key, fingerprint, reply, version) VALUES
                        ('g', 'bob', 'k2', 'fp-2', '{}', 2),
                        ('g', 'admin', 'same day', 'fp-3', '{}', 2);
                    """)
            }
            let store = try EventStore(path: path)
            defer { store.close() }
            let records = try store.idempotencyRecords(game: "g")
            #expect(records.map(\.key) == ["k1", "k2", "same day"])
            #expect(records.map(\.changedNothing) == [false, false, true])
        }
    }

    @Test func aReadOnlyStoreReadsASchemaOneLogWithoutMigratingIt() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/log.sqlite"
            try makeSchemaOneDatabase(at: path)
            do {
                let reader = try EventStore(path: path, options: StoreOptions(readOnly: true))
                defer { reader.close() }
                #expect(reader.migratedFrom == nil)
                #expect(try reader.games() == ["g", "h"])
                #expect(try reader.allEvents("g").map(\.version) == [1, 2])
                #expect(try reader.idempotencyRecords(game: "g") == [oldRecord])
                #expect(try reader.storedReply(game: "g", identity: "alice", key: "k1", version: 2) == #"{"points":1}"#)
                #expect(reader.append(request("g", expected: 2)) != .committed(version: 3))
            }
            let check = try SQLiteConnection(path: path, readOnly: true)
            defer { check.close() }
            #expect(try check.integer("PRAGMA user_version") == 1, "a read-only open migrates nothing")
        }
    }

    @Test func aReadOnlyStoreRefusesAFileWithoutASchema() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/empty.sqlite"
            let connection = try SQLiteConnection(path: path, readOnly: false)
            try connection.execute("PRAGMA journal_mode=WAL")
            connection.close()
            #expect(throws: StorageError.self) { try EventStore(path: path, options: StoreOptions(readOnly: true)) }
        }
    }

    @Test func aRecordRidesOnItsCommandsLastEventAndOthersKeepARowOfTheirOwn() throws {
        try withTemporaryDirectory { dir in
            let path = dir + "/log.sqlite"
            let store = try EventStore(path: path)
            let onEvent = IdempotencyRecord(identity: "alice", key: "k1", fingerprint: "a", reply: #"{"n":1}"#, version: 2)
            // A keyed command that changed nothing, recorded at the version it was decided at.
            let withoutEvents = IdempotencyRecord(identity: "bob", key: "k2", fingerprint: "b", reply: "{}", version: 2)
            // A record whose key is not its event's.
            let otherKey = IdempotencyRecord(identity: "carol", key: "k3", fingerprint: "c", reply: "{}", version: 3)
            #expect(store.append(AppendRequest(game: "g", expected: 0, events: [event(1, key: "k1"), event(2, key: "k1")],
                                               idempotency: [onEvent])) == .committed(version: 2))
            #expect(store.append(AppendRequest(game: "g", expected: 2, events: [], idempotency: [withoutEvents]))
                == .committed(version: 2))
            #expect(store.append(AppendRequest(game: "g", expected: 2, events: [event(3)], idempotency: [otherKey]))
                == .committed(version: 3))
            #expect(try store.idempotencyRecords(game: "g") == [onEvent, withoutEvents, otherKey])
            #expect(try store.idempotencyRecords(game: "g", afterVersion: 2) == [otherKey])
            // Replies are read back by owner, key and version, wherever the record lives.
            #expect(try store.storedReply(game: "g", identity: "alice", key: "k1", version: 2) == #"{"n":1}"#)
            #expect(try store.storedReply(game: "g", identity: "bob", key: "k2", version: 2) == "{}")
            #expect(try store.storedReply(game: "g", identity: "bob", key: "k1", version: 2) == nil)
            #expect(try store.storedReply(game: "g", identity: "alice", key: "k1", version: 1) == nil)
            #expect(try store.storedReply(game: "h", identity: "alice", key: "k1", version: 2) == nil)
            store.close()

            let check = try SQLiteConnection(path: path, readOnly: true)
            defer { check.close() }
            #expect(try check.integer("SELECT count(*) FROM idempotency") == 2)
            #expect(try check.integer("SELECT count(*) FROM events WHERE idem_fingerprint IS NOT NULL") == 1)
            #expect(try check.integer("SELECT version FROM events WHERE idem_fingerprint IS NOT NULL") == 2)
        }
    }
}
