import CSQLite

/// A failure reported by SQLite, with its result code and message.
package struct SQLiteError: Error, CustomStringConvertible {
    let code: Int32
    let message: String

    package var description: String { "\(message) (SQLite code \(code))" }
    /// The primary result code (extended codes carry more in the high bits).
    var primaryCode: Int32 { code & 0xFF }
    var isBusy: Bool { primaryCode == SQLITE_BUSY || primaryCode == SQLITE_LOCKED }
    var isCorruption: Bool { primaryCode == SQLITE_CORRUPT || primaryCode == SQLITE_NOTADB }
    var isConstraint: Bool { primaryCode == SQLITE_CONSTRAINT }
}

/// One value bound to or read from a statement.
package enum SQLiteValue: Equatable, Sendable {
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
    case null
}

/// The rows of one statement, with the names of its columns.
package struct SQLiteRows: Sendable {
    /// The result columns' names, in order (`AS` names where given).
    package var columns: [String]
    /// Each row's values, in the order of `columns`.
    package var rows: [[SQLiteValue]]
}

/// A thin wrapper over one connection to the system's SQLite, the one SQLite in the binary: the
/// dozen statements the vault needs do not justify a database package, and the server's SQLite
/// driver (SignetServer) runs on it too. Not thread-safe; the owner serialises access (the
/// vault's actor, the server's connection lock).
package final class SQLiteConnection {
    private let handle: OpaquePointer
    /// Prepared statements by SQL text, at most `statementCacheLimit` of them; a statement
    /// beyond that is prepared for one run and finalised.
    private var statements: [String: OpaquePointer] = [:]
    private let statementCacheLimit: Int

    /// The sqlite3 handle, for settings this wrapper does not cover.
    var rawHandle: OpaquePointer { handle }

    /// The linked library's version as a number (3035000 for 3.35.0).
    package static var libraryVersionNumber: Int32 { sqlite3_libversion_number() }

    /// The linked library's version as text ("3.40.1").
    package static var libraryVersion: String { String(cString: sqlite3_libversion()) }

    /// Opens (or, with `create`, creates) the database file at `path`, never through a symbolic
    /// link; keeps at most `statementCacheLimit` prepared statements (the vault uses a fixed
    /// dozen; the server's SQL text varies with the size of a batch).
    package init(path: String, create: Bool, statementCacheLimit: Int = .max) throws(SQLiteError) {
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_NOFOLLOW | (create ? SQLITE_OPEN_CREATE : 0)
        let status = sqlite3_open_v2(path, &db, flags, nil)
        guard status == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open the database"
            sqlite3_close_v2(db)
            throw SQLiteError(code: status, message: message)
        }
        handle = db
        self.statementCacheLimit = max(0, statementCacheLimit)
        sqlite3_extended_result_codes(db, 1)
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements that return no rows.
    package func execute(_ sql: String) throws(SQLiteError) {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if status != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(errorMessage)
            throw SQLiteError(code: status, message: message)
        }
    }

    /// Runs one statement with `arguments` bound in order; returns its rows. Statements are
    /// prepared once per connection and reused.
    @discardableResult
    package func query(_ sql: String, _ arguments: [SQLiteValue] = []) throws(SQLiteError) -> [[SQLiteValue]] {
        try rows(sql, arguments).rows
    }

    /// Runs one statement with `arguments` bound in order (`?` or `?NNN` placeholders); returns
    /// its rows with the names of its columns. Every row is stepped through, so a statement with
    /// `RETURNING` has made all its changes when this returns.
    package func rows(_ sql: String, _ arguments: [SQLiteValue] = []) throws(SQLiteError) -> SQLiteRows {
        let (statement, cached) = try prepared(sql)
        defer {
            if cached {
                sqlite3_reset(statement)
                sqlite3_clear_bindings(statement)
            } else {
                sqlite3_finalize(statement)
            }
        }
        for (offset, argument) in arguments.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32
            switch argument {
            case .integer(let value): status = sqlite3_bind_int64(statement, index, value)
            case .real(let value): status = sqlite3_bind_double(statement, index, value)
            case .text(let value):
                status = sqlite3_bind_text(statement, index, value, Int32(clamping: value.utf8.count), SQLiteConnection.transient)
            case .blob(let value):
                status = value.withUnsafeBytes {
                    sqlite3_bind_blob(statement, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(clamping: $0.count), SQLiteConnection.transient)
                }
            case .null: status = sqlite3_bind_null(statement, index)
            }
            guard status == SQLITE_OK else { throw lastError() }
        }
        var columns: [String]?
        var rows: [[SQLiteValue]] = []
        while true {
            let status = sqlite3_step(statement)
            guard status == SQLITE_ROW || status == SQLITE_DONE else { throw lastError(status) }
            // Named after the first step: a statement SQLite prepared again for a changed schema
            // may have other columns.
            let names = columns ?? Self.columnNames(statement)
            columns = names
            if status == SQLITE_DONE { break }
            rows.append((0..<Int32(names.count)).map { column(statement, $0) })
        }
        return SQLiteRows(columns: columns ?? [], rows: rows)
    }

    /// The prepared statement for `sql`, from the cache or prepared now; `cached` is false for
    /// one prepared past the cache's limit, which the caller finalises.
    private func prepared(_ sql: String) throws(SQLiteError) -> (statement: OpaquePointer, cached: Bool) {
        if let statement = statements[sql] { return (statement, true) }
        let cache = statements.count < statementCacheLimit
        var statement: OpaquePointer?
        let status = sqlite3_prepare_v3(handle, sql, -1, cache ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0, &statement, nil)
        guard status == SQLITE_OK else { throw lastError(status) }
        guard let statement else { throw SQLiteError(code: SQLITE_MISUSE, message: "no SQL statement in the text") }
        if cache { statements[sql] = statement }
        return (statement, cache)
    }

    /// The number of rows the last INSERT, UPDATE or DELETE changed.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// Waits at most `milliseconds` for another connection's lock (sleeping, not spinning)
    /// before a statement fails as busy.
    /// Whether SQLite opened the main database read-only (it does, silently, when the file is
    /// not writable for this process).
    package var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

    package func setBusyTimeout(milliseconds: Int32) {
        sqlite3_busy_timeout(handle, milliseconds)
    }

    /// SQLite's defensive mode: no `writable_schema`, no raw page writes, no other change that
    /// could corrupt the file by SQL alone.
    package func enableDefensiveMode() throws(SQLiteError) {
        let status = signet_sqlite3_set_defensive(handle)
        guard status == SQLITE_OK else { throw lastError(status) }
    }

    /// Double-quoted strings are identifiers only, in DML and DDL: a misspelt column name is an
    /// error rather than a string literal.
    package func disableDoubleQuotedStrings() throws(SQLiteError) {
        var status = signet_sqlite3_disable_dqs_dml(handle)
        if status == SQLITE_OK { status = signet_sqlite3_disable_dqs_ddl(handle) }
        guard status == SQLITE_OK else { throw lastError(status) }
    }

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction: committed if it returns, rolled back
    /// if it throws. IMMEDIATE takes the write lock up front, so two processes never both
    /// read-then-write and fail at commit.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try query("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try query("COMMIT")
            return result
        } catch {
            if sqlite3_get_autocommit(handle) == 0 { _ = try? query("ROLLBACK") }
            throw error
        }
    }

    private static func columnNames(_ statement: OpaquePointer) -> [String] {
        (0..<sqlite3_column_count(statement)).map { index -> String in
            guard let name = sqlite3_column_name(statement, index) else { return "" }
            return String(cString: name)
        }
    }

    private func column(_ statement: OpaquePointer, _ index: Int32) -> SQLiteValue {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(statement, index))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(statement, index))
        case SQLITE_TEXT:
            // The text first, then its length in bytes (SQLite's order); NULs inside are kept.
            guard let text = sqlite3_column_text(statement, index) else { return .text("") }
            let count = Int(sqlite3_column_bytes(statement, index))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(statement, index))
            guard count > 0, let base = sqlite3_column_blob(statement, index) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: base, count: count)))
        default: return .null
        }
    }

    private func lastError(_ status: Int32? = nil) -> SQLiteError {
        SQLiteError(code: status ?? sqlite3_extended_errcode(handle), message: String(cString: sqlite3_errmsg(handle)))
    }

    /// SQLITE_TRANSIENT: SQLite copies bound values before the call returns.
    private static let transient = unsafeBitCast(Int(-1), to: sqlite3_destructor_type.self)
}

extension SQLiteValue {
    package var integer: Int64? { if case .integer(let v) = self { return v } else { return nil } }
    package var text: String? { if case .text(let v) = self { return v } else { return nil } }
    package var blob: [UInt8]? { if case .blob(let v) = self { return v } else { return nil } }
}
