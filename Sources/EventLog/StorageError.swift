import CSQLite3
import SQLite

/// What every fallible call of the event log throws: SQLite's result code, extended code, message
/// and SQL. Named for the layer, so that callers above it need not import the SQLite wrapper.
public typealias StorageError = SQLiteError

extension StorageError {
    /// The file is not a database, or is one whose pages do not hold together.
    public var meansDamagedFile: Bool { code == SQLITE_CORRUPT || code == SQLITE_NOTADB }
}
