import Foundation
import HTTPTypes
import SignetCore
import SignetHTTP
import SignetServer
import SignetTestSupport
import Testing

/// The documented load-balancer deployment, for real (issue 28, "Trusted proxies"; docs/server.md
/// "Behind a proxy"): nginx on 127.0.0.1 in front of two `signet serve --plain-http
/// --trusted-proxy 127.0.0.1` nodes on one PostgreSQL database and one data folder, round robin.
/// Clients connect to nginx from addresses of their own (127.0.0.2, 127.0.0.3: Linux routes all
/// of 127.0.0.0/8 to loopback), so nginx — the only trusted proxy — names each in
/// `X-Forwarded-For`, and the nodes keep each client's sign-in limits apart instead of counting
/// everyone as nginx. Every wait is a hang guard (``TestTimeouts``); filter with `Envelope`.
@Suite("Envelope: behind nginx", .serialized)
struct ProxyDeploymentTests {
    static let email = "ann@example.com"
    static let password = "correct horse battery"
    /// The client that guesses.
    static let clientA = "127.0.0.2"
    /// The owner of the account, elsewhere.
    static let clientB = "127.0.0.3"
    /// Where the operator's enrolment and the health checks come from.
    static let operatorAddress = "127.0.0.4"

    /// nginx and the two nodes behind it.
    struct Deployment {
        let postgres: PostgreSQLServer
        let database: String
        let keys: ServerKeys
        let nodes: [ServeProcess]
        let nginx: NginxProxy

        /// What clients connect to and sign: nginx's, which is the nodes' `--public-url`.
        var authority: String { "127.0.0.1:\(nginx.port)" }

        /// Stops nginx, then the nodes (again is harmless).
        func stop() {
            nginx.stop()
            for node in nodes { node.process.stop() }
        }

        /// `method path` with `json` as its body, signed by `signer` for `http://127.0.0.1:NGINXPORT`.
        func signed(_ method: HTTPRequest.Method, _ path: String, json: some Encodable, signer: HTTPMessageSigner) async throws
            -> (HTTPRequest, [UInt8])
        {
            var request = HTTPRequest(method: method, scheme: "http", authority: authority, path: path)
            let body = Array(try JSONEncoder().encode(json))
            request.headerFields[.contentType] = "application/json"
            try await signer.sign(&request, body: body)
            return (request, body)
        }

        /// Sends `prepared` to nginx from `source` on a connection of its own (closed after the
        /// answer), with the `extra` fields (unsigned) added to the head.
        func send(_ prepared: (HTTPRequest, [UInt8]), from source: String, adding extra: [(String, String)] = []) async throws
            -> RawHTTPResponse
        {
            let socket = try LoopbackSocket(port: nginx.port, from: source)
            defer { socket.close() }
            try await socket.waitUntilConnected()
            let head = prepared.0.http1Head(adding: extra + [("Content-Length", String(prepared.1.count)), ("Connection", "close")])
            guard let answer = try await socket.exchange(head + prepared.1) else {
                throw ServerTestError(
                    description: "\(prepared.0.method) \(prepared.0.path ?? "") from \(source): nginx closed the connection without an answer")
            }
            return answer
        }

        /// A sign-in to `email` with `password` through nginx from `source`.
        func signIn(_ email: String, _ password: String, from source: String, adding extra: [(String, String)] = []) async throws
            -> RawHTTPResponse
        {
            let request = try await signed(
                .post, "/v1/sessions", json: UserAPI.SignIn(email: email, password: password), signer: keys.appSigner)
            return try await send(request, from: source, adding: extra)
        }

        /// `GET /v1/health` through nginx, twice: round robin takes one to each node.
        func expectHealthy(sourceLocation: SourceLocation = #_sourceLocation) async throws {
            for _ in 0..<2 {
                let status = try await plainHealthStatus(port: nginx.port, from: ProxyDeploymentTests.operatorAddress)
                #expect(status == 200, "health through nginx answered \(status)", sourceLocation: sourceLocation)
            }
        }
    }

