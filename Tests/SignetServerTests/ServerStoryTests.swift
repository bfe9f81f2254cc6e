import Foundation
import HTTPTypes
import SignetCore
import SignetHTTP
import SignetClient
import SignetServer
import SignetTestSupport
import Testing

/// The whole user story against a live server over pinned TLS: enrol an app, register, sign in,
/// read the profile, sign out.
@Suite struct ServerStoryTests {
    @Test func healthIsUnsigned() async throws {
        try await TestServer.with { server in
            let response = try await server.api.send(.get, "/v1/health", signer: nil)
            #expect(response.status == 200)
            #expect(response.text == #"{"status":"ok"}"#)
            #expect(response.head.headerFields[HTTPField.Name("Request-Id")!] != nil)
        }
    }

    @Test func enrolRegisterSignInMeSignOut() async throws {
        try await TestServer.with { server in
            // A second app, enrolled by the admin over the API.
            let newApp = try SoftwareSigner(key: PrivateKey.generate(.p256))
            let enrolled = try await server.adminClient.enrol(
                AdminAPI.Enrolment(name: "ios-app", publicKey: PEM.encode(label: "PUBLIC KEY", der: newApp.publicKey.spkiDER)), role: .app)
            #expect(enrolled.keyId == newApp.publicKey.fingerprint.description)
            #expect(enrolled.algorithm == "ecdsa-p256-sha256")
            let signer = HTTPMessageSigner(key: .signer(newApp))

            let registered = try await server.api.send(
                .post, "/v1/users", json: UserAPI.Registration(email: "  Bob@Example.COM ", password: "a long passphrase", displayName: "Bob"),
                signer: signer)
            #expect(registered.status == 201, "\(registered.text)")
            let profile = try registered.decode(UserAPI.Profile.self)
            #expect(profile.email == "bob@example.com")
            #expect(profile.gravatarURL == "https://gravatar.com/avatar/" + Gravatar.hash(email: "bob@example.com"))

            let signedIn = try await server.api.send(
                .post, "/v1/sessions", json: UserAPI.SignIn(email: "BOB@example.com", password: "a long passphrase"), signer: signer)
            #expect(signedIn.status == 201, "\(signedIn.text)")
            let session = try signedIn.decode(UserAPI.Session.self)
            #expect(session.token.hasPrefix("sgt_"))
            #expect(signedIn.head.headerFields[.cacheControl] == "no-store")

            let me = try await server.api.send(.get, "/v1/me", signer: signer, bearer: session.token)
            #expect(me.status == 200)
            #expect(try me.decode(UserAPI.Profile.self) == profile)

            let signedOut = try await server.api.send(.delete, "/v1/sessions/current", signer: signer, bearer: session.token)
            #expect(signedOut.status == 204)
            let after = try await server.api.send(.get, "/v1/me", signer: signer, bearer: session.token)
            #expect(after.status == 401)
            #expect(after.problemCode == "server.sessionEnded")
            #expect(after.head.headerFields[.wwwAuthenticate] == "Bearer")
        }
    }

    @Test func tokensAreStoredOnlyAsHashes() async throws {
        try await TestServer.with { server in
            let token = try await registerAndSignIn(server)
            let sqlite = try #require(ProcessRunner.which("sqlite3"), "sqlite3 is needed to read the database")
            let dump = try ProcessRunner.run(sqlite, [server.folder.file("data/signet.sqlite"), ".dump"])
            #expect(dump.status == 0)
            #expect(!dump.out.contains(token))
            #expect(!dump.out.contains(String(token.dropFirst(4))))
            #expect(dump.out.contains(DigestAlgorithm.sha256.hash(Array(token.utf8)).hex))
            #expect(!dump.out.contains("correct horse battery"))
            #expect(dump.out.contains("$scrypt$"))
        }
    }

