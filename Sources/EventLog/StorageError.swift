import CSQLite3
import SQLite

/// What every fallible call of the event log throws: SQLite's result code, extended code, message
/// and SQL. Named for the layer, so that callers above it need not import the SQLite wrapper.
public typealias StorageError = SQLiteError

extension StorageError {
    /// The file is not a database, or is one whose pages do not hold together.
    public var meansDamagedFile: Bool { code == SQLITE_CORRUPT || code == SQLITE_NOTADB }

    /// The log's files were moved, deleted or replaced under the server: no commit succeeds
    /// again until a restart (`EventStore.filesMovedError`).
    public var meansFilesMoved: Bool { extendedCode == Self.filesMovedCode }

    /// SQLITE_READONLY_DBMOVED, a macro Swift does not import: "the file was moved since it was opened".
    static let filesMovedCode = SQLITE_READONLY | (4 << 8)
}
