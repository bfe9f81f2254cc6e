import Logging
import NIOCore
import SQLKit
import SignetServer
import SignetTestSupport
import Testing

/// The server's SQLite driver (sql-kit over the system's libsqlite3, through SignetVault's
/// `SQLiteConnection`), through `ServerDatabase` as the store uses it: every type the store
/// binds and decodes, `RETURNING` and upserts, a writer waiting for another connection's
/// transaction, the connection's hardening, and failures that are thrown errors, never crashes.
/// Timeouts here are hang guards, never expectations.
@Suite(.timeLimit(.minutes(5))) struct ServerSQLiteDriverTests {
    static let logger: Logger = {
        var logger = Logger(label: "signet.sqlite-driver-test")
        logger.logLevel = .critical
        return logger
    }()

    /// Runs `body` with a database on a new file (`driver.sqlite` in the folder), shut down after.
    static func withDatabase(_ body: (ServerDatabase, TemporaryFolder) async throws -> Void) async throws {
        let folder = try TemporaryFolder(prefix: "signet-sqlite-driver")
        let database = try ServerDatabase(location: .sqlite(path: folder.file("driver.sqlite")), logger: logger)
        do {
            try await body(database, folder)
        } catch {
            await database.shutdown()
            throw error
        }
        await database.shutdown()
    }

    /// A value sql-kit can bind that SQLite has no type for.
    struct Point: Encodable, Sendable {
        let x: Int
    }

    @Test func everyTypeTheStoreBindsAndDecodesRoundTrips() async throws {
        // A resource chunk is exactly 1 MiB.
        let chunk = ByteBuffer(bytes: TestBytes.random(count: 1 << 20, seed: 35))
        try await Self.withDatabase { database, _ in
            try await database.withConnection { sql in
                try await sql.raw("""
                    CREATE TABLE samples (id BIGINT PRIMARY KEY, name TEXT NOT NULL, note TEXT, count BIGINT NOT NULL,
                                          ceiling BIGINT, data BLOB NOT NULL, extra BLOB)
                    """).run()
                let note: String? = "quotes ' \" ; -- and é, 🙂"
                let noNote: String? = nil
                let ceiling: Int64? = Int64.max
                let noCeiling: Int? = nil
                let noExtra: ByteBuffer? = nil
                try await sql.raw("""
                    INSERT INTO samples (id, name, note, count, ceiling, data, extra)
                    VALUES (\(bind: 1), \(bind: "first"), \(bind: note), \(bind: Int64.min), \(bind: ceiling), \(bind: chunk),
                            \(bind: ByteBuffer(bytes: [0, 1, 2])))
                    """).run()
                try await sql.raw("""
                    INSERT INTO samples (id, name, note, count, ceiling, data, extra)
                    VALUES (\(bind: Int64(2)), \(bind: ""), \(bind: noNote), \(bind: 0), \(bind: noCeiling), \(bind: ByteBuffer()),
                            \(bind: noExtra))
                    """).run()
            }
            let rows = try await database.withConnection { sql in
                try await sql.raw("SELECT * FROM samples ORDER BY id").all()
            }
            try #require(rows.count == 2)
            let first = rows[0]
            #expect(first.allColumns == ["id", "name", "note", "count", "ceiling", "data", "extra"])
            #expect(first.contains(column: "note") && !first.contains(column: "nothing"))
            #expect(try first.decode(column: "id", as: Int.self) == 1)
            #expect(try first.decode(column: "name", as: String.self) == "first")
            #expect(try first.decode(column: "note", as: String?.self) == "quotes ' \" ; -- and é, 🙂")
            #expect(try first.decodeNil(column: "note") == false)
            #expect(try first.decode(column: "count", as: Int64.self) == Int64.min)
            #expect(try first.decode(column: "count", as: Int.self) == Int.min)
            #expect(try first.decode(column: "ceiling", as: Int?.self) == Int.max)
            #expect(try first.decode(column: "data", as: ByteBuffer.self) == chunk)
            #expect(try first.decode(column: "extra", as: ByteBuffer?.self) == ByteBuffer(bytes: [0, 1, 2]))
            let second = rows[1]
            #expect(try second.decode(column: "id", as: Int.self) == 2)
            #expect(try second.decode(column: "name", as: String.self) == "")
            #expect(try second.decode(column: "note", as: String?.self) == nil)
            #expect(try second.decodeNil(column: "note"))
            #expect(try second.decode(column: "ceiling", as: Int?.self) == nil)
            #expect(try second.decode(column: "data", as: ByteBuffer.self).readableBytes == 0)
            #expect(try second.decode(column: "extra", as: ByteBuffer?.self) == nil)

            // A slice of the chunk, as a ranged download reads it.
            let slice = try await database.withConnection { sql in
                try await sql.raw("""
                    SELECT substr(data, CAST(\(bind: 1001) AS INTEGER), CAST(\(bind: 5000) AS INTEGER)) AS data FROM samples
                    WHERE id = \(bind: Int64(1))
                    """).first().map { try $0.decode(column: "data", as: ByteBuffer.self) }
            }
            #expect(slice == chunk.getSlice(at: 1000, length: 5000))
        }
    }

    @Test func returningAndUpserts() async throws {
        try await Self.withDatabase { database, _ in
            let counts = try await database.withConnection { sql -> [Int] in
                try await sql.raw("CREATE TABLE counters (name TEXT PRIMARY KEY, hits BIGINT NOT NULL)").run()
                var hits: [Int] = []
                for _ in 0..<3 {
                    let row = try await sql.raw("""
                        INSERT INTO counters (name, hits) VALUES (\(bind: "a"), 1)
                        ON CONFLICT (name) DO UPDATE SET hits = counters.hits + 1
                        RETURNING hits
                        """).first()
                    let found = try #require(row)
                    hits.append(try found.decode(column: "hits", as: Int.self))
                }
                return hits
            }
            #expect(counts == [1, 2, 3])
            // DO NOTHING returns no row; DELETE … RETURNING returns every row it removed.
            let (ignored, deleted) = try await database.withConnection { sql -> (Bool, [String]) in
                try await sql.raw("INSERT INTO counters (name, hits) VALUES ('b', 1)").run()
                let none = try await sql.raw("""
                    INSERT INTO counters (name, hits) VALUES (\(bind: "a"), 9) ON CONFLICT DO NOTHING RETURNING name
                    """).first() == nil
                let removed = try await sql.raw("DELETE FROM counters RETURNING name").all()
                    .map { try $0.decode(column: "name", as: String.self) }
                return (none, removed.sorted())
            }
            #expect(ignored)
            #expect(deleted == ["a", "b"])
        }
    }

    @Test func aWriterWaitsForAnotherConnectionsTransaction() async throws {
        try await Self.withDatabase { first, folder in
            // A second pool on the same file: its connection is another SQLite connection.
            let second = try ServerDatabase(location: .sqlite(path: folder.file("driver.sqlite")), logger: Self.logger)
            do {
                try await first.withConnection { sql in try await sql.raw("CREATE TABLE events (name TEXT NOT NULL)").run() }
                let (locked, lockedContinuation) = AsyncStream<Void>.makeStream()
                async let holder: Void = Self.holdWriteLock(first, signal: lockedContinuation)
                // Until the lock is held (or the holder failed: then the stream ends, and awaiting
                // the holder below throws its error).
                for await _ in locked { break }
                // Without the busy timeout this would fail at once as busy.
                try await second.withConnection { sql in try await sql.raw("INSERT INTO events (name) VALUES ('second')").run() }
                try await holder
                let names = try await second.withConnection { sql in
                    try await sql.raw("SELECT name FROM events ORDER BY rowid").all().map { try $0.decode(column: "name", as: String.self) }
                }
                #expect(names == ["first", "second"])
            } catch {
                await second.shutdown()
                throw error
            }
            await second.shutdown()
        }
    }

    /// Writes a row in a transaction, signals once it holds the write lock, and keeps the lock a
    /// moment, so that another writer has to wait for it; ends `signal` whatever happens.
    static func holdWriteLock(_ database: ServerDatabase, signal: AsyncStream<Void>.Continuation) async throws {
        defer { signal.finish() }
        try await database.transaction { sql in
            try await sql.raw("INSERT INTO events (name) VALUES ('first')").run()
            signal.yield()
            try await Task.sleep(for: .milliseconds(200))
        }
    }

    @Test func defensiveModeKeepsTheSchemaFromSQL() async throws {
        try await Self.withDatabase { database, _ in
            try await database.withConnection { sql in try await sql.raw("CREATE TABLE kept (name TEXT)").run() }
            await #expect(throws: ServerError.self) {
                try await database.withConnection { sql in
                    try await sql.raw("PRAGMA writable_schema = ON").run()
                    try await sql.raw("UPDATE sqlite_schema SET sql = 'CREATE TABLE kept (other TEXT)' WHERE name = 'kept'").run()
                }
            }
            let schema = try await database.withConnection { sql in
                try await sql.raw("SELECT sql FROM sqlite_schema WHERE name = 'kept'").first()?.decode(column: "sql", as: String.self)
            }
            #expect(schema == "CREATE TABLE kept (name TEXT)")
        }
    }

    @Test func doubleQuotedTextIsAnIdentifierOnly() async throws {
        try await Self.withDatabase { database, _ in
            let error = try await thrownAsync(ServerError.self) {
                _ = try await database.withConnection { sql in
                    try await sql.raw(#"SELECT "not a column" AS value"#).first()?.decode(column: "value", as: String.self)
                }
            }
            guard case .unavailable(let detail) = error else {
                Issue.record("got \(error)")
                return
            }
            #expect(detail.contains("no such column"), "\(detail)")
        }
    }

    @Test func aMissingColumnOrAnotherTypeIsAnErrorNotACrash() async throws {
        try await Self.withDatabase { database, _ in
            let row = try await database.withConnection { sql in
                try await sql.raw("SELECT 'x' AS text, NULL AS empty, 1 AS number, x'00ff' AS bytes").first()
            }
            let found = try #require(row)
            #expect(throws: (any Error).self) { _ = try found.decode(column: "missing", as: Int.self) }
            #expect(throws: (any Error).self) { _ = try found.decode(column: "text", as: Int.self) }
            #expect(throws: (any Error).self) { _ = try found.decode(column: "empty", as: String.self) }
            #expect(throws: (any Error).self) { _ = try found.decode(column: "number", as: String.self) }
            #expect(throws: (any Error).self) { _ = try found.decode(column: "text", as: ByteBuffer.self) }
            #expect(throws: (any Error).self) { _ = try found.decode(column: "bytes", as: String.self) }
            #expect(try found.decode(column: "empty", as: Int?.self) == nil)
            #expect(try found.decode(column: "bytes", as: ByteBuffer.self) == ByteBuffer(bytes: [0x00, 0xFF]))
            #expect(try found.decodeNil(column: "missing"))
            // Inside the store's call it is the database's failure.
            await #expect(throws: ServerError.self) {
                _ = try await database.withConnection { sql in
                    try await sql.raw("SELECT 1 AS one").first()?.decode(column: "two", as: Int.self)
                }
            }
        }
    }

    @Test func aFailingStatementIsAThrownError() async throws {
        try await Self.withDatabase { database, _ in
            let error = try await thrownAsync(ServerError.self) {
                try await database.withConnection { sql in try await sql.raw("SELECT * FROM no_such_table").run() }
            }
            guard case .unavailable(let detail) = error else {
                Issue.record("got \(error)")
                return
            }
            #expect(detail.contains("no such table"), "\(detail)")
            try await database.withConnection { sql in
                try await sql.raw("CREATE TABLE once (name TEXT PRIMARY KEY)").run()
                try await sql.raw("INSERT INTO once (name) VALUES ('a')").run()
            }
            // A constraint, a syntax error and a value SQLite has no type for.
            await #expect(throws: ServerError.self) {
                try await database.withConnection { sql in try await sql.raw("INSERT INTO once (name) VALUES ('a')").run() }
            }
            await #expect(throws: ServerError.self) {
                try await database.withConnection { sql in try await sql.raw("NOT SQL AT ALL").run() }
            }
            await #expect(throws: ServerError.self) {
                try await database.withConnection { sql in try await sql.raw("SELECT \(bind: Point(x: 1)) AS point").run() }
            }
            // A transaction whose body fails leaves nothing behind, and its connection works on.
            await #expect(throws: ServerError.self) {
                try await database.transaction { sql in
                    try await sql.raw("INSERT INTO once (name) VALUES ('b')").run()
                    try await sql.raw("NOT SQL AT ALL").run()
                }
            }
            let names = try await database.withConnection { sql in
                try await sql.raw("SELECT name FROM once ORDER BY name").all().map { try $0.decode(column: "name", as: String.self) }
            }
            #expect(names == ["a"])
        }
    }

    @Test func anSQLiteWithoutReturningIsRefused() throws {
        let error = try thrown(ServerError.self) { try ServerSQLite.checkLibraryVersion(number: 3_034_001, text: "3.34.1") }
        #expect(error == .configuration(detail: "SQLite 3.35 or later is needed (RETURNING); this system has 3.34.1"))
        try ServerSQLite.checkLibraryVersion(number: 3_035_000, text: "3.35.0")
        // The library this binary links.
        try ServerSQLite.checkLibraryVersion()
    }
}
