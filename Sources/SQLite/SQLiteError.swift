import CSQLite3

/// A failure of the storage layer: the SQLite result code, the extended code, SQLite's own
/// message and the SQL that failed (when a statement was involved).
public struct SQLiteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The primary result code (`SQLITE_FULL`, `SQLITE_CORRUPT`, ...), i.e. `extendedCode & 0xff`.
    public var code: Int32
    /// The extended result code (`SQLITE_IOERR_FSYNC`, ...); equals `code` when there is none.
    public var extendedCode: Int32
    /// SQLite's message (`sqlite3_errmsg`) or, for errors raised by this module, a plain sentence.
    public var message: String
    /// The SQL being executed, if any.
    public var sql: String?

    public init(code: Int32, extendedCode: Int32? = nil, message: String, sql: String? = nil) {
        self.code = code
        self.extendedCode = extendedCode ?? code
        self.message = message
        self.sql = sql
    }

    public var description: String {
        var text = "SQLite error \(code)"
        if extendedCode != code { text += " (extended \(extendedCode))" }
        text += ": \(message)"
        if let sql { text += " [SQL: \(sql)]" }
        return text
    }

    /// An API misuse detected before touching the database (for example a snapshot beyond the
    /// version its request produces).
    package static func misuse(_ message: String) -> SQLiteError {
        SQLiteError(code: SQLITE_MISUSE, message: message)
    }

    /// The file is not a healthy database of ours (failed `quick_check`, newer schema, ...).
    package static func corrupt(_ message: String, sql: String? = nil) -> SQLiteError {
        SQLiteError(code: SQLITE_CORRUPT, message: message, sql: sql)
    }
}
