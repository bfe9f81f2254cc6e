import Foundation
import HTTPTypes
import SignetCore
import SignetHTTP
import SignetServer
import SignetTLS
import SignetTestSupport
import Testing

/// Two `signet serve` nodes on one real PostgreSQL behave as one server: a replay, a revocation
/// and a sign-out on one are seen by the other. Both nodes are told the public URL clients use
/// (as behind a load balancer), so a request signed once is valid on either.
@Suite(.serialized) struct ServerNodesTests {
    static let publicAuthority = "api.signet.test"

    /// `prepared`, signed for the public URL, sent to `node`.
    static func send(_ prepared: (HTTPRequest, [UInt8]?), to node: ServeProcess) async throws -> HTTPSResponse {
        var request = prepared.0
        request.authority = "127.0.0.1:\(node.port)"
        return try await node.api.send((request, prepared.1))
    }

    /// A request signed for the public URL.
    static func signed(
        _ method: HTTPRequest.Method, _ path: String, json: (some Encodable)? = Optional<String>.none, signer: HTTPMessageSigner, bearer: String? = nil
    ) async throws -> (HTTPRequest, [UInt8]?) {
        var request = HTTPRequest(method: method, scheme: "https", authority: publicAuthority, path: path)
        let body = try json.map { Array(try JSONEncoder().encode($0)) }
        if body != nil { request.headerFields[.contentType] = "application/json" }
        if let bearer { request.headerFields[.authorization] = "Bearer \(bearer)" }
        try await signer.sign(&request, body: body)
        return (request, body)
    }

    /// A fresh database on the shared PostgreSQL, an admin, and two nodes on it sharing a data
    /// folder (one TLS identity and response key) and the public URL.
    static func twoNodes() async throws -> (PostgreSQLServer, String, ServerKeys, ServeProcess, ServeProcess) {
        let postgres = try await PostgreSQLServer.shared()
        let database = try postgres.makeDatabase()
        let folder = try TemporaryFolder(prefix: "signet-nodes")
        let keys = try ServerKeys.initialise(in: folder, database: database)
        let extra = ["--public-url", "https://\(publicAuthority)"]
        let nodeA = try await ServeProcess.start(in: folder, database: database, extra: extra, name: "a")
        let nodeB = try await ServeProcess.start(in: folder, database: database, extra: extra, name: "b")
        return (postgres, database, keys, nodeA, nodeB)
    }

    @Test func twoNodesOnPostgreSQLActAsOne() async throws {
        let (postgres, database, keys, nodeA, nodeB) = try await Self.twoNodes()
        defer {
            nodeA.process.stop()
            nodeB.process.stop()
        }
        #expect(nodeA.pins == nodeB.pins)

        let enrol = try await Self.signed(
            .post, "/v1/admin/apps", json: AdminAPI.Enrolment(name: "app", publicKey: Base64.encode(keys.app.publicKey.spkiDER)),
            signer: keys.adminSigner)
        #expect(try await Self.send(enrol, to: nodeA).status == 201)

        // A request accepted by A and replayed to B is refused.
        let register = try await Self.signed(
            .post, "/v1/users", json: UserAPI.Registration(email: "ann@example.com", password: "correct horse battery", displayName: "Ann"),
            signer: keys.appSigner)
        #expect(try await Self.send(register, to: nodeA).status == 201)
        let replayed = try await Self.send(register, to: nodeB)
        #expect(replayed.status == 401)
        #expect(replayed.text.contains("replay"))

        // A session started on A is valid on B; a sign-out on A ends it on B.
        let signIn = try await Self.send(try await Self.signed(
            .post, "/v1/sessions", json: UserAPI.SignIn(email: "ann@example.com", password: "correct horse battery"), signer: keys.appSigner),
            to: nodeA)
        let token = try signIn.decode(UserAPI.Session.self).token
        #expect(try await Self.send(try await Self.signed(.get, "/v1/me", signer: keys.appSigner, bearer: token), to: nodeB).status == 200)
        #expect(try await Self.send(try await Self.signed(.delete, "/v1/sessions/current", signer: keys.appSigner, bearer: token), to: nodeA).status == 204)
        #expect(try await Self.send(try await Self.signed(.get, "/v1/me", signer: keys.appSigner, bearer: token), to: nodeB).status == 401)

        // B has the app cached; an app revoked on A is refused by B within a second.
        #expect(try await Self.send(try await Self.signed(.get, "/v1/me", signer: keys.appSigner), to: nodeB).status == 401)
        #expect(try await Self.send(try await Self.signed(.delete, "/v1/admin/apps/app", signer: keys.adminSigner), to: nodeA).status == 204)
        try await Task.sleep(for: .milliseconds(1100))
        let revoked = try await Self.send(try await Self.signed(
            .post, "/v1/users", json: UserAPI.Registration(email: "eve@example.com", password: "0123456789ab", displayName: "Eve"),
            signer: keys.appSigner), to: nodeB)
        #expect(revoked.status == 403)

        // Both nodes read the same rows, and the token is stored only as its hash.
        let users = try postgres.query("SELECT email FROM users ORDER BY email", database: database)
        #expect(users == ["ann@example.com"])
        let sessions = try postgres.query("SELECT token_hash FROM sessions", database: database)
        #expect(!sessions.contains(token))
    }

    @Test func failedSignInsCountAcrossNodes() async throws {
        let (_, _, keys, nodeA, nodeB) = try await Self.twoNodes()
        defer {
            nodeA.process.stop()
            nodeB.process.stop()
        }
        let enrol = try await Self.signed(
            .post, "/v1/admin/apps", json: AdminAPI.Enrolment(name: "app", publicKey: Base64.encode(keys.app.publicKey.spkiDER)),
            signer: keys.adminSigner)
        #expect(try await Self.send(enrol, to: nodeA).status == 201)
        // Five failures, alternating nodes; the sixth attempt is refused on either.
        for attempt in 0..<5 {
            let wrong = try await Self.signed(.post, "/v1/sessions", json: UserAPI.SignIn(email: "x@example.com", password: "wrong-\(attempt)"), signer: keys.appSigner)
            #expect(try await Self.send(wrong, to: attempt.isMultiple(of: 2) ? nodeA : nodeB).status == 401)
        }
        let limited = try await Self.send(try await Self.signed(
            .post, "/v1/sessions", json: UserAPI.SignIn(email: "x@example.com", password: "again"), signer: keys.appSigner), to: nodeB)
        #expect(limited.status == 429)
        #expect(limited.head.headerFields[.retryAfter] != nil)
    }
}
