import SQLite

/// What every fallible call of the event log throws: SQLite's result code, extended code, message
/// and SQL. Named for the layer, so that callers above it need not import the SQLite wrapper.
public typealias StorageError = SQLiteError
