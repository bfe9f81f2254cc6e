import AsyncKit
import Logging
import NIOCore
import NIOPosix
import SQLKit
import SignetVault
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The server's SQLite under sql-kit: a small driver over SignetVault's `SQLiteConnection`,
/// that is over the system's libsqlite3, the one SQLite in the binary (the vault's hardening
/// needs its C API, and two SQLite copies in one process can drop each other's POSIX locks on a
/// shared file). It does what the store asks of sql-kit: raw SQL with bound parameters, run on
/// `SQLiteThreads.pool`, rows read by column name.
package enum ServerSQLite {
    /// 3.35.0, the first SQLite with `RETURNING`, which the store's statements use.
    static let minimumVersionNumber: Int32 = 3_035_000
    /// How long a statement waits, sleeping, for another connection's write lock before it
    /// fails as busy.
    static let busyTimeoutMilliseconds: Int32 = 10_000
    /// Prepared statements kept per connection (the nonce batches' SQL varies with their size).
    static let statementCacheLimit = 64

    /// Refuses an SQLite older than 3.35 with ``ServerError/configuration(detail:)``; `number`
    /// and `text` default to the linked library's version.
    package static func checkLibraryVersion(number: Int32? = nil, text: String? = nil) throws {
        let number = number ?? SQLiteConnection.libraryVersionNumber
        guard number >= minimumVersionNumber else {
            let text = text ?? SQLiteConnection.libraryVersion
            throw ServerError.configuration(detail: "SQLite 3.35 or later is needed (RETURNING); this system has \(text)")
        }
    }
}

extension ServerSQLite {
    /// Refuses, at start and naming the file, a database every request would fail on later (as
    /// 503s, the node looking healthy): a symbolic link or something that is not a file, a file
    /// that is not an SQLite database or whose schema cannot be read, one this process may only
    /// read. Blocking; called once, before the pools exist. Creates nothing: the file exists.
    package static func preflight(_ path: String) throws {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            throw ServerError.configuration(detail: "\(path): cannot be read: \(String(cString: strerror(errno)))")
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFLNK: throw ServerError.configuration(detail: "\(path): is a symbolic link; give the database's own path")
        default: throw ServerError.configuration(detail: "\(path): is not a regular file, so it cannot be the server's database")
        }
        let connection: SQLiteConnection
        do {
            connection = try SQLiteConnection(path: path, create: false)
        } catch {
            throw ServerError.configuration(detail: "\(path): cannot be opened as an SQLite database: \(error)")
        }
        do {
            _ = try connection.query("SELECT count(*) FROM sqlite_schema")
        } catch {
            throw ServerError.configuration(detail: "\(path): is not an SQLite database, or it is damaged: \(error)")
        }
        guard !connection.isReadOnly else {
            throw ServerError.configuration(detail: "\(path): this user may only read it, and the server writes its database; give the user write access to the file and its folder")
        }
    }
}

/// Opens the server's SQLite connections for async-kit's pool, on the SQLite threads.
struct ServerSQLiteSource: ConnectionPoolSource, Sendable {
    let path: String
    /// The `synchronous` level of the connections' commits: `FULL` or `NORMAL`.
    let synchronous: String
    let threadPool: NIOThreadPool

    func makeConnection(logger: Logger, on eventLoop: any EventLoop) -> EventLoopFuture<ServerSQLiteConnection> {
        let (path, synchronous, threadPool) = (self.path, self.synchronous, self.threadPool)
        return threadPool.runIfActive(eventLoop: eventLoop) {
            try ServerSQLiteConnection.open(path: path, synchronous: synchronous, logger: logger, eventLoop: eventLoop, threadPool: threadPool)
        }
    }
}

/// One pooled SQLite connection. Its statements run on the thread pool, one at a time (the pool
/// lends a connection to one user; the lock makes that a guarantee).
final class ServerSQLiteConnection: ConnectionPoolItem, Sendable {
    let eventLoop: any EventLoop
    let logger: Logger
    private let threadPool: NIOThreadPool
    /// The connection; nil once closed.
    private let connection: Mutex<SQLiteConnection?>
    private let closed = Atomic<Bool>(false)

