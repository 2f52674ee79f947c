/// The schema as an ordered list of migrations; `PRAGMA user_version` records how many ran.
/// Append new migrations at the end; never edit one that has shipped.
enum Schema {
    static let migrations: [String] = [
        // 1: the log, idempotency records, snapshots. (The log's table is replaced by 2.)
        """
        CREATE TABLE events(
            game TEXT NOT NULL,
            version INTEGER NOT NULL CHECK (version >= 1),
            type TEXT NOT NULL,
            actor TEXT NOT NULL,
            at INTEGER NOT NULL,
            idem TEXT,
            payload TEXT NOT NULL,
            PRIMARY KEY (game, version)
        ) WITHOUT ROWID;
        -- No unique index on the random key: the single writer checks uniqueness in memory and
        -- rebuilds its map from here at start-up. seq (the rowid) keeps commit order.
        CREATE TABLE idempotency(
            seq INTEGER PRIMARY KEY,
            game TEXT NOT NULL,
            identity TEXT NOT NULL,
            key TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            reply TEXT NOT NULL,
            version INTEGER NOT NULL
        );
        CREATE INDEX idempotency_by_game ON idempotency(game, seq);
        CREATE TABLE snapshots(
            game TEXT NOT NULL,
            version INTEGER NOT NULL,
            state TEXT NOT NULL,
            PRIMARY KEY (game, version)
        ) WITHOUT ROWID;
        """,
        // 2: the log as one append-only B-tree. Keyed by (game, version), interleaved games
        // inserted into the middle of the tree, splitting and rebalancing leaves: a commit of a
        // few dozen events across four games dirtied about 20 pages, mostly half-empty leaves and
        // the idempotency index. Now new rows go in commit order (seq, the rowid; migrated rows
        // keep (game, version) order), (game, version)
        // is a small unique index, and a command's idempotency record rides on its last event
        // (the idempotency table keeps older records and those of commands without events).
        """
        CREATE TABLE events_by_seq(
            seq INTEGER PRIMARY KEY,
            game TEXT NOT NULL,
            version INTEGER NOT NULL CHECK (version >= 1),
            type TEXT NOT NULL,
            actor TEXT NOT NULL,
            at INTEGER NOT NULL,
            idem TEXT,
            payload TEXT NOT NULL,
            idem_identity TEXT,
            idem_fingerprint TEXT,
            idem_reply TEXT,
            CHECK ((idem_identity IS NULL) = (idem_fingerprint IS NULL)
                   AND (idem_fingerprint IS NULL) = (idem_reply IS NULL)
                   AND (idem_fingerprint IS NULL OR idem IS NOT NULL))
        );
        INSERT INTO events_by_seq(game, version, type, actor, at, idem, payload)
            SELECT game, version, type, actor, at, idem, payload FROM events ORDER BY game, version;
        DROP TABLE events;
        ALTER TABLE events_by_seq RENAME TO events;
        CREATE UNIQUE INDEX events_by_game ON events(game, version);
        """,
        // 3: the server keeps only a remembered key's digest and version in memory and reads the
        // reply back from the log when a retry replays it: records are looked up by
        // (game, version), which also serves loading them at start-up.
        """
        CREATE INDEX idempotency_by_version ON idempotency(game, version);
        DROP INDEX idempotency_by_game;
        """,
        // 4: a record of each commit that failed after writing its last frame (its sync failed),
        // written over what that commit left in the WAL so that it cannot come back after a
        // crash (`EventStore.settleFailedCommit`).
        """
        CREATE TABLE failed_commits(
            seq INTEGER PRIMARY KEY,
            at INTEGER NOT NULL,
            error TEXT NOT NULL
        );
        """,
        // 5: which records are of commands that changed nothing. Those move no version, so a
        // window of versions does not bound them, and a start-up reads only the newest of them.
        // The ones already there are those no event of their version carries the key of (the
        // records schema 1 kept for changes are carried by their events' `idem`).
        """
        ALTER TABLE idempotency ADD COLUMN unchanged INTEGER NOT NULL DEFAULT 0 CHECK (unchanged IN (0, 1));
        UPDATE idempotency SET unchanged = 1 WHERE NOT EXISTS (
            SELECT 1 FROM events
            WHERE events.game = idempotency.game AND events.version = idempotency.version AND events.idem = idempotency.key);
        """,
    ]

    static var currentVersion: Int64 { Int64(migrations.count) }
}