    @Test func responsesAreSignedWhenAsked() async throws {
        try await TestServer.with { server in
            let token = try await registerAndSignIn(server)
            let (request, body) = try await server.api.request(
                .get, "/v1/me", signer: server.appSigner, bearer: token, headers: [.acceptSignature: #"server=("@status")"#])
            let response = try await server.api.send((request, body))
            #expect(response.status == 200)
            let verifier = HTTPMessageVerifier(
                keys: StaticHTTPSignatureKeys(publicKeys: [server.identity.responseSigner.publicKey]), policy: responsePolicy())
            let verified = try await verifier.verify(
                .response(response.head, answering: request), bodyDigests: ContentDigest.digests(of: response.body))
            #expect(verified.label == "server")
            #expect(verified.input.components.map(\.description).contains(#""@target-uri";req"#))

            // The same signature does not verify for another body (a proxy that rewrites it).
            var tampered = response.body
            tampered[tampered.count - 2] ^= 1
            await #expect(throws: HTTPSignatureError.self) {
                _ = try await verifier.verify(.response(response.head, answering: request), bodyDigests: ContentDigest.digests(of: tampered))
            }
            // Without Accept-Signature, nothing is signed.
            let plain = try await server.api.send(.get, "/v1/me", signer: server.appSigner, bearer: token)
            #expect(plain.head.headerFields[.signature] == nil)
        }
    }

    @Test func adminManagesUsersAndSessions() async throws {
        try await TestServer.with { server in
            let token = try await registerAndSignIn(server)
            let admin = try server.adminClient
            #expect(try await admin.users().map(\.email) == ["alice@example.com"])
            #expect(try await admin.revokeSessions(email: "alice@example.com") == 1)
            #expect(try await server.api.send(.get, "/v1/me", signer: server.appSigner, bearer: token).status == 401)

            let again = try await server.api.send(
                .post, "/v1/sessions", json: UserAPI.SignIn(email: "alice@example.com", password: "correct horse battery"), signer: server.appSigner)
            let second = try again.decode(UserAPI.Session.self).token
            try await admin.disableUser(email: "alice@example.com")
            #expect(try await server.api.send(.get, "/v1/me", signer: server.appSigner, bearer: second).status == 401)
            let refused = try await server.api.send(
                .post, "/v1/sessions", json: UserAPI.SignIn(email: "alice@example.com", password: "correct horse battery"), signer: server.appSigner)
            #expect(refused.status == 403)
            #expect(try await admin.users().first?.disabled == true)

            // A user revokes all of their own sessions.
            let bob = try await registerAndSignIn(server, email: "bob@example.com")
            let revoked = try await server.api.send(.delete, "/v1/me/sessions", signer: server.appSigner, bearer: bob)
            #expect(try revoked.decode(UserAPI.Revoked.self).revoked == 1)
            #expect(try await server.api.send(.get, "/v1/me", signer: server.appSigner, bearer: bob).status == 401)
        }
    }

    @Test func hmacAppsSignWithTheSecretShownOnce() async throws {
        try await TestServer.with { server in
            let enrolled = try await server.adminClient.enrol(AdminAPI.Enrolment(name: "legacy", hmac: true), role: .app)
            let secret = try #require(enrolled.secret.flatMap { Base64.decode($0) })
            #expect(secret.count == 32)
            var signer = HTTPMessageSigner(key: .hmacSHA256(SecretBytes(secret)), keyID: enrolled.keyId)
            signer.includeAlgorithm = true
            let registered = try await server.api.send(
                .post, "/v1/users", json: UserAPI.Registration(email: "c@example.com", password: "0123456789", displayName: "C"), signer: signer)
            #expect(registered.status == 201, "\(registered.text)")
            let listed = try await server.adminClient.list(role: .app)
            #expect(listed.first { $0.name == "legacy" }?.secret == nil)
        }
    }

    @Test func lastAdminCannotBeRevokedButOthersCan() async throws {
        try await TestServer.with { server in
            let admin = try server.adminClient
            await #expect(throws: ClientError.refused(status: 409, code: "server.conflict", detail: "root is the last admin; add another admin before revoking it")) {
                try await admin.revoke(role: .admin, name: "root")
            }
            let second = try SoftwareSigner(key: PrivateKey.generate(.ed25519))
            _ = try await admin.enrol(AdminAPI.Enrolment(name: "second", publicKey: Base64.encode(second.publicKey.spkiDER)), role: .admin)
            try await admin.revoke(role: .admin, name: "root")
            // The revoked admin is told so by the code server.revoked, never by a message's text.
            await #expect(throws: ClientError.revokedApp(detail: "the admin root has been revoked")) { _ = try await admin.list(role: .app) }
        }
    }
}

/// What a response signature must carry: the status and the request it answers.
func responsePolicy() -> HTTPSignaturePolicy {
    var policy = HTTPSignaturePolicy()
    var method = SignatureComponent.method
    method.fromRequest = true
    policy.requiredComponents = [.status, method]
    policy.requireNonce = false
    return policy
}