    /// Opens `path` (created when missing, never through a symbolic link) and sets the
    /// connection up: a sleeping busy timeout, defensive mode, double-quoted strings as
    /// identifiers only, no trust in functions the schema names, WAL, and the commits'
    /// `synchronous` level. Blocking: called on the thread pool.
    ///
    /// A factory rather than a throwing initialiser: Swift 6.3's optimiser crashes on a throwing
    /// initialiser of a class that stores an `Atomic` (release builds only).
    static func open(path: String, synchronous: String, logger: Logger, eventLoop: any EventLoop, threadPool: NIOThreadPool) throws -> ServerSQLiteConnection {
        let opened = try SQLiteConnection(path: path, create: true, statementCacheLimit: ServerSQLite.statementCacheLimit)
        opened.setBusyTimeout(milliseconds: ServerSQLite.busyTimeoutMilliseconds)
        try opened.enableDefensiveMode()
        try opened.disableDoubleQuotedStrings()
        try opened.execute("PRAGMA trusted_schema = OFF")
        let mode = try opened.query("PRAGMA journal_mode = WAL").first?.first?.text
        if mode?.lowercased() != "wal" {
            logger.warning("the SQLite database is not in write-ahead-log mode", metadata: [
                "database": "\(path)", "journal_mode": "\(mode ?? "unknown")",
            ])
        }
        try opened.execute("PRAGMA synchronous = \(synchronous)")
        return ServerSQLiteConnection(opened: opened, logger: logger, eventLoop: eventLoop, threadPool: threadPool)
    }

    private init(opened: sending SQLiteConnection, logger: Logger, eventLoop: any EventLoop, threadPool: NIOThreadPool) {
        self.eventLoop = eventLoop
        self.logger = logger
        self.threadPool = threadPool
        connection = Mutex(opened)
    }

    var isClosed: Bool { closed.load(ordering: .acquiring) }

    func close() -> EventLoopFuture<Void> {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return eventLoop.makeSucceededVoidFuture() }
        // Closing the last connection checkpoints the write-ahead log: disk work, so on the
        // thread pool (on the loop only if the pool has stopped).
        return threadPool.runIfActive(eventLoop: eventLoop) { self.release() }
            .recover { _ in self.release() }
    }

    private func release() {
        connection.withLock { $0 = nil }
    }

    /// Runs one statement on the thread pool; the future completes on the connection's loop.
    func rows(_ sql: String, _ arguments: [SQLiteValue]) -> EventLoopFuture<SQLiteRows> {
        threadPool.runIfActive(eventLoop: eventLoop) {
            try self.connection.withLock { try ServerSQLiteConnection.run($0, sql, arguments) }
        }
    }

    private static func run(_ connection: SQLiteConnection?, _ sql: String, _ arguments: [SQLiteValue]) throws -> SQLiteRows {
        guard let connection else { throw ServerSQLiteError.closed }
        return try connection.rows(sql, arguments)
    }

    /// The connection as sql-kit's database.
    func sql(queryLogLevel: Logger.Level?) -> any SQLDatabase {
        ServerSQLiteDatabase(connection: self, queryLogLevel: queryLogLevel)
    }
}

/// sql-kit's view of one connection.
struct ServerSQLiteDatabase: SQLDatabase {
    let connection: ServerSQLiteConnection
    /// The level SQL text is logged at (never the bound values); nil: not logged.
    let queryLogLevel: Logger.Level?

