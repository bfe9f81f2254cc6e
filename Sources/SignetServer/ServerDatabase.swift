import AsyncKit
import Logging
import NIOCore
import NIOPosix
import PostgresKit
import SQLKit
import Synchronization

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

    /// Whether the location carries a password (`postgres://user:PASSWORD@…`).
    public var containsPassword: Bool {
        guard case .postgres(let url) = self else { return false }
        return Self.redactingPassword(url) != url
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

/// The connection pool behind the server's stores: SQLite (the system's, the vault's too)
/// through our small driver (`ServerSQLiteDatabase`) or PostgreSQL through postgres-kit, both
/// seen as sql-kit's `SQLDatabase`, so every query is written once with bound parameters.
///
/// SQLite is put in WAL mode with full synchronous commits: readers never wait for the writer,
/// and a commit that was acknowledged survives `kill -9` and power loss. It must be 3.35 or
/// later (`RETURNING`); an older library is refused when the database is opened.
public final class ServerDatabase: Sendable {
    /// async-kit's group pool is safe to share (its state is behind its lock and each loop's
    /// pool is confined to its loop) but is not marked Sendable.
    enum Pool: @unchecked Sendable {
        case sqlite(EventLoopGroupConnectionPool<ServerSQLiteSource>)
        case postgres(EventLoopGroupConnectionPool<TunedPostgresSource>)
    }

    /// How hard a commit waits for the disk.
    package enum Durability: Sendable {
        /// The commit is on stable storage when it returns (users, sessions, apps).
        case full
        /// The commit survives the process being killed but may be lost, whole, with the
        /// machine's power (SQLite: `synchronous = NORMAL` in WAL mode; PostgreSQL:
        /// `synchronous_commit = off`): for the per-request replay cache and rate-limit
        /// counters, where a fsync per request would be the server's whole cost.
        case relaxed
    }

    /// Where the data is.
    public let location: DatabaseLocation
    let pool: Pool
    let relaxedPool: Pool
    let logger: Logger
    /// Told how long each request for a connection waited for the pool (the server's metrics).
    private let connectionWaitObserver = Mutex<(@Sendable (Duration) -> Void)?>(nil)

    /// Calls `observer` with how long each request for a pooled connection waited.
    func observeConnectionWait(_ observer: @escaping @Sendable (Duration) -> Void) {
        connectionWaitObserver.withLock { $0 = observer }
    }

    /// Opens a pool to `location`; nothing is connected until the first query.
    public init(location: DatabaseLocation, logger: Logger, eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) throws {
        self.location = location
        self.logger = logger
        switch location {
        case .sqlite(let path):
            try ServerSQLite.checkLibraryVersion()
            // Made 0600 before SQLite opens it: SQLite gives its -wal and -shm files the
            // database's mode, so none of them is readable by others whatever the umask.
            try FileAccess.createPrivateFile(path)
            try ServerSQLite.preflight(path)
            for companion in [path + "-wal", path + "-shm"] { try FileAccess.restrict(companion) }
            let perLoop = SQLiteThreads.connectionsPerEventLoop(eventLoopGroup)
            func makePool(_ synchronous: String) -> Pool {
                let source = ServerSQLiteSource(path: path, synchronous: synchronous, threadPool: SQLiteThreads.pool)
                return .sqlite(EventLoopGroupConnectionPool(source: source, maxConnectionsPerEventLoop: perLoop, logger: logger, on: eventLoopGroup))
            }
            pool = makePool("FULL")
            relaxedPool = makePool("NORMAL")
        case .postgres(let url):
            let configuration: SQLPostgresConfiguration
            do {
                configuration = try SQLPostgresConfiguration(url: url)
            } catch {
                throw ServerError.configuration(detail: "\(location): not a PostgreSQL URL (postgres://user:password@host:port/database)")
            }
            func makePool(relaxed: Bool) -> Pool {
                let source = TunedPostgresSource(base: PostgresConnectionSource(sqlConfiguration: configuration), relaxed: relaxed)
                return .postgres(EventLoopGroupConnectionPool(source: source, maxConnectionsPerEventLoop: 8, logger: logger, on: eventLoopGroup))
            }
            pool = makePool(relaxed: false)
            relaxedPool = makePool(relaxed: true)
        }
    }

    /// Whether the database is SQLite (where a write transaction is `BEGIN IMMEDIATE`).
    package var isSQLite: Bool {
        if case .sqlite = location { return true }
        return false
    }

    /// Runs `body` on one pooled connection. A database failure becomes
    /// ``ServerError/unavailable(detail:)``; a ``ServerError`` thrown by `body` passes as is.
    package func withConnection<T: Sendable>(
        durability: Durability = .full, _ body: @Sendable (any SQLDatabase) async throws -> T
    ) async throws -> T {
        let observer = connectionWaitObserver.withLock { $0 }
        let start = ContinuousClock.now
        // A wait that ends in a failure (the pool timed out) is observed too.
        var waited = false
        defer { if !waited { observer?(ContinuousClock.now - start) } }
        do {
            switch durability == .full ? pool : relaxedPool {
            case .sqlite(let pool):
                let connection = try await pool.requestConnection(logger: logger).get()
                observer?(ContinuousClock.now - start)
                waited = true
                defer { pool.releaseConnection(connection, logger: logger) }
                return try await body(connection.sql(queryLogLevel: nil))
            case .postgres(let pool):
                let connection = try await pool.requestConnection(logger: logger).get()
                observer?(ContinuousClock.now - start)
                waited = true
                defer { pool.releaseConnection(connection, logger: logger) }
                return try await body(connection.sql(queryLogLevel: nil))
            }
        } catch let error as ServerError {
            throw error
        } catch {
            logger.error("database failure", metadata: ["database": "\(location)", "error": "\(String(reflecting: error))"])
            throw ServerError.unavailable(detail: "database: \(error)")
        }
    }

    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
    /// On SQLite the transaction takes the write lock at once (`BEGIN IMMEDIATE`), so two
    /// writers queue instead of failing on a lock upgrade.
    package func transaction<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
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
        for pool in [pool, relaxedPool] {
            switch pool {
            case .sqlite(let pool): try? await pool.shutdownAsync()
            case .postgres(let pool): try? await pool.shutdownAsync()
            }
        }
    }
}

