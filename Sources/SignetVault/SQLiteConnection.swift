import CSQLite

/// A failure reported by SQLite, with its result code and message.
struct SQLiteError: Error, CustomStringConvertible {
    let code: Int32
    let message: String

    var description: String { "\(message) (SQLite code \(code))" }
    /// The primary result code (extended codes carry more in the high bits).
    var primaryCode: Int32 { code & 0xFF }
    var isBusy: Bool { primaryCode == SQLITE_BUSY || primaryCode == SQLITE_LOCKED }
    var isCorruption: Bool { primaryCode == SQLITE_CORRUPT || primaryCode == SQLITE_NOTADB }
    var isConstraint: Bool { primaryCode == SQLITE_CONSTRAINT }
}

/// One value bound to or read from a statement.
enum SQLiteValue: Equatable {
    case integer(Int64)
    case text(String)
    case blob([UInt8])
    case null
}

/// A thin wrapper over one SQLite connection: the dozen statements the vault needs do not
/// justify a database package. Not thread-safe; the owning actor serialises access.
final class SQLiteConnection {
    private let handle: OpaquePointer
    /// Prepared statements by SQL text; the vault uses a fixed dozen.
    private var statements: [String: OpaquePointer] = [:]

    /// The sqlite3 handle, for settings this wrapper does not cover.
    var rawHandle: OpaquePointer { handle }

    /// Opens (or, with `create`, creates) the database file at `path`.
    init(path: String, create: Bool) throws(SQLiteError) {
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_NOFOLLOW | (create ? SQLITE_OPEN_CREATE : 0)
        let status = sqlite3_open_v2(path, &db, flags, nil)
        guard status == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open the database"
            sqlite3_close_v2(db)
            throw SQLiteError(code: status, message: message)
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements that return no rows.
    func execute(_ sql: String) throws(SQLiteError) {
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
    func query(_ sql: String, _ arguments: [SQLiteValue] = []) throws(SQLiteError) -> [[SQLiteValue]] {
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (offset, argument) in arguments.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32
            switch argument {
            case .integer(let value): status = sqlite3_bind_int64(statement, index, value)
            case .text(let value): status = sqlite3_bind_text(statement, index, value, -1, SQLiteConnection.transient)
            case .blob(let value):
                status = value.withUnsafeBytes {
                    sqlite3_bind_blob(statement, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32($0.count), SQLiteConnection.transient)
                }
            case .null: status = sqlite3_bind_null(statement, index)
            }
            guard status == SQLITE_OK else { throw lastError() }
        }
        var rows: [[SQLiteValue]] = []
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { break }
            guard status == SQLITE_ROW else { throw lastError(status) }
            let count = sqlite3_column_count(statement)
            rows.append((0..<count).map { column(statement, $0) })
        }
        return rows
    }

    /// The prepared statement for `sql`, from the cache or prepared now.
    private func prepared(_ sql: String) throws(SQLiteError) -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK, let statement else {
            throw lastError()
        }
        statements[sql] = statement
        return statement
    }

    /// The number of rows the last INSERT, UPDATE or DELETE changed.
    var changes: Int { Int(sqlite3_changes(handle)) }

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

    private func column(_ statement: OpaquePointer, _ index: Int32) -> SQLiteValue {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(statement, index))
        case SQLITE_TEXT: return .text(String(cString: sqlite3_column_text(statement, index)))
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
    var integer: Int64? { if case .integer(let v) = self { return v } else { return nil } }
    var text: String? { if case .text(let v) = self { return v } else { return nil } }
    var blob: [UInt8]? { if case .blob(let v) = self { return v } else { return nil } }
}
