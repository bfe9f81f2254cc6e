import Foundation
import HTTPTypes
import SignetAPI
import SignetAttestation
import SignetAttestationTestSupport
import SignetClient
import SignetCore
import SignetHTTP
import SignetServer
import SignetTLS
import SignetTestSupport
import Testing

/// Devices enrolled by attestation, end to end against a live server: `SignetClient` with a
/// test device (keys certified by a test CA the server trusts) enrols, signs in and calls the
/// user API with the device key; replays, revocations and the app key are refused.
@Suite("devices enrolled by attestation: the story")
struct DeviceStoryTests {
    /// A client of `server` for the test app, with `device` (none: the app key signs).
    static func client(_ server: TestServer, device: (any DeviceIdentity)?, sessions: any SessionStore = InMemorySessionStore()) throws -> SignetClient {
        var configuration = ClientConfiguration(
            server: "https://127.0.0.1:\(server.port)", appSigner: server.app, serverKey: server.identity.responseSigner.publicKey)
        configuration.device = device
        let transport = ContractCheckingTransport(inner: PinnedTransport(trust: server.api.transport.trust, timeout: TestTimeouts.hangGuard))
        return try SignetClient(configuration: configuration, transport: transport, sessions: sessions)
    }

    /// A server trusting `fixture`'s CA, the test app's settings stored (`required` as given).
    static func withServer<T: Sendable>(
        required: Bool = true, fixture: DeviceFixture, configure: (inout ServerConfiguration) -> Void = { _ in },
        _ body: (TestServer) async throws -> T
    ) async throws -> T {
        try await TestServer.with(configure: { configuration in
            fixture.configure(&configuration)
            configure(&configuration)
        }) { server in
            try await server.store.principals.setAttestation(app: "test-app", DeviceFixture.settings(required: required).normalized())
            return try await body(server)
        }
    }

    /// Registers, signs in, reads the profile and signs out through `client`.
    static func userStory(_ client: SignetClient, email: String = "dana@example.com") async throws {
        try await client.register(email: email, password: "correct horse battery", displayName: "Dana")
        try await client.signIn(email: email, password: "correct horse battery")
        #expect(try await client.me().email == email)
        try await client.signOut()
    }

    @Test("App Attest: enrol, then register, sign in, me and sign out, all signed by the device; the counter grows")
    func appleStory() async throws {
        let fixture = try DeviceFixture()
        try await Self.withServer(fixture: fixture) { server in
            let device = TestAppAttestDevice(ca: fixture.ca)
            let client = try Self.client(server, device: device)
            let enrolled = try await client.enrolDevice()
            #expect(enrolled.platform == .apple && enrolled.app == "test-app" && enrolled.counter == 0)
            #expect(enrolled.algorithm == DeviceAPI.appAttestAlgorithm)
            #expect(enrolled.facts == DeviceAPI.Facts(environment: "production", appId: DeviceFixture.appID))
            let keyID = try SyntheticAppAttest.signetKey(device.key.publicKey).fingerprint.description
            #expect(enrolled.keyId == keyID)
            #expect(try await device.enrolledKeyID() == keyID)
            try await Self.userStory(client)
            #expect(device.counter == 4)
            let (stored, _) = try #require(try await server.store.devices.find(keyID: keyID))
            #expect(stored.counter == 4)
            #expect(stored.receipt == Array("receipt".utf8))
        }
    }

    @Test("Android: enrol with a key attestation chain, then the user story signed with ecdsa-p256-sha256")
    func androidStory() async throws {
        let fixture = try DeviceFixture()
        try await Self.withServer(fixture: fixture) { server in
            let client = try Self.client(server, device: TestAndroidDevice(ca: fixture.ca))
            let enrolled = try await client.enrolDevice()
            #expect(enrolled.platform == .android && enrolled.algorithm == "ecdsa-p256-sha256" && enrolled.counter == 0)
            #expect(enrolled.facts.packageName == "com.example.app")
            #expect(enrolled.facts.signerDigests == [String(repeating: "11", count: 32)])
            #expect(enrolled.facts.securityLevel == "tee" && enrolled.facts.verifiedBootState == "verified" && enrolled.facts.deviceLocked == true)
            try await Self.userStory(client)
        }
    }

