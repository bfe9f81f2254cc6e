import Crypto
import Foundation
import HTTPTypes
import SignetAPI
import SignetAttestation
import SignetAttestationTestSupport
import SignetClient
import SignetCore
import SignetHTTP
import SignetServer
import SignetTestSupport
import Testing

/// Attestations that fail a check, and device keys used where they may not be: each refused
/// with its status and code, naming the check.
@Suite("devices enrolled by attestation: refusals by check")
struct DeviceRefusalTests {
    /// The detail of the 403 `server.attestationRefused` that enrolling `device` gets.
    static func refusal(_ server: TestServer, _ device: any DeviceIdentity, sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let error = try await thrownAsync(ClientError.self, sourceLocation: sourceLocation) {
            try await DeviceStoryTests.client(server, device: device).enrolDevice()
        }
        guard case .attestationRefused(let detail) = error else {
            Issue.record("\(error)", sourceLocation: sourceLocation)
            return ""
        }
        return detail
    }

    @Test("another App ID, a development key where production only is allowed, a software key, an unlocked bootloader")
    func refusedByCheck() async throws {
        let fixture = try DeviceFixture()
        try await DeviceStoryTests.withServer(fixture: fixture) { server in
            let otherApp = try await Self.refusal(server, TestAppAttestDevice(ca: fixture.ca, appID: "ZZZZZ99999.com.other.app"))
            #expect(otherApp.contains("(attestation.appIDMismatch)"), "\(otherApp)")
            let development = try await Self.refusal(server, TestAppAttestDevice(ca: fixture.ca, environment: .development))
            #expect(development.contains("(attestation.environmentNotAllowed)"), "\(development)")
            let software = try await Self.refusal(server, TestAndroidDevice(ca: fixture.ca, level: 0))
            #expect(software.contains("(attestation.securityLevelTooLow)"), "\(software)")
            let unlocked = try await Self.refusal(server, TestAndroidDevice(ca: fixture.ca, locked: false))
            #expect(unlocked.contains("(attestation.deviceUnlocked)"), "\(unlocked)")
            // Nothing was enrolled.
            #expect(try await server.adminClient.devices().isEmpty)
            // Development allowed: the same kind of key enrols.
            _ = try await server.adminClient.setAttestation(
                app: "test-app", DeviceFixture.settings(required: true, environments: ["production", "development"]))
            let enrolled = try await DeviceStoryTests.client(server, device: TestAppAttestDevice(ca: fixture.ca, environment: .development)).enrolDevice()
            #expect(enrolled.facts.environment == "development")
        }
    }

    @Test("another package or signer digest than the app's is refused")
    func androidIdentityMismatch() async throws {
        let fixture = try DeviceFixture()
        try await DeviceStoryTests.withServer(fixture: fixture) { server in
            var settings = DeviceFixture.settings(required: true)
            settings.androidPackage = "com.example.other"
            _ = try await server.adminClient.setAttestation(app: "test-app", settings)
            #expect(try await Self.refusal(server, TestAndroidDevice(ca: fixture.ca)).contains("(attestation.packageMismatch)"))
            settings = DeviceFixture.settings(required: true)
            settings.androidSigners = [String(repeating: "AB:", count: 31) + "AB"]
            let stored = try await server.adminClient.setAttestation(app: "test-app", settings)
            #expect(stored.attestation?.androidSigners == [String(repeating: "ab", count: 32)])
            #expect(try await Self.refusal(server, TestAndroidDevice(ca: fixture.ca)).contains("(attestation.signerMismatch)"))
        }
    }

    @Test("settings tightened after enrolment refuse the devices they no longer admit (403), until they enrol again (attack round)")
    func tightenedSettings() async throws {
        let fixture = try DeviceFixture()
        try await DeviceStoryTests.withServer(fixture: fixture) { server in
            let admin = try server.adminClient
            _ = try await admin.setAttestation(app: "test-app", DeviceFixture.settings(required: true, environments: ["production", "development"]))
            let development = TestAppAttestDevice(ca: fixture.ca, environment: .development)
            let apple = try DeviceStoryTests.client(server, device: development)
            try await apple.enrolDevice()
            let android = try DeviceStoryTests.client(server, device: TestAndroidDevice(ca: fixture.ca))
            try await android.enrolDevice()
            try await apple.register(email: "kim@example.com", password: "correct horse battery", displayName: "Kim")
            // Development builds no longer; StrongBox only.
            var tightened = DeviceFixture.settings(required: true)
            tightened.androidMinimumSecurity = "strongbox"
            _ = try await admin.setAttestation(app: "test-app", tightened)
            for (client, reason) in [(apple, "(environment)"), (android, "(security level)")] {
                let error = try await thrownAsync(ClientError.self) {
                    try await client.signIn(email: "kim@example.com", password: "correct horse battery")
                }
                guard case .revokedDevice(let detail) = error else { Issue.record("\(error)"); continue }
                #expect(detail.contains(reason), "\(detail)")
            }
            // Another package, another signer.
            var moved = DeviceFixture.settings(required: true)
            moved.androidSigners = [String(repeating: "22", count: 32)]
            _ = try await admin.setAttestation(app: "test-app", moved)
            let signer = try DeviceStoryTests.client(server, device: TestAndroidDevice(ca: fixture.ca))
            _ = try await admin.setAttestation(app: "test-app", DeviceFixture.settings(required: true))
            try await signer.enrolDevice()
            _ = try await admin.setAttestation(app: "test-app", moved)
            let error = try await thrownAsync(ClientError.self) { try await signer.signIn(email: "kim@example.com", password: "correct horse battery") }
            guard case .revokedDevice(let detail) = error else { Issue.record("\(error)"); return }
            #expect(detail.contains("(signer)"), "\(detail)")
        }
    }

