import Foundation
@testable import EventLog
import SQLite
import JSON
import Testing

/// A data directory written by the first release (schema 1) keeps its game, its tokens and its
/// remembered keys when this server starts on it.
@Suite struct SchemaUpgradeTests {
    /// Rewrites a current log into schema 1's layout: the log keyed by (game, version), every
    /// idempotency record in its own table (not marked as changing nothing), no record of failed
    /// syncs.
    private func downgradeToSchemaOne(_ path: String) throws {
        let connection = try SQLiteConnection(path: path, readOnly: false)
        defer { connection.close() }
        try connection.execute("""
            BEGIN IMMEDIATE;
            CREATE TABLE events_v1(
                game TEXT NOT NULL, version INTEGER NOT NULL CHECK (version >= 1), type TEXT NOT NULL,
                actor TEXT NOT NULL, at INTEGER NOT NULL, idem TEXT, payload TEXT NOT NULL,
                PRIMARY KEY (game, version)) WITHOUT ROWID;
            INSERT INTO events_v1 SELECT game, version, type, actor, at, idem, payload FROM events;
            INSERT INTO idempotency(game, identity, key, fingerprint, reply, version)
                SELECT game, idem_identity, idem, idem_fingerprint, idem_reply, version FROM events
                WHERE idem_fingerprint IS NOT NULL;
            DROP TABLE events;
            ALTER TABLE events_v1 RENAME TO events;
            DROP INDEX idempotency_by_version;
            CREATE INDEX idempotency_by_game ON idempotency(game, seq);
            DROP TABLE failed_commits;
            ALTER TABLE idempotency DROP COLUMN unchanged;
            PRAGMA user_version=1;
            COMMIT;
            """)
    }

    @Test func aSchemaOneDataDirectoryKeepsItsGameTokensAndKeys() throws {
        let dir = try TempDirectory()
        defer { dir.remove() }
        let first = try ServerHarness(dataDirectory: dir.path)
        let admin = try first.connect()
        try admin.ok("admin", ["key": .string(ServerHarness.adminKey)])
        let mia = try first.connect()
        let token = try #require(try mia.ok("claim", ["character": "mia", "device": "phone"])["result"]?["token"])
        let keyed: [String: JSONValue] = ["delta": 7, "reason": "before the upgrade", "idem": "old-release"]
        let firstReply = try admin.ok("adjust_points", keyed)
        try mia.ok("complete_challenge", ["challenge": "c06", "proof": ["kind": "text", "text": "done"], "idem": "mia-key"])
        let stateBefore = try admin.ok("state")
        try first.stop()

        let path = dir.path + "/birthdayquest.sqlite"
        try downgradeToSchemaOne(path)
        do {
            let check = try SQLiteConnection(path: path, readOnly: true)
            defer { check.close() }
            #expect(try check.integer("PRAGMA user_version") == 1)
            #expect(try check.integer("SELECT count(*) FROM idempotency") == 2)
        }

        let second = try ServerHarness(dataDirectory: dir.path)
        let admin2 = try second.connect()
        try admin2.ok("admin", ["key": .string(ServerHarness.adminKey)])
        let stateAfter = try admin2.ok("state")
        #expect(stateAfter["version"] == stateBefore["version"])
        let sameState = stateAfter["result"] == stateBefore["result"]
        #expect(sameState, "the game is the same after the upgrade")

        let replay = try admin2.ok("adjust_points", keyed)
        #expect(replay["replayed"] == true)
        #expect(replay["version"] == firstReply["version"])
        #expect(replay["result"] == firstReply["result"])
        let mia2 = try second.connect()
        #expect(try mia2.ok("auth", ["token": token])["result"]?["character"] == "mia")
        #expect(try mia2.ok("complete_challenge", ["challenge": "c06", "proof": ["kind": "text", "text": "done"],
                                                   "idem": "mia-key"])["replayed"] == true)
        #expect(try admin2.ok("ping")["version"] == stateBefore["version"], "replays commit nothing")
        let fresh = try admin2.ok("adjust_points", ["delta": 1, "reason": "after the upgrade", "idem": "new-release"])
        #expect(fresh["replayed"] == nil)
        try second.stop()

        let check = try SQLiteConnection(path: path, readOnly: true)
        defer { check.close() }
        #expect(try check.integer("PRAGMA user_version") == Schema.currentVersion)
        #expect(try check.integer("SELECT count(*) FROM events WHERE idem = 'new-release' AND idem_fingerprint IS NOT NULL") == 1)
    }
}
