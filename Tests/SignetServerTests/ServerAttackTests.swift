import Foundation
import HTTPTypes
import SignetCore
import SignetHTTP
import SignetServer
import SignetTLS
import SignetTestSupport
import SignetX509
import Testing

/// Every attack on the signed API is refused with the right status, and leaves no trace.
@Suite struct ServerAttackTests {
    static let registration = Array(#"{"email":"mallory@example.com","password":"0123456789abc","displayName":"M"}"#.utf8)

    /// How many users the database holds.
    static func userCount(_ server: TestServer) async throws -> Int { try await server.store.users.all().count }

    @Test func unsignedRequestsGet401WithAcceptSignature() async throws {
        try await TestServer.with { server in
            let response = try await server.api.send(try await server.api.request(.post, "/v1/users", body: Self.registration))
            #expect(response.status == 401)
            #expect(response.problemCode == "server.unauthorized")
            let hint = try #require(response.head.headerFields[.acceptSignature])
            #expect(hint.contains("nonce") && hint.contains("content-digest"))
            #expect(try await Self.userCount(server) == 0)
        }
    }

    @Test func replayIsRefused() async throws {
        try await TestServer.with { server in
            let prepared = try await server.api.request(.post, "/v1/users", body: Self.registration, signer: server.appSigner)
            #expect(try await server.api.send(prepared).status == 201)
            let replay = try await server.api.send(prepared)
            #expect(replay.status == 401)
            #expect(replay.text.contains("replay"))
            #expect(try await Self.userCount(server) == 1)
        }
    }

    @Test func staleAndFutureSignaturesAreRefused() async throws {
        try await TestServer.with { server in
            for offset in [-600.0, 600.0] {
                var signer = server.appSigner
                signer.clock = WallClock { Date().addingTimeInterval(offset) }
                let response = try await server.api.send(try await server.api.request(.post, "/v1/users", body: Self.registration, signer: signer))
                #expect(response.status == 401, "offset \(offset)")
            }
            #expect(try await Self.userCount(server) == 0)
        }
    }

    @Test func tamperedBodyPathAndMethodAreRefused() async throws {
        try await TestServer.with { server in
            let (request, body) = try await server.api.request(.post, "/v1/users", body: Self.registration, signer: server.appSigner)
            var otherBody = try #require(body)
            otherBody[10] = UInt8(ascii: "X")
            #expect(try await server.api.send((request, otherBody)).status == 401)
            var otherPath = request
            otherPath.path = "/v1/sessions"
            #expect(try await server.api.send((otherPath, body)).status == 401)
            var otherMethod = request
            otherMethod.method = .put
            #expect([401, 404, 405].contains(try await server.api.send((otherMethod, body)).status))
            // A digest field rewritten to match the new body breaks the signature instead.
            var rewritten = request
            rewritten.headerFields[.contentDigest] = ContentDigest.fieldValue(for: otherBody)
            #expect(try await server.api.send((rewritten, otherBody)).status == 401)
            #expect(try await Self.userCount(server) == 0)
        }
    }

    @Test func unknownWrongAndMisusedKeysAreRefused() async throws {
        try await TestServer.with { server in
            // An unenrolled key.
            let stranger = HTTPMessageSigner(key: .signer(try SoftwareSigner(key: PrivateKey.generate(.ed25519))))
            let unknown = try await server.api.send(try await server.api.request(.post, "/v1/users", body: Self.registration, signer: stranger))
            #expect(unknown.status == 401)
            // Another key claiming the app's key id.
            let impostor = HTTPMessageSigner(
                key: .signer(try SoftwareSigner(key: PrivateKey.generate(.ed25519))), keyID: server.app.publicKey.fingerprint.description)
            #expect(try await server.api.send(try await server.api.request(.post, "/v1/users", body: Self.registration, signer: impostor)).status == 401)
            // The admin key on the user API, the app key on the admin API.
            let asAdmin = try await server.api.send(try await server.api.request(.post, "/v1/users", body: Self.registration, signer: server.adminSigner))
            #expect(asAdmin.status == 403)
            let asApp = try await server.api.send(.get, "/v1/admin/apps", signer: server.appSigner)
            #expect(asApp.status == 403)
            #expect(asApp.problemCode == "server.forbidden")
            #expect(try await Self.userCount(server) == 0)
        }
    }

    @Test func revokedAppIsRefusedWith403() async throws {
        try await TestServer.with { server in
            try await server.adminClient.revoke(role: .app, name: "test-app")
            let response = try await server.api.send(try await server.api.request(.post, "/v1/users", body: Self.registration, signer: server.appSigner))
            #expect(response.status == 403)
            #expect(response.text.contains("revoked"))
            #expect(try await Self.userCount(server) == 0)
            #expect(try await server.adminClient.list(role: .app).first?.revokedAt != nil)
        }
    }

    @Test func aSessionIsBoundToTheAppThatStartedIt() async throws {
        try await TestServer.with { server in
            let token = try await registerAndSignIn(server)
            let other = try SoftwareSigner(key: PrivateKey.generate(.ed25519))
            _ = try await server.adminClient.enrol(AdminAPI.Enrolment(name: "other-app", publicKey: Base64.encode(other.publicKey.spkiDER)), role: .app)
            let borrowed = try await server.api.send(.get, "/v1/me", signer: HTTPMessageSigner(key: .signer(other)), bearer: token)
            #expect(borrowed.status == 401)
            #expect(borrowed.text.contains("another app"))
            #expect(try await server.api.send(.get, "/v1/me", signer: server.appSigner, bearer: token).status == 200)
        }
    }

    @Test func aServerWithAnotherKeyIsRefusedByThePin() async throws {
        try await TestServer.with { server in
            let other = try PinSet(hosts: [HostPins(host: "127.0.0.1", pins: [
                try SoftwareSigner(key: PrivateKey.generate(.p256)).publicKey.fingerprint, server.identity.backupPin,
            ])])
            let client = PinnedHTTPSClient(trust: TLSTrustPolicy(mode: .pinnedSelfSigned, pins: other), timeout: .seconds(TestTimeouts.hangGuardSeconds))
            let request = HTTPRequest(method: .get, scheme: "https", authority: "127.0.0.1:\(server.port)", path: "/v1/health")
            await #expect {
                _ = try await client.send(request)
            } throws: { error in
                guard case TLSError.untrusted(_, .pinMismatch)? = error as? TLSError else { return false }
                return true
            }
        }
    }

