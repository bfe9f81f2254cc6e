import Foundation
import HTTPTypes
import SignetClient
import SignetCore
import SignetHTTP
import SignetServer
import SignetTLS
import SignetTestSupport
import Synchronization
import Testing

/// What a request signature binds (issue 28, part 6): the server's own authority, and the
/// bearer token a request carries — so a request signed for another server, or a token swapped
/// under a valid signature by a man in the middle who holds the TLS key, is refused, and the
/// client's state survives the attempt.
@Suite("Envelope: what a signature binds")
struct ServerBindingTests {
    /// Sends `request` (its head as HTTP/1.1, `Host` its authority) to a plain HTTP server.
    static func send(_ request: HTTPRequest, body: [UInt8]? = nil, to server: TestServer) async throws -> RawHTTPResponse {
        let socket = try await server.connect()
        defer { socket.close() }
        var bytes = request.http1Head(adding: [("Content-Length", "\(body?.count ?? 0)"), ("Connection", "close")])
        bytes += body ?? []
        guard let answer = try await socket.exchange(bytes) else {
            throw ServerTestError(description: "\(request.method) \(request.path ?? ""): the server closed the connection without an answer")
        }
        return answer
    }

    static func code(_ response: RawHTTPResponse) -> String? {
        (try? JSONDecoder().decode(ProblemDocument.self, from: Data(response.body)))?.code
    }

    @Test func aSignatureForAnotherAuthorityIsRefused() async throws {
        try await TestServer.with(plainHTTP: true) { server in
            for authority in ["evil.example", "evil.example:\(server.port)", "127.0.0.1:\(server.port == 1 ? 2 : 1)", "localhost:\(server.port)"] {
                var request = HTTPRequest(method: .get, scheme: "http", authority: authority, path: "/v1/me")
                try await server.appSigner.sign(&request)
                let answer = try await Self.send(request, to: server)
                #expect(answer.status == 401, "\(authority): \(answer)")
                #expect(Self.code(answer) == "server.wrongAuthority", "\(authority): \(answer)")
            }
            // Its own name and port: past the authority check (no session, so the session's 401).
            let own = try await Self.send(try await server.rawRequest(.get, "/v1/me", signer: server.appSigner), to: server)
            #expect(own.status == 401 && Self.code(own) == "server.sessionEnded", "\(own)")
            #expect(try await server.healthStatus() == 200)
        }
    }

    @Test func aBearerTokenMustBeCoveredBySignature() async throws {
        try await TestServer.with(plainHTTP: true) { server in
            var signer = server.appSigner
            signer.components = [.method, .targetURI]
            let request = try await server.rawRequest(
                .get, "/v1/me", fields: [.authorization: "Bearer sgt_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"], signer: signer)
            let answer = try await Self.send(request, to: server)
            #expect(answer.status == 401, "\(answer)")
            #expect(Self.code(answer) == "server.unauthorized", "\(answer)")
            #expect(answer.text.contains("authorization"), "\(answer)")
            // By default a signer covers the token it sends.
            let covered = try await server.rawRequest(
                .get, "/v1/me", fields: [.authorization: "Bearer sgt_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"], signer: server.appSigner)
            #expect(covered.headerFields[.signatureInput]?.contains("\"authorization\"") == true)
            let ended = try await Self.send(covered, to: server)
            #expect(ended.status == 401 && Self.code(ended) == "server.sessionEnded", "\(ended)")
        }
    }

    /// A man in the middle who holds the TLS key (here: the transport itself) and rewrites the
    /// bearer token of requests while `swapping` is on.
    final class TokenSwapper: ClientTransport {
        let inner: any ClientTransport
        let replacement = Mutex<String?>(nil)
        init(inner: any ClientTransport) { self.inner = inner }

        func send(_ request: HTTPRequest, body: [UInt8]?) async throws -> (HTTPResponse, [UInt8]) {
            var request = request
            if let token = replacement.withLock({ $0 }), request.headerFields[.authorization] != nil {
                request.headerFields[.authorization] = "Bearer \(token)"
            }
            return try await inner.send(request, body: body)
        }
    }