    var logger: Logger { connection.logger }
    var eventLoop: any EventLoop { connection.eventLoop }
    var dialect: any SQLDialect { ServerSQLiteDialect() }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> ()) -> EventLoopFuture<Void> {
        let prepared: (sql: String, arguments: [SQLiteValue])
        do {
            prepared = try prepare(query)
        } catch {
            return eventLoop.makeFailedFuture(error)
        }
        return connection.rows(prepared.sql, prepared.arguments).map { result in
            Self.deliver(result, to: onRow)
        }
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> ()) async throws {
        let prepared = try prepare(query)
        // Through the future rather than the thread pool's cancellable async call: a cancelled
        // task still runs its COMMIT or ROLLBACK, so no connection goes back to the pool inside
        // a transaction.
        let result = try await connection.rows(prepared.sql, prepared.arguments).get()
        Self.deliver(result, to: onRow)
    }

    /// The query's SQL in SQLite's dialect and its bound values as SQLite takes them.
    private func prepare(_ query: any SQLExpression) throws -> (sql: String, arguments: [SQLiteValue]) {
        let (sql, binds) = serialize(query)
        if let queryLogLevel {
            logger.log(level: queryLogLevel, "SQLite query", metadata: ["sql": "\(sql)"])
        }
        var arguments: [SQLiteValue] = []
        arguments.reserveCapacity(binds.count)
        for bind in binds { arguments.append(try SQLiteBind.value(of: bind)) }
        return (sql, arguments)
    }

    private static func deliver(_ result: SQLiteRows, to onRow: @Sendable (any SQLRow) -> ()) {
        for values in result.rows {
            onRow(ServerSQLiteRow(columns: result.columns, values: values))
        }
    }
}

/// SQLite's SQL as sql-kit writes it: `"identifiers"`, `?NNN` placeholders, and (3.35 being
/// required) `RETURNING` and standard upserts.
struct ServerSQLiteDialect: SQLDialect {
    var name: String { "sqlite" }
    var identifierQuote: any SQLExpression { SQLRaw("\"") }
    var literalStringQuote: any SQLExpression { SQLRaw("'") }
    var supportsAutoIncrement: Bool { false }
    var autoIncrementClause: any SQLExpression { SQLRaw("AUTOINCREMENT") }
    func bindPlaceholder(at position: Int) -> any SQLExpression { SQLRaw("?\(position)") }
    func literalBoolean(_ value: Bool) -> any SQLExpression { SQLRaw(value ? "1" : "0") }
    var literalDefault: any SQLExpression { SQLLiteral.null }
    var supportsReturning: Bool { true }
    var upsertSyntax: SQLUpsertSyntax { .standard }
    var unionFeatures: SQLUnionFeatures { [.union, .unionAll, .intersect, .except] }
    var alterTableSyntax: SQLAlterTableSyntax { .init(allowsBatch: false) }
}

/// One result row; columns are found by name (the first of that name).
struct ServerSQLiteRow: SQLRow {
    let columns: [String]
    let values: [SQLiteValue]

    var allColumns: [String] { columns }

    func contains(column: String) -> Bool { columns.contains(column) }

    func decodeNil(column: String) throws -> Bool {
        guard let index = columns.firstIndex(of: column), index < values.count else { return true }
        return values[index] == .null
    }

    func decode<D: Decodable>(column: String, as type: D.Type) throws -> D {
        guard let index = columns.firstIndex(of: column), index < values.count else { throw ServerSQLiteError.missingColumn(column) }
        return try SQLiteColumnDecoder.decode(D.self, from: values[index], column: column)
    }
}

/// What the driver refuses; it reaches the store as ``ServerError/unavailable(detail:)``.
enum ServerSQLiteError: Error, CustomStringConvertible {
    case closed
    case missingColumn(String)
    case typeMismatch(column: String, holds: String, wanted: String)
    case unsupportedBind(String)

    var description: String {
        switch self {
        case .closed: return "the SQLite connection is closed"
        case .missingColumn(let column): return "the result has no column \(column)"
        case .typeMismatch(let column, let holds, let wanted): return "the column \(column) holds \(holds), not \(wanted)"
        case .unsupportedBind(let type): return "a value of type \(type) cannot be bound to an SQLite statement"
        }
    }
}

/// A bound value (sql-kit's `\(bind:)`) as SQLite takes it: text, integers, reals, bytes
/// (`ByteBuffer`, `[UInt8]`) and nil.
enum SQLiteBind {
    static func value(of bind: any Encodable & Sendable) throws -> SQLiteValue {
        try value(ofAny: bind)
    }

