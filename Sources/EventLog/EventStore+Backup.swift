extension EventStore {
    /// Writes a consistent copy of the whole log (what its WAL holds included) to `path`, which
    /// must not exist or be empty, as one self-contained file: SQLite's `VACUUM INTO`, which
    /// reads one snapshot and works on a read-only connection beside a running writer.
    public func backup(to path: String) throws(StorageError) {
        let statement = try connection.statement("VACUUM INTO ?1")
        defer { statement.reset() }
        try statement.bind(1, path)
        try statement.run()
    }
}
