import AsyncKit
import Logging
import NIOCore
import NIOPosix
import PostgresKit
import SQLKit
import SQLiteKit

/// Where the server keeps what it shares: one SQLite file (one node) or a PostgreSQL database
/// (any number of nodes).
public enum DatabaseLocation: Sendable, Equatable, CustomStringConvertible {
    /// An SQLite database file, created when missing.
    case sqlite(path: String)
    /// A PostgreSQL database, `postgres://user:password@host:port/database`.
    case postgres(url: String)

    /// Reads `postgres://…`/`postgresql://…` as PostgreSQL and anything else as an SQLite path.
    public init(parsing text: String) {
        let lower = text.lowercased()
        if lower.hasPrefix("postgres://") || lower.hasPrefix("postgresql://") {
            self = .postgres(url: text)
        } else {
            self = .sqlite(path: text)
        }
    }

    /// The location with any password removed, for logs and messages.
    public var description: String {
        switch self {
        case .sqlite(let path): return path
        case .postgres(let url): return Self.redactingPassword(url)
        }
    }

    static func redactingPassword(_ url: String) -> String {
        guard let scheme = url.range(of: "://"), let at = url.range(of: "@", range: scheme.upperBound..<url.endIndex) else { return url }
        let userInfo = url[scheme.upperBound..<at.lowerBound]
        guard let colon = userInfo.firstIndex(of: ":") else { return url }
        return String(url[..<colon]) + ":***" + String(url[at.lowerBound...])
    }
}

/// The connection pool behind the server's stores: SQLite through sqlite-kit or PostgreSQL
/// through postgres-kit, both seen as sql-kit's `SQLDatabase`, so every query is written once
/// with bound parameters.
///
/// SQLite is put in WAL mode with full synchronous commits: readers never wait for the writer,
/// and a commit that was acknowledged survives `kill -9` and power loss.
public final class ServerDatabase: Sendable {
    /// async-kit's group pool is safe to share (its state is behind its lock and each loop's
    /// pool is confined to its loop) but is not marked Sendable.
    enum Pool: @unchecked Sendable {
        case sqlite(EventLoopGroupConnectionPool<TunedSQLiteSource>)
        case postgres(EventLoopGroupConnectionPool<PostgresConnectionSource>)
    }

    /// Where the data is.
    public let location: DatabaseLocation
    let pool: Pool
    let logger: Logger

    /// Opens a pool to `location`; nothing is connected until the first query.
    public init(location: DatabaseLocation, logger: Logger, eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) throws(ServerError) {
        self.location = location
        self.logger = logger
        switch location {
        case .sqlite(let path):
            let source = TunedSQLiteSource(base: SQLiteConnectionSource(configuration: .init(storage: .file(path: path))))
            pool = .sqlite(EventLoopGroupConnectionPool(source: source, maxConnectionsPerEventLoop: 4, logger: logger, on: eventLoopGroup))
        case .postgres(let url):
            let configuration: SQLPostgresConfiguration
            do {
                configuration = try SQLPostgresConfiguration(url: url)
            } catch {
                throw .configuration(detail: "\(location): not a PostgreSQL URL (postgres://user:password@host:port/database)")
            }
            pool = .postgres(EventLoopGroupConnectionPool(
                source: PostgresConnectionSource(sqlConfiguration: configuration), maxConnectionsPerEventLoop: 8,
                logger: logger, on: eventLoopGroup))
        }
    }

    /// Whether the database is SQLite (where a write transaction is `BEGIN IMMEDIATE`).
    public var isSQLite: Bool {
        if case .sqlite = location { return true }
        return false
    }

    /// Runs `body` on one pooled connection. A database failure becomes
    /// ``ServerError/unavailable(detail:)``; a ``ServerError`` thrown by `body` passes as is.
    public func withConnection<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws(ServerError) -> T {
        do {
            switch pool {
            case .sqlite(let pool):
                let connection = try await pool.requestConnection(logger: logger).get()
                defer { pool.releaseConnection(connection, logger: logger) }
                return try await body(connection.sql(queryLogLevel: nil))
            case .postgres(let pool):
                let connection = try await pool.requestConnection(logger: logger).get()
                defer { pool.releaseConnection(connection, logger: logger) }
                return try await body(connection.sql(queryLogLevel: nil))
            }
        } catch let error as ServerError {
            throw error
        } catch {
            logger.error("database failure", metadata: ["database": "\(location)", "error": "\(String(reflecting: error))"])
            throw .unavailable(detail: "database: \(error)")
        }
    }

    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
    /// On SQLite the transaction takes the write lock at once (`BEGIN IMMEDIATE`), so two
    /// writers queue instead of failing on a lock upgrade.
    public func transaction<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws(ServerError) -> T {
        let begin = isSQLite ? "BEGIN IMMEDIATE" : "BEGIN"
        return try await withConnection { database in
            try await database.raw(SQLQueryString(begin)).run()
            do {
                let result = try await body(database)
                try await database.raw("COMMIT").run()
                return result
            } catch {
                try? await database.raw("ROLLBACK").run()
                throw error
            }
        }
    }

    /// Closes every connection.
    public func shutdown() async {
        switch pool {
        case .sqlite(let pool): try? await pool.shutdownAsync()
        case .postgres(let pool): try? await pool.shutdownAsync()
        }
    }
}

/// sqlite-kit's connection source, with each new connection switched to WAL and full
/// synchronous commits and given a busy timeout.
struct TunedSQLiteSource: ConnectionPoolSource, Sendable {
    let base: SQLiteConnectionSource

    func makeConnection(logger: Logger, on eventLoop: any EventLoop) -> EventLoopFuture<SQLiteConnection> {
        base.makeConnection(logger: logger, on: eventLoop).flatMap { connection in
            connection.query("PRAGMA journal_mode = WAL")
                .flatMap { _ in connection.query("PRAGMA synchronous = FULL") }
                .map { _ in connection }
        }
    }
}