    private static func value(ofAny bind: Any) throws -> SQLiteValue {
        if let optional = bind as? any SQLiteBindableOptional {
            guard let wrapped = optional.wrappedBind else { return .null }
            return try value(ofAny: wrapped)
        }
        switch bind {
        case let text as String: return .text(text)
        case let text as Substring: return .text(String(text))
        case let flag as Bool: return .integer(flag ? 1 : 0)
        case let number as Int: return .integer(Int64(number))
        case let number as Int64: return .integer(number)
        case let number as Int32: return .integer(Int64(number))
        case let number as Int16: return .integer(Int64(number))
        case let number as Int8: return .integer(Int64(number))
        case let number as UInt8: return .integer(Int64(number))
        case let number as UInt16: return .integer(Int64(number))
        case let number as UInt32: return .integer(Int64(number))
        case let number as UInt: return try integer(exactly: number)
        case let number as UInt64: return try integer(exactly: number)
        case let number as Double: return .real(number)
        case let number as Float: return .real(Double(number))
        case let buffer as ByteBuffer: return .blob(Array(buffer.readableBytesView))
        case let bytes as [UInt8]: return .blob(bytes)
        default: throw ServerSQLiteError.unsupportedBind("\(type(of: bind))")
        }
    }

    private static func integer<I: BinaryInteger>(exactly number: I) throws -> SQLiteValue {
        guard let exact = Int64(exactly: number) else { throw ServerSQLiteError.unsupportedBind("\(I.self) over Int64.max") }
        return .integer(exact)
    }
}

/// An optional bind, told apart from its value: nil is bound as NULL.
protocol SQLiteBindableOptional {
    var wrappedBind: Any? { get }
}

extension Optional: SQLiteBindableOptional {
    var wrappedBind: Any? { map { $0 as Any } }
}

/// Reads one column's value as a `Decodable`: the single values the store's columns hold
/// (`String`, the integers, `Double`, `Bool`, optionals of them, and bytes from a BLOB as
/// `ByteBuffer` or `[UInt8]`). A value of another kind is an error, never a guess.
struct SQLiteColumnDecoder: Decoder, SingleValueDecodingContainer {
    let value: SQLiteValue
    let column: String

    static func decode<T: Decodable>(_ type: T.Type, from value: SQLiteValue, column: String) throws -> T {
        // Bytes come from a BLOB, not from the base64 text ByteBuffer's own Codable form reads.
        if T.self == ByteBuffer.self || T.self == [UInt8].self {
            guard case .blob(let bytes) = value else { throw mismatch(value, column: column, wanted: T.self) }
            if let buffer = ByteBuffer(bytes: bytes) as? T { return buffer }
            if let array = bytes as? T { return array }
            throw mismatch(value, column: column, wanted: T.self)
        }
        return try T(from: SQLiteColumnDecoder(value: value, column: column))
    }

    static func mismatch(_ value: SQLiteValue, column: String, wanted: Any.Type) -> ServerSQLiteError {
        .typeMismatch(column: column, holds: value.kindName, wanted: "\(wanted)")
    }

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        throw Self.mismatch(value, column: column, wanted: type)
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw Self.mismatch(value, column: column, wanted: [Any].self)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func decodeNil() -> Bool { value == .null }

    func decode(_ type: Bool.Type) throws -> Bool {
        guard case .integer(let number) = value, number == 0 || number == 1 else { throw Self.mismatch(value, column: column, wanted: type) }
        return number == 1
    }

    func decode(_ type: String.Type) throws -> String {
        guard case .text(let text) = value else { throw Self.mismatch(value, column: column, wanted: type) }
        return text
    }

    func decode(_ type: Double.Type) throws -> Double {
        switch value {
        case .real(let number): return number
        case .integer(let number): return Double(number)
        default: throw Self.mismatch(value, column: column, wanted: type)
        }
    }

    func decode(_ type: Float.Type) throws -> Float { Float(try decode(Double.self)) }
    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try Self.decode(type, from: value, column: column)
    }

    private func integer<I: FixedWidthInteger>(_ type: I.Type) throws -> I {
        guard case .integer(let number) = value, let exact = I(exactly: number) else { throw Self.mismatch(value, column: column, wanted: type) }
        return exact
    }
}

extension SQLiteValue {
    /// What kind of value it is, for messages (never the value: it may be a secret).
    var kindName: String {
        switch self {
        case .integer: return "an integer"
        case .real: return "a real number"
        case .text: return "text"
        case .blob: return "a blob"
        case .null: return "NULL"
        }
    }
}
