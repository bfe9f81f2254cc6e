import Foundation
import Logging
import SQLKit
@testable import SignetServer
import SignetTestSupport
import Testing

/// Schema 4 on a database of schema 3 (the version before devices): it is added on start, on
/// SQLite and PostgreSQL, and what was stored keeps working — sessions with no device included.
@Suite(.serialized) struct DeviceSchemaTests {
    /// A database at schema 3 holding a user and a session, as a 0.6 server left it.
    static func schemaThree(_ database: ServerDatabase) async throws {
        try await database.transaction { sql in
            try await sql.raw("CREATE TABLE signet_schema (version BIGINT PRIMARY KEY, applied_at BIGINT NOT NULL)").run()
            for (index, statements) in ServerMigrations.all.prefix(3).enumerated() {
                for statement in statements {
                    let dialect = database.isSQLite ? statement : statement.replacingOccurrences(of: " BLOB ", with: " BYTEA ")
                    try await sql.raw(SQLQueryString(dialect)).run()
                }
                try await sql.raw("INSERT INTO signet_schema (version, applied_at) VALUES (\(bind: index + 1), 0)").run()
            }
            try await sql.raw("""
                INSERT INTO users (id, email, display_name, password_hash, created_at) VALUES ('u1', 'old@example.com', 'Old', '$scrypt$x', 0)
                """).run()
            try await sql.raw("""
                INSERT INTO sessions (token_hash, user_id, app, created_at, expires_at) VALUES ('t1', 'u1', 'app', 0, 4102444800)
                """).run()
        }
    }

    static func check(_ location: DatabaseLocation) async throws {
        var logger = Logger(label: "signet.schema-test")
        logger.logLevel = .critical
        let database = try ServerDatabase(location: location, logger: logger)
        do {
            try await schemaThree(database)
            let store = ServerStore(database: database)
            #expect(try await store.migrate() == [4])
            let (session, user) = try #require(try await store.sessions.find(tokenHash: "t1"))
            #expect(session.device == nil && session.app == "app" && user.email == "old@example.com")
            #expect(try await store.migrate() == [], "a second start applies nothing")
            let challenges = try await database.withConnection { sql in try await sql.raw("SELECT challenge FROM device_challenges").all().count }
            #expect(challenges == 0)
        } catch {
            await database.shutdown()
            throw error
        }
        await database.shutdown()
    }

    @Test func sqliteMovesFromThreeToFour() async throws {
        let folder = try TemporaryFolder(prefix: "signet-schema")
        try await Self.check(.sqlite(path: folder.file("old.sqlite")))
    }

    @Test func postgresqlMovesFromThreeToFour() async throws {
        let postgres = try await PostgreSQLServer.shared()
        try await Self.check(.postgres(url: try postgres.makeDatabase()))
    }
}