    /// A fresh database on the shared PostgreSQL, an admin, two plain-HTTP nodes on it sharing a
    /// data folder, each trusting 127.0.0.1 (nginx) and told nginx's URL, and nginx in front.
    /// nginx's port must be known before the nodes start (it is their public URL) and is taken
    /// only once they have: when another program took it meanwhile, all is tried again (three
    /// times at most).
    static func deploy() async throws -> Deployment {
        let postgres = try await PostgreSQLServer.shared()
        let database = try postgres.makeDatabase()
        let folder = try TemporaryFolder(prefix: "signet-behind-nginx")
        let keys = try ServerKeys.initialise(in: folder, database: database)
        for attempt in 1...3 {
            let port = try PostgreSQLServer.freePort()
            let extra = ["--trusted-proxy", "127.0.0.1", "--public-url", "http://127.0.0.1:\(port)"]
            let nodeA = try await ServeProcess.start(in: folder, database: database, extra: extra, name: "a\(attempt)", plainHTTP: true)
            let nodeB: ServeProcess
            let nginx: NginxProxy?
            do {
                nodeB = try await ServeProcess.start(in: folder, database: database, extra: extra, name: "b\(attempt)", plainHTTP: true)
            } catch {
                nodeA.process.stop()
                throw error
            }
            do {
                // nginx passes a client's `Forwarded` on untouched, and the nodes read `Forwarded`
                // before `X-Forwarded-For`: unless nginx drops it, a client names itself.
                nginx = try await NginxProxy.start(
                    port: port, upstreams: [nodeA.port, nodeB.port], extraProxyDirectives: [#"proxy_set_header Forwarded "";"#])
            } catch {
                nodeA.process.stop()
                nodeB.process.stop()
                throw error
            }
            if let nginx {
                return Deployment(postgres: postgres, database: database, keys: keys, nodes: [nodeA, nodeB], nginx: nginx)
            }
            nodeA.process.stop()
            nodeB.process.stop()
        }
        throw ServerTestError(description: "nginx found its port taken by another program three times")
    }

    /// The problem document's code of `answer` (`server.rateLimited`), or nil when it has none.
    static func code(of answer: RawHTTPResponse) -> String? {
        (try? JSONDecoder().decode(ProblemDocument.self, from: Data(answer.body)))?.code
    }

    /// A 429 `server.rateLimited` with a `Retry-After` of a positive number of seconds.
    static func expectRateLimited(_ answer: RawHTTPResponse, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(answer.status == 429, "\(what): \(answer)", sourceLocation: sourceLocation)
        #expect(code(of: answer) == "server.rateLimited", "\(what): \(answer)", sourceLocation: sourceLocation)
        let retryAfter = answer.field("Retry-After")
        #expect((retryAfter.flatMap { Int($0) } ?? 0) > 0, "\(what): Retry-After \(retryAfter ?? "missing")", sourceLocation: sourceLocation)
    }

    @Test func twoNodesBehindNginxKeepEachClientsLimitsApart() async throws {
        let deployment = try await Self.deploy()
        defer { deployment.stop() }
        let keys = deployment.keys
        try await deployment.expectHealthy()

        // The operator enrols the app and the owner registers, through nginx (either node
        // writes to the shared database).
        let enrolment = AdminAPI.Enrolment(name: "app", publicKey: Base64.encode(keys.app.publicKey.spkiDER))
        let enrolled = try await deployment.send(
            try await deployment.signed(.post, "/v1/admin/apps", json: enrolment, signer: keys.adminSigner), from: Self.operatorAddress)
        #expect(enrolled.status == 201, "\(enrolled)")
        let registration = UserAPI.Registration(email: Self.email, password: Self.password, displayName: "Ann")
        let registered = try await deployment.send(
            try await deployment.signed(.post, "/v1/users", json: registration, signer: keys.appSigner), from: Self.clientB)
        #expect(registered.status == 201, "\(registered)")
        try await deployment.expectHealthy()

        // Client A fails five times, its attempts alternating between the nodes…
        for attempt in 1...5 {
            let wrong = try await deployment.signIn(Self.email, "wrong password \(attempt)", from: Self.clientA)
            #expect(wrong.status == 401, "attempt \(attempt): \(wrong)")
            #expect(Self.code(of: wrong) == "server.invalidCredentials", "attempt \(attempt): \(wrong)")
        }
        // …and then waits, on either node: the counters are in PostgreSQL.
        for attempt in 6...7 {
            Self.expectRateLimited(
                try await deployment.signIn(Self.email, "wrong password \(attempt)", from: Self.clientA), "attempt \(attempt) from \(Self.clientA)")
        }
        try await deployment.expectHealthy()

        // Client B, the owner, through the same nginx: its limits are its own, not nginx's.
        let owned = try await deployment.signIn(Self.email, Self.password, from: Self.clientB)
        #expect(owned.status == 201, "\(owned)")
        let session = try? JSONDecoder().decode(UserAPI.Session.self, from: Data(owned.body))
        #expect(session?.token.isEmpty == false, "no session in \(owned)")
        try await deployment.expectHealthy()

        // Client A naming another address itself changes nothing: nginx appends the address it
        // saw to X-Forwarded-For (and drops a client's Forwarded), and the nodes take the
        // right-most hop nginx did not write — 127.0.0.2.
        Self.expectRateLimited(
            try await deployment.signIn(Self.email, "forged hop", from: Self.clientA, adding: [("X-Forwarded-For", "10.9.9.9")]),
            "\(Self.clientA) claiming X-Forwarded-For: 10.9.9.9")
        Self.expectRateLimited(
            try await deployment.signIn(Self.email, "forged hop", from: Self.clientA, adding: [("Forwarded", "for=10.9.9.9")]),
            "\(Self.clientA) claiming Forwarded: for=10.9.9.9")
        try await deployment.expectHealthy()

        // What the nodes counted, in the shared database: each client by its own address; nginx's
        // address and the forged one never.
        let buckets = try deployment.postgres.query("SELECT bucket FROM rate_limits ORDER BY bucket", database: deployment.database)
        #expect(buckets.contains("address:\(Self.clientA)") && buckets.contains("address:\(Self.clientB)"), "\(buckets)")
        #expect(buckets.contains("pair:\(Self.clientA) \(Self.email)"), "\(buckets)")
        #expect(!buckets.contains { $0.contains("127.0.0.1") || $0.contains("10.9.9.9") }, "\(buckets)")

        // nginx's access log (complete once it has stopped): round robin spread A's failures
        // over both nodes, and both refused it.
        deployment.nginx.stop()
        let log = deployment.nginx.accessLog
        let nodes = Set(deployment.nodes.map { "127.0.0.1:\($0.port)" })
        let signIns = log.filter { $0.client == Self.clientA && $0.request.hasPrefix("POST /v1/sessions ") }
        let failed = signIns.filter { $0.status == 401 }.map(\.upstream)
        let refused = signIns.filter { $0.status == 429 }.map(\.upstream)
        #expect(failed.count == 5 && Set(failed) == nodes, "failures answered by \(failed), nodes \(nodes)\n\(log)")
        #expect(refused.count == 4 && Set(refused.prefix(2)) == nodes, "refusals answered by \(refused), nodes \(nodes)\n\(log)")
        #expect(log.allSatisfy { nodes.contains($0.upstream) }, "requests nginx answered itself:\n\(log)")
    }
}