/// The threads SQLite's calls run on: a pool of their own, with a thread for every connection
/// the server may open, so that a statement waiting for the write lock never holds the thread
/// the transaction that owns the lock needs for its next statement. On Swift's shared pool (2
/// threads on 2 cores, also running scrypt), three sign-ins at once once deadlocked the
/// database for good.
enum SQLiteThreads {
    /// Connections per pool, over all event loops.
    static let connectionsPerPool = 8

    /// The connections per event loop of each of the two pools (FULL and NORMAL).
    static func connectionsPerEventLoop(_ group: any EventLoopGroup) -> Int {
        let loops = max(1, group.makeIterator().reduce(0) { count, _ in count + 1 })
        return max(1, connectionsPerPool / loops)
    }

    /// Started once, for the life of the process (every database in it shares it).
    static let pool: NIOThreadPool = {
        let loops = max(1, System.coreCount)
        let pool = NIOThreadPool(numberOfThreads: 2 * max(connectionsPerPool, loops) + 2)
        pool.start()
        return pool
    }()
}

/// postgres-kit's connection source; a relaxed connection commits without waiting for its WAL
/// to reach the disk (`synchronous_commit = off`: a crash of the database server can lose the
/// last commits, whole, never corrupt them).
/// `@unchecked`: postgres-kit's source holds only its immutable configuration.
struct TunedPostgresSource: ConnectionPoolSource, @unchecked Sendable {
    let base: PostgresConnectionSource
    let relaxed: Bool

    func makeConnection(logger: Logger, on eventLoop: any EventLoop) -> EventLoopFuture<PostgresConnection> {
        guard relaxed else { return base.makeConnection(logger: logger, on: eventLoop) }
        return base.makeConnection(logger: logger, on: eventLoop).flatMap { connection in
            connection.sql(queryLogLevel: nil).raw("SET synchronous_commit = off").run().map { _ in connection }
        }
    }
}
