import Foundation
import HTTPTypes
import SignetAPI
import SignetClient
import SignetCore
import SignetHTTP
import SignetServer
import SignetTestSupport
import Testing

/// The admin client on the client's verified transport, and clients that decide on problem
/// codes alone (issue 30).
@Suite struct AdminClientTests {
    typealias F = ResourceFixtures

    /// The admin client of `server` over `transport`, verifying under `serverKey` (the
    /// server's own by default).
    static func admin(_ server: TestServer, through transport: any ClientTransport, serverKey: PublicKey? = nil) throws -> AdminClient {
        try AdminClient(
            server: "https://127.0.0.1:\(server.port)", signer: server.adminSigner,
            serverKey: serverKey ?? server.identity.responseSigner.publicKey, transport: transport)
    }

    /// A problem document's bytes.
    static func problem(_ code: ProblemCode, _ detail: String) throws -> [UInt8] {
        Array(try JSONEncoder().encode(ProblemDocument(code: code, detail: detail, instance: "/v1/admin/apps")))
    }

    @Test func aTamperedAdminAnswerIsRefused() async throws {
        try await TestServer.with { server in
            // A man in the middle adds an app to the list the admin is shown.
            let tampering = F.RewritingTransport(inner: F.pinned(server)) { request, head, body in
                guard request.path == "/v1/admin/apps", request.method == .get else { return nil }
                let forged = String(decoding: body, as: UTF8.self).replacingOccurrences(of: "\"test-app\"", with: "\"rogue-app\"")
                return (head, Array(forged.utf8))
            }
            let error = try await thrownAsync(ClientError.self) { _ = try await Self.admin(server, through: tampering).list(role: .app) }
            #expect(error.code == "responseSignatureInvalid", "\(error)")
            // Untouched, the same call is believed.
            let apps = try await Self.admin(server, through: F.pinned(server)).list(role: .app)
            #expect(apps.map(\.name) == ["test-app"])
        }
    }

    @Test func aForgedRefusalIsNotBelieved() async throws {
        try await TestServer.with { server in
            // An unsigned "your key is revoked" in place of the server's answer.
            let forging = F.RewritingTransport(inner: F.pinned(server)) { _, head, _ in
                var fields = HTTPFields()
                fields[.contentType] = ProblemDocument.mediaType
                return (HTTPResponse(status: .forbidden, headerFields: fields), (try? Self.problem(.revoked, "the admin root has been revoked")) ?? [])
            }
            let error = try await thrownAsync(ClientError.self) { _ = try await Self.admin(server, through: forging).users() }
            #expect(error.code == "responseSignatureInvalid", "\(error)")
        }
    }

    @Test func anAnswerSignedByAnotherKeyIsRefused() async throws {
        try await TestServer.with { server in
            let other = try PrivateKey.generate(.ed25519).publicKey
            let admin = try Self.admin(server, through: F.pinned(server), serverKey: other)
            let listed = try await thrownAsync(ClientError.self) { _ = try await admin.resources() }
            #expect(listed.code == "responseSignatureInvalid", "\(listed)")
            // The server's genuine refusal (no such app) is not believed either.
            let refused = try await thrownAsync(ClientError.self) { try await admin.revoke(role: .app, name: "no-such-app") }
            #expect(refused.code == "responseSignatureInvalid", "\(refused)")
        }
    }

    @Test func refusalsAreTypedByTheirCode() async throws {
        try await TestServer.with { server in
            let admin = try Self.admin(server, through: F.pinned(server))
            let missing = try await thrownAsync(ClientError.self) { try await admin.revoke(role: .app, name: "no-such-app") }
            guard case .refused(404, "server.notFound", _) = missing else {
                Issue.record("not a 404 server.notFound: \(missing)")
                return
            }
            let badName = try await thrownAsync(ClientError.self) {
                _ = try await admin.enrol(AdminAPI.Enrolment(name: ".hidden", hmac: true), role: .app)
            }
            #expect(badName == .refused(status: 422, code: "server.unprocessable", detail: "name: \(AdminAPI.nameRule)"))
        }
    }

    /// A revoked app is told so by `server.revoked`: the client reads the code, not the text.
    @Test func aRevokedAppIsKnownByItsCodeAlone() async throws {
        try await TestServer.with(configure: { $0.revocationLatency = .zero }) { server in
            let admin = try Self.admin(server, through: F.pinned(server))
            try await admin.revoke(role: .app, name: "test-app")
            // The server's own answer, signed and verified.
            let client = try F.client(server)
            let revoked = try await thrownAsync(ClientError.self) { try await client.register(email: "ann@example.com", password: "correct horse battery", displayName: "Ann") }
            #expect(revoked.code == "revokedApp", "\(revoked)")

            // The same code with other words is still a revocation; another code with the old
            // words is not.
            let reworded = F.RewritingTransport(inner: F.pinned(server)) { _, head, _ in
                (HTTPResponse(status: .forbidden, headerFields: head.headerFields), (try? Self.problem(.revoked, "Schlüssel widerrufen")) ?? [])
            }
            let rewordedError = try await thrownAsync(ClientError.self) {
                try await F.client(server, checkResponses: false, transport: reworded).register(email: "a@example.com", password: "correct horse battery", displayName: "A")
            }
            #expect(rewordedError.code == "revokedApp", "\(rewordedError)")
            let misleading = F.RewritingTransport(inner: F.pinned(server)) { _, head, _ in
                (HTTPResponse(status: .forbidden, headerFields: head.headerFields), (try? Self.problem(.forbidden, "the app test-app has been revoked")) ?? [])
            }
            let misleadingError = try await thrownAsync(ClientError.self) {
                try await F.client(server, checkResponses: false, transport: misleading).register(email: "b@example.com", password: "correct horse battery", displayName: "B")
            }
            #expect(misleadingError.code == "refused", "\(misleadingError)")
        }
    }

    /// A client waits as long as the server says: Retry-After is covered by the answer's
    /// signature, so a man in the middle cannot shorten (or stretch) it.
    @Test func retryAfterIsTheServersOwn() async throws {
        try await TestServer.with { server in
            _ = try await registerAndSignIn(server, email: "ann@example.com")
            let client = try F.client(server)
            var limited: ClientError?
            for _ in 0..<30 where limited == nil {
                let error = try await thrownAsync(ClientError.self) { try await client.signIn(email: "ann@example.com", password: "wrong password!") }
                if case .rateLimited = error { limited = error }
            }
            guard case .rateLimited(let wait)? = limited else {
                Issue.record("no rate limit after 30 wrong passwords")
                return
            }
            #expect(wait > 1, "\(wait)")
            let hurried = F.RewritingTransport(inner: F.pinned(server)) { _, head, body in
                var fields = head.headerFields
                guard fields[.retryAfter] != nil else { return nil }
                fields[.retryAfter] = "1"
                return (HTTPResponse(status: head.status, headerFields: fields), body)
            }
            let tampered = try await thrownAsync(ClientError.self) {
                try await F.client(server, transport: hurried).signIn(email: "ann@example.com", password: "wrong password!")
            }
            #expect(tampered.code == "responseSignatureInvalid", "\(tampered)")
        }
    }
}