    @Test func failedSignInsAreRateLimitedPerAccount() async throws {
        try await TestServer.with(configure: { $0.failedSignInsPerAccount = 3 }) { server in
            _ = try await registerAndSignIn(server)
            for _ in 1...3 {
                let wrong = try await server.api.send(
                    .post, "/v1/sessions", json: UserAPI.SignIn(email: "alice@example.com", password: "wrong password!"), signer: server.appSigner)
                #expect(wrong.status == 401)
                #expect(wrong.text.contains("wrong e-mail address or password"))
            }
            // Now even the right password waits.
            let limited = try await server.api.send(
                .post, "/v1/sessions", json: UserAPI.SignIn(email: "alice@example.com", password: "correct horse battery"), signer: server.appSigner)
            #expect(limited.status == 429)
            #expect(limited.problemCode == "server.rateLimited")
            let retryAfter = try #require(limited.head.headerFields[.retryAfter].flatMap { Int($0) })
            #expect(retryAfter > 0 && retryAfter <= 900)
            // Another account is not affected.
            let other = try await server.api.send(
                .post, "/v1/sessions", json: UserAPI.SignIn(email: "nobody@example.com", password: "whatever123"), signer: server.appSigner)
            #expect(other.status == 401)
            // An unknown address gets the same answer as a wrong password.
            #expect(other.text.contains("wrong e-mail address or password"))
        }
    }

    @Test func failedSignInsAreRateLimitedPerAddress() async throws {
        try await TestServer.with(configure: { $0.failedSignInsPerAddress = 4 }) { server in
            for index in 1...4 {
                let wrong = try await server.api.send(
                    .post, "/v1/sessions", json: UserAPI.SignIn(email: "user\(index)@example.com", password: "wrong password!"), signer: server.appSigner)
                #expect(wrong.status == 401)
            }
            let limited = try await server.api.send(
                .post, "/v1/sessions", json: UserAPI.SignIn(email: "fresh@example.com", password: "wrong password!"), signer: server.appSigner)
            #expect(limited.status == 429)
            #expect(limited.head.headerFields[.retryAfter] != nil)
        }
    }
}