    @Test("a repeated App Attest counter is refused (401), and the next one passes")
    func replayedCounter() async throws {
        let fixture = try DeviceFixture()
        try await Self.withServer(fixture: fixture) { server in
            let device = TestAppAttestDevice(ca: fixture.ca)
            let client = try Self.client(server, device: device)
            try await client.enrolDevice()
            try await client.register(email: "eve@example.com", password: "correct horse battery", displayName: "Eve")
            try await client.signIn(email: "eve@example.com", password: "correct horse battery")
            // Once with the cache fresh, once after it aged: refused by the verifier or by the
            // compare-and-set, 401 both ways.
            for wait in [Duration.zero, .milliseconds(1100)] {
                try await Task.sleep(for: wait)
                let counter = device.counter
                device.repeatCounterOnce()
                let error = try await thrownAsync(ClientError.self) { try await client.me() }
                guard case .signatureRefused(let detail) = error else { Issue.record("\(error)"); continue }
                #expect(detail.contains("counter \(counter)"), "\(detail)")
                #expect(try await client.me().email == "eve@example.com")
            }
            let keyID = try #require(try await device.enrolledKeyID())
            let (stored, _) = try #require(try await server.store.devices.find(keyID: keyID))
            #expect(stored.counter == Int64(device.counter))
        }
    }

    @Test("a revoked device is refused at once, its sessions end, the client forgets its key; a new key enrols")
    func revokedDevice() async throws {
        let fixture = try DeviceFixture()
        try await Self.withServer(fixture: fixture) { server in
            let device = TestAppAttestDevice(ca: fixture.ca)
            let client = try Self.client(server, device: device)
            let enrolled = try await client.enrolDevice()
            try await client.register(email: "finn@example.com", password: "correct horse battery", displayName: "Finn")
            try await client.signIn(email: "finn@example.com", password: "correct horse battery")
            let admin = try server.adminClient
            try await admin.revokeDevice(id: enrolled.id)
            let listed = try await admin.devices(app: "test-app")
            #expect(listed.count == 1 && listed[0].id == enrolled.id && listed[0].revokedAt != nil)
            let error = try await thrownAsync(ClientError.self) { try await client.me() }
            guard case .revokedDevice = error else { Issue.record("\(error)"); return }
            #expect(try await device.enrolledKeyID() == nil)
            let rows = try await server.store.database.withConnection { sql in
                try await sql.raw("SELECT token_hash FROM sessions WHERE device = \(bind: enrolled.keyId)").all().count
            }
            #expect(rows == 0)
            // Revoking again keeps the first time; an unknown id is 404.
            try await admin.revokeDevice(id: enrolled.id)
            let unknown = try await thrownAsync(ClientError.self) { try await admin.revokeDevice(id: "no-such-device") }
            #expect(unknown == .refused(status: 404, code: "server.notFound", detail: "the device no-such-device does not exist"))
            // The install makes a new key and enrols it.
            let fresh = try Self.client(server, device: TestAppAttestDevice(ca: fixture.ca))
            try await fresh.enrolDevice()
            try await fresh.signIn(email: "finn@example.com", password: "correct horse battery")
            #expect(try await admin.devices().count == 2)
        }
    }

    @Test("an app requiring attestation refuses its app key on the user routes (403), not on enrolment, trust or resources")
    func appKeyRefusedWhereRequired() async throws {
        let fixture = try DeviceFixture()
        try await Self.withServer(fixture: fixture) { server in
            let error = try await thrownAsync(ClientError.self) {
                try await Self.client(server, device: nil).register(email: "gil@example.com", password: "correct horse battery", displayName: "Gil")
            }
            guard case .attestationRequired(let detail) = error else { Issue.record("\(error)"); return }
            #expect(detail.contains("test-app"))
            for (method, path) in [(HTTPRequest.Method.post, "/v1/sessions"), (.get, "/v1/me"), (.delete, "/v1/sessions/current"), (.delete, "/v1/me/sessions")] {
                let answer = try await server.api.send(method, path, json: method == .post ? UserAPI.SignIn(email: "g@example.com", password: "x") : nil,
                                                       signer: server.appSigner, bearer: "token")
                #expect(answer.status == 403 && answer.problemCode == "server.attestationRequired", "\(path): \(answer.text)")
            }
            #expect(try await server.api.send(.post, "/v1/devices/challenges", signer: server.appSigner).status == 201)
            #expect(try await server.api.send(.get, "/v1/trust", signer: server.appSigner).status == 200)
        }
        // Without the requirement, the app key still signs users in.
        try await Self.withServer(required: false, fixture: fixture) { server in
            try await Self.userStory(try Self.client(server, device: nil))
        }
    }

