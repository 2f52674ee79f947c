/// Hooks for tests that need to provoke storage failures; internal, reached via `@testable import`.
extension EventStore {
    /// Caps the database file at its current size in pages (plus `extra`), so a write that needs
    /// a new page fails with SQLITE_FULL, like a full disk. Returns the previous cap.
    @discardableResult
    func limitPages(extra: Int64 = 0) throws(StorageError) -> Int64 {
        let previous = try connection.integer("PRAGMA max_page_count")
        let pages = try connection.integer("PRAGMA page_count")
        try connection.execute("PRAGMA max_page_count=\(pages + extra)")
        return previous
    }

    /// Restores a page cap returned by `limitPages`.
    func restorePageLimit(_ pages: Int64) throws(StorageError) {
        try connection.execute("PRAGMA max_page_count=\(pages)")
    }

    /// Runs raw SQL on this store's connection.
    func executeForTesting(_ sql: String) throws(StorageError) {
        try connection.execute(sql)
    }
}
