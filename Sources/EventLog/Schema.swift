/// The schema as an ordered list of migrations; `PRAGMA user_version` records how many ran.
/// Append new migrations at the end; never edit one that has shipped.
enum Schema {
    static let migrations: [String] = [
        // 1: the log, idempotency records, snapshots.
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
    ]

    static var currentVersion: Int64 { Int64(migrations.count) }
}