    @Test func aSwappedTokenIsRefusedAndTheClientKeepsItsSession() async throws {
        try await TestServer.with { server in
            let honest = PinnedTransport(trust: server.api.transport.trust, timeout: TestTimeouts.hangGuard)
            let swapper = TokenSwapper(inner: honest)
            let sessions = InMemorySessionStore()
            let client = try ClientTests.client(server, sessions: sessions, transport: swapper)
            _ = try await client.register(email: "ann@example.com", password: "correct horse battery", displayName: "Ann")
            _ = try await client.signIn(email: "ann@example.com", password: "correct horse battery")
            let saved = try await sessions.load(server: client.serverID)
            // Another user's real token, and a made-up one: neither is answered for under Ann's signature.
            let other = try await registerAndSignIn(server, email: "bob@example.com")
            for token in [other, "sgt_" + String(repeating: "A", count: 43)] {
                swapper.replacement.withLock { $0 = token }
                await #expect {
                    _ = try await client.me()
                } throws: { error in
                    guard let error = error as? ClientError, case .signatureRefused = error else { return false }
                    return true
                }
            }
            swapper.replacement.withLock { $0 = nil }
            // Nothing the man in the middle did ended Ann's session.
            #expect(try await sessions.load(server: client.serverID) == saved)
            #expect(try await client.me().email == "ann@example.com")
        }
    }

    @Test func aPublishForAnotherAuthorityIsRefused() async throws {
        try await TestServer.with(plainHTTP: true) { server in
            let body = Array(repeating: UInt8(0), count: 1024)
            var request = HTTPRequest(method: .post, scheme: "http", authority: "evil.example", path: "/v1/admin/resources/site")
            request.headerFields[.contentType] = "application/x-tar"
            try await server.adminSigner.sign(&request, body: body)
            let answer = try await Self.send(request, body: body, to: server)
            #expect(answer.status == 401 && Self.code(answer) == "server.wrongAuthority", "\(answer)")
            #expect(try await server.store.resources.all().isEmpty)
        }
    }

    @Test func aBodySentToARouteThatTakesNoneIsNotDrained() async throws {
        try await TestServer.with(plainHTTP: true) { server in
            let socket = try await server.connect()
            defer { socket.close() }
            // A gigabyte announced, a few bytes sent: the answer comes, then the connection ends
            // instead of the server reading on (within the hang guard; no timing is asserted).
            let head = "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nContent-Length: 1073741824\r\n\r\n"
            guard let answer = try await socket.exchange(Array(head.utf8) + Array(repeating: UInt8(ascii: "x"), count: 4096)) else {
                Issue.record("no answer")
                return
            }
            #expect(answer.status == 200, "\(answer)")
            #expect(answer.field("Connection")?.lowercased() == "close", "\(answer)")
            #expect(try await socket.waitForPeerClose())
        }
    }

    @Test func aRefusedSmallBodyIsReadAndTheConnectionKept() async throws {
        try await TestServer.with(plainHTTP: true) { server in
            let socket = try await server.connect()
            defer { socket.close() }
            // Unsigned, so refused before its body is looked at; 1,000 bytes is cheaper to read
            // and drop than a reconnect, so the connection carries the next request.
            let body = Array(repeating: UInt8(ascii: " "), count: 1_000)
            let head = "POST /v1/users HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n"
            let refused = try await socket.exchange(Array(head.utf8) + body)
            #expect(refused?.status == 401, "\(refused.map { "\($0)" } ?? "closed")")
            #expect(refused?.field("Connection") == nil, "\(refused.map { "\($0)" } ?? "closed")")
            let health = try await socket.exchange(healthRequest(port: server.port, keepAlive: false))
            #expect(health?.status == 200, "\(health.map { "\($0)" } ?? "closed")")
            #expect(try await server.store.users.all().isEmpty)
        }
    }

    @Test func aRequestWithTwoHostFieldsIsRefused() async throws {
        try await TestServer.with(plainHTTP: true) { server in
            let socket = try await server.connect()
            defer { socket.close() }
            let head = "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nHost: evil.example\r\n\r\n"
            let answer = try await socket.exchange(Array(head.utf8))
            #expect(answer?.status == 400, "\(answer.map { "\($0)" } ?? "closed")")
            #expect(answer?.text.contains("more than one Host") == true, "\(answer.map { "\($0)" } ?? "closed")")
        }
    }
}
