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
    static func twoNodes(
        extra more: (TemporaryFolder) throws -> [String] = { _ in [] }
    ) async throws -> (PostgreSQLServer, String, ServerKeys, ServeProcess, ServeProcess) {
        let postgres = try await PostgreSQLServer.shared()
        let database = try postgres.makeDatabase()
        let folder = try TemporaryFolder(prefix: "signet-nodes")
        let keys = try ServerKeys.initialise(in: folder, database: database)
        let extra = ["--public-url", "https://\(publicAuthority)"] + (try more(folder))
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

        try await Self.enrolApp(keys, on: nodeA)

        // A request accepted by A and replayed to B is refused.
        let register = try await Self.signed(
            .post, "/v1/users", json: UserAPI.Registration(email: "ann@example.com", password: "correct horse battery", displayName: "Ann"),
            signer: keys.appSigner)
        #expect(try await Self.send(register, to: nodeA).status == 201)
        let replayed = try await Self.send(register, to: nodeB)
        #expect(replayed.status == 401)
        #expect(replayed.text.contains("replay"))

        // A session started on A is valid on B; a sign-out on A ends it on A at once and on B
        // within a second (B may answer from its session cache until then).
        let token = try await Self.signIn("ann@example.com", keys: keys, on: nodeA)
        #expect(try await Self.me(token, keys: keys, on: nodeB) == 200)
        #expect(try await Self.send(try await Self.signed(.delete, "/v1/sessions/current", signer: keys.appSigner, bearer: token), to: nodeA).status == 204)
        #expect(try await Self.me(token, keys: keys, on: nodeA) == 401)
        try await Task.sleep(for: .milliseconds(1100))
        #expect(try await Self.me(token, keys: keys, on: nodeB) == 401)

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

    /// Enrols the app through `node`, signed for the public URL.
    static func enrolApp(_ keys: ServerKeys, on node: ServeProcess) async throws {
        let enrol = try await signed(
            .post, "/v1/admin/apps", json: AdminAPI.Enrolment(name: "app", publicKey: Base64.encode(keys.app.publicKey.spkiDER)),
            signer: keys.adminSigner)
        #expect(try await send(enrol, to: node).status == 201)
    }

    /// Registers `email` (password "correct horse battery") through `node`.
    static func register(_ email: String, keys: ServerKeys, on node: ServeProcess) async throws {
        let register = try await signed(
            .post, "/v1/users", json: UserAPI.Registration(email: email, password: "correct horse battery", displayName: "User"),
            signer: keys.appSigner)
        #expect(try await send(register, to: node).status == 201)
    }

    /// Signs `email` in on `node` (password "correct horse battery"); the session token.
    static func signIn(_ email: String, keys: ServerKeys, on node: ServeProcess) async throws -> String {
        let answer = try await send(try await signed(
            .post, "/v1/sessions", json: UserAPI.SignIn(email: email, password: "correct horse battery"), signer: keys.appSigner), to: node)
        #expect(answer.status == 201, "\(answer.text)")
        return try answer.decode(UserAPI.Session.self).token
    }

    /// The status of `GET /v1/me` with `token` on `node`.
    static func me(_ token: String, keys: ServerKeys, on node: ServeProcess) async throws -> Int {
        try await send(try await signed(.get, "/v1/me", signer: keys.appSigner, bearer: token), to: node).status
    }

    /// Sessions are cached per node for at most the revocation latency (one second): "sign out
    /// everywhere" and an admin disabling the account end them at once on the node that did it
    /// and within a second on the other, which had just answered from its cache.
    @Test func sessionsEndOnEveryNodeWithinASecond() async throws {
        let (_, _, keys, nodeA, nodeB) = try await Self.twoNodes()
        defer {
            nodeA.process.stop()
            nodeB.process.stop()
        }
        try await Self.enrolApp(keys, on: nodeA)
        for email in ["ann@example.com", "bob@example.com"] { try await Self.register(email, keys: keys, on: nodeA) }

        // "Sign out everywhere" on B.
        let ann = [try await Self.signIn("ann@example.com", keys: keys, on: nodeA), try await Self.signIn("ann@example.com", keys: keys, on: nodeB)]
        for token in ann {
            #expect(try await Self.me(token, keys: keys, on: nodeA) == 200)
            #expect(try await Self.me(token, keys: keys, on: nodeB) == 200)
        }
        #expect(try await Self.send(try await Self.signed(.delete, "/v1/me/sessions", signer: keys.appSigner, bearer: ann[0]), to: nodeB).status == 200)
        for token in ann { #expect(try await Self.me(token, keys: keys, on: nodeB) == 401) }
        try await Task.sleep(for: .milliseconds(1100))
        for token in ann { #expect(try await Self.me(token, keys: keys, on: nodeA) == 401) }

        // An admin disables Bob on A.
        let bob = try await Self.signIn("bob@example.com", keys: keys, on: nodeB)
        #expect(try await Self.me(bob, keys: keys, on: nodeA) == 200)
        #expect(try await Self.me(bob, keys: keys, on: nodeB) == 200)
        let disable = try await Self.signed(.post, "/v1/admin/users/bob@example.com/disable", signer: keys.adminSigner)
        #expect(try await Self.send(disable, to: nodeA).status == 204)
        #expect(try await Self.me(bob, keys: keys, on: nodeA) == 401)
        try await Task.sleep(for: .milliseconds(1100))
        #expect(try await Self.me(bob, keys: keys, on: nodeB) == 401)
    }

    /// Nonces are written in batches on PostgreSQL: the same signed requests sent to both nodes
    /// at once are each accepted exactly once.
    @Test func concurrentReplaysAcrossNodesAreAcceptedOnce() async throws {
        let (_, _, keys, nodeA, nodeB) = try await Self.twoNodes()
        defer {
            nodeA.process.stop()
            nodeB.process.stop()
        }
        try await Self.enrolApp(keys, on: nodeA)
        try await Self.register("ann@example.com", keys: keys, on: nodeA)
        let token = try await Self.signIn("ann@example.com", keys: keys, on: nodeB)
        var requests: [(HTTPRequest, [UInt8]?)] = []
        for _ in 0..<40 { requests.append(try await Self.signed(.get, "/v1/me", signer: keys.appSigner, bearer: token)) }
        let statuses = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for (index, request) in requests.enumerated() {
                for node in [nodeA, nodeB, nodeA] {
                    group.addTask { (index, try await Self.send(request, to: node).status) }
                }
            }
            var statuses = [[Int]](repeating: [], count: requests.count)
            for try await (index, status) in group { statuses[index].append(status) }
            return statuses
        }
        for answers in statuses {
            #expect(answers.sorted() == [200, 401, 401], "\(answers)")
        }
    }

    @Test func failedSignInsCountAcrossNodes() async throws {
        let (_, _, keys, nodeA, nodeB) = try await Self.twoNodes()
        defer {
            nodeA.process.stop()
            nodeB.process.stop()
        }
        try await Self.enrolApp(keys, on: nodeA)
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