    @Test("App IDs with an empty bundle label are refused")
    func appIDRules() throws {
        for appID in ["ABCDE12345..", "ABCDE12345.com..app", "ABCDE12345.com.app.", "ABCDE12345..com", "abcde12345.com.app", "ABCDE1234.com.app"] {
            #expect(throws: AdminAPI.AttestationSettings.Violation.self, "\(appID)") {
                try AdminAPI.AttestationSettings(appleAppId: appID).normalized()
            }
        }
        #expect(try AdminAPI.AttestationSettings(appleAppId: "ABCDE12345.com.example-app.ios").normalized().appleAppId == "ABCDE12345.com.example-app.ios")
    }

    @Test("a test-root attestation is refused by a server that trusts only Apple's and Google's roots")
    func untrustedRoot() async throws {
        let fixture = try DeviceFixture()
        try await TestServer.with { server in
            try await server.store.principals.setAttestation(app: "test-app", DeviceFixture.settings(required: true).normalized())
            let apple = try await Self.refusal(server, TestAppAttestDevice(ca: fixture.ca))
            #expect(apple.contains("(attestation.untrustedChain)"), "\(apple)")
            #expect(apple.count < 500, "a refusal's detail is bounded")
            let android = try await Self.refusal(server, TestAndroidDevice(ca: fixture.ca))
            #expect(android.contains("(attestation.untrustedChain)"), "\(android)")
        }
    }

    @Test("an app with no identity for the platform takes no devices of it (422 platform)")
    func platformNotConfigured() async throws {
        let fixture = try DeviceFixture()
        try await TestServer.with(configure: fixture.configure) { server in
            var androidOnly = DeviceFixture.settings(required: false)
            androidOnly.appleAppId = nil
            try await server.store.principals.setAttestation(app: "test-app", try androidOnly.normalized())
            let error = try await thrownAsync(ClientError.self) {
                try await DeviceStoryTests.client(server, device: TestAppAttestDevice(ca: fixture.ca)).enrolDevice()
            }
            guard case .refused(422, "server.unprocessable", let detail) = error else { Issue.record("\(error)"); return }
            #expect(detail.hasPrefix("platform: the app test-app has no Apple App ID"), "\(detail)")
        }
    }

    @Test("a device key may not call the admin API (403), and its signatures must name their scheme (401)")
    func deviceKeyLimits() async throws {
        let fixture = try DeviceFixture()
        try await DeviceStoryTests.withServer(fixture: fixture) { server in
            let device = TestAppAttestDevice(ca: fixture.ca)
            let enrolled = try await DeviceStoryTests.client(server, device: device).enrolDevice()
            let signing = HTTPMessageSigner(key: .custom(AssertionKey(device: device, name: DeviceAPI.appAttestAlgorithm)), keyID: enrolled.keyId)
            let admin = try await server.api.send(.get, "/v1/admin/apps", signer: signing)
            #expect(admin.status == 403 && admin.problemCode == "server.forbidden", "\(admin.text)")
            // The assertion bytes under another algorithm's name, or none.
            for name in ["ecdsa-p256-sha256", "x-other"] {
                let misnamed = HTTPMessageSigner(key: .custom(AssertionKey(device: device, name: name)), keyID: enrolled.keyId)
                let answer = try await server.api.send(.get, "/v1/trust", signer: misnamed)
                #expect(answer.status == 401 && answer.problemCode == "server.unauthorized", "\(name): \(answer.text)")
            }
            var request = try await server.api.request(.get, "/v1/trust", signer: signing)
            request.0.headerFields[.signatureInput] = request.0.headerFields[.signatureInput]?.replacingOccurrences(of: ";alg=\"apple-app-attest\"", with: "")
            let unnamed = try await server.api.send(request)
            #expect(unnamed.status == 401 && unnamed.problemCode == "server.unauthorized", "\(unnamed.text)")
            // The device still signs properly afterwards.
            #expect(try await server.api.send(.get, "/v1/trust", signer: signing).status == 200)
        }
    }
}

/// A test device's assertions as an HTTP signing key, under any `alg` name.
struct AssertionKey: HTTPSignatureProducing {
    let device: TestAppAttestDevice
    let name: String
    var algorithmName: String { name }
    var algorithm: SignatureAlgorithm { .ecdsaP256SHA256 }
    func sign(base: [UInt8]) async throws -> [UInt8] { try await device.sign(signatureBase: base) }
}