    @Test("a session is bound to the device that started it: the app key or another device cannot use its token")
    func sessionBoundToDevice() async throws {
        let fixture = try DeviceFixture()
        try await Self.withServer(required: false, fixture: fixture) { server in
            let sessions = InMemorySessionStore()
            let client = try Self.client(server, device: TestAndroidDevice(ca: fixture.ca), sessions: sessions)
            try await client.enrolDevice()
            try await client.register(email: "hal@example.com", password: "correct horse battery", displayName: "Hal")
            try await client.signIn(email: "hal@example.com", password: "correct horse battery")
            let token = try #require(try await sessions.load(server: client.serverID)?.token)
            let byAppKey = try await server.api.send(.get, "/v1/me", signer: server.appSigner, bearer: token)
            #expect(byAppKey.status == 401 && byAppKey.problemCode == "server.sessionEnded", "\(byAppKey.text)")
            // Another device of the same app.
            let otherSessions = InMemorySessionStore()
            try await otherSessions.save(SavedSession(email: "hal@example.com", token: token), server: client.serverID)
            let other = try Self.client(server, device: TestAndroidDevice(ca: fixture.ca), sessions: otherSessions)
            try await other.enrolDevice()
            let error = try await thrownAsync(ClientError.self) { try await other.me() }
            guard case .sessionEnded(let detail) = error else { Issue.record("\(error)"); return }
            #expect(detail.contains("another device"))
            // The device that started it still may.
            #expect(try await client.me().email == "hal@example.com")
        }
    }

    @Test("PUT …/attestation turns the requirement on and off; the app key is refused at once on this node")
    func requirementSwitched() async throws {
        let fixture = try DeviceFixture()
        try await Self.withServer(required: false, fixture: fixture) { server in
            let admin = try server.adminClient
            let appClient = try Self.client(server, device: nil)
            try await appClient.register(email: "ida@example.com", password: "correct horse battery", displayName: "Ida")
            let on = try await admin.setAttestation(app: "test-app", DeviceFixture.settings(required: true))
            #expect(on.attestation?.required == true && on.attestation?.appleEnvironments == ["production"])
            #expect(on.attestation?.androidMinimumSecurity == "tee")
            let error = try await thrownAsync(ClientError.self) { try await appClient.signIn(email: "ida@example.com", password: "correct horse battery") }
            guard case .attestationRequired = error else { Issue.record("\(error)"); return }
            #expect(try await admin.list(role: .app).first { $0.name == "test-app" }?.attestation?.required == true)
            _ = try await admin.setAttestation(app: "test-app", DeviceFixture.settings(required: false))
            try await appClient.signIn(email: "ida@example.com", password: "correct horse battery")
            // An unknown app is 404; a bad setting is 422 naming the field.
            let missing = try await thrownAsync(ClientError.self) { try await admin.setAttestation(app: "nope", DeviceFixture.settings(required: true)) }
            #expect(missing == .refused(status: 404, code: "server.notFound", detail: "the app nope does not exist"))
            var bad = DeviceFixture.settings(required: true)
            bad.androidSigners = ["12:34"]
            let invalid = try await thrownAsync(ClientError.self) { try await admin.setAttestation(app: "test-app", bad) }
            guard case .refused(422, "server.unprocessable", let detail) = invalid else { Issue.record("\(invalid)"); return }
            #expect(detail.hasPrefix("androidSigners:"))
        }
    }
}
