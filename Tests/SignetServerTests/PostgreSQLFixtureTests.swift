import SignetTestSupport
import Testing

/// The PostgreSQL the node tests run on starts, creates databases and answers queries.
@Suite struct PostgreSQLFixtureTests {
    @Test func startsCreatesAndQueries() async throws {
        let server = try await PostgreSQLServer.shared()
        let database = try server.makeDatabase()
        #expect(try server.query("SELECT 40 + 2", database: database) == ["42"])
    }
}
