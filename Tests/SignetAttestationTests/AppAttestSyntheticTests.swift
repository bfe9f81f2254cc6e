import Crypto
import Foundation
import SignetAttestation
import SignetAttestationTestSupport
import SignetCore
import SignetTestSupport
import Testing

@Suite("App Attest: synthetic attestations over a test root, for the failures no genuine sample shows")
struct AppAttestSyntheticTests {
    @Test("a well-made synthetic attestation verifies against its own root, and only with it")
    func syntheticVerifies() async throws {
        let made = try SyntheticAppAttest().make()
        let key = try await AppAttestVerifier(policy: try made.policy()).verifyAttestation(
            made.object, clientDataHash: SyntheticAppAttest().clientDataHash, keyID: made.keyID)
        #expect(key.keyID == made.keyID)
        #expect(key.environment == .production)
        #expect(key.receipt == Array("receipt".utf8))
        let apple = AppAttestVerifier(policy: try AppAttestPolicy(appID: "ABCDE12345.com.example.app"))
        let error = try await thrownAsync(AttestationError.self) {
            try await apple.verifyAttestation(made.object, clientDataHash: SyntheticAppAttest().clientDataHash)
        }
        #expect(error.code == "untrustedChain")
    }

    @Test("a new key's counter must be 0")
    func nonZeroCounter() async throws {
        var sample = SyntheticAppAttest()
        sample.counter = 1
        try await expectRefusal(sample, "counterNotZero")
    }

    @Test("the credential id must be the key id")
    func wrongCredentialID() async throws {
        var sample = SyntheticAppAttest()
        sample.credentialID = [UInt8](repeating: 0xAB, count: 32)
        try await expectRefusal(sample, "keyIDMismatch")
    }

    @Test("an intermediate that is not a CA breaks the chain")
    func intermediateNotCA() async throws {
        var sample = SyntheticAppAttest()
        sample.intermediateIsCA = false
        try await expectRefusal(sample, "untrustedChain")
    }

    @Test("a leaf without the nonce extension is refused")
    func missingNonceExtension() async throws {
        var sample = SyntheticAppAttest()
        sample.withNonceExtension = false
        try await expectRefusal(sample, "missingExtension")
    }

    @Test("bytes after the credential key: a few are accepted (as Apple sends), more are refused")
    func trailingBytes() async throws {
        var sample = SyntheticAppAttest()
        sample.trailing = CBORValue.map([CBORMapEntry(.text("apple_bundle_version_01"), .text("1"))]).encoded
        let made = try sample.make()
        _ = try await AppAttestVerifier(policy: try made.policy()).verifyAttestation(made.object, clientDataHash: sample.clientDataHash)
        sample.trailing = [UInt8](repeating: 0, count: 1025)
        let big = try sample.make()
        let error = try await thrownAsync(AttestationError.self) {
            try await AppAttestVerifier(policy: try big.policy()).verifyAttestation(big.object, clientDataHash: sample.clientDataHash)
        }
        #expect(error.code == "malformed")
        #expect(error.description.contains("1025 byte(s) follow"), "\(error)")
    }

    @Test("the development environment is refused unless allowed")
    func developmentRefusedByDefault() async throws {
        var sample = SyntheticAppAttest()
        sample.environment = .development
        let made = try sample.make()
        let productionOnly = try AppAttestPolicy(appID: "ABCDE12345.com.example.app", roots: [made.ca.root])
        let error = try await thrownAsync(AttestationError.self) {
            try await AppAttestVerifier(policy: productionOnly).verifyAttestation(made.object, clientDataHash: sample.clientDataHash)
        }
        #expect(error.code == "environmentNotAllowed")
    }

    @Test("an App ID that is not TEAMID.BUNDLEID is a usage error", arguments: ["com.example.app", "abcde12345.com.example.app", "ABCDE12345.", "ABCDE1234.x", "ABCDE12345.a b"])
    func badAppID(appID: String) throws {
        let error = try thrown(AttestationError.self) { try AppAttestPolicy(appID: appID) }
        #expect(error.code == "invalidArgument")
        #expect(error.category == .usage)
    }

    @Test("hostile objects are refused as malformed, never accepted", arguments: [
        ("empty", [UInt8]()), ("not a map", CBORValue.array([]).encoded),
        ("another format", CBORValue.map([CBORMapEntry(.text("fmt"), .text("packed"))]).encoded),
        ("deep nesting", [UInt8](repeating: 0x81, count: 100) + [0x00]), ("huge length", [0x5B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
        ("oversized", [UInt8](repeating: 0, count: 70_000)),
    ])
    func hostileObjects(name: String, bytes: [UInt8]) async throws {
        let verifier = AppAttestVerifier(policy: try AppAttestPolicy(appID: "ABCDE12345.com.example.app"))
        let error = try await thrownAsync(AttestationError.self) { try await verifier.verifyAttestation(bytes, clientDataHash: []) }
        #expect(error.category == .malformedInput, "\(name): \(error)")
    }

    @Test("Apple's root ships as data and loads")
    func appleRoot() {
        #expect(AppAttestRoots.apple.count == 1)
        #expect(AppAttestRoots.apple[0].subject.description.contains("Apple App Attestation Root CA"))
    }

    private func expectRefusal(_ sample: SyntheticAppAttest, _ code: SignetErrorCode<AttestationError>, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let made = try sample.make()
        let error = try await thrownAsync(AttestationError.self, sourceLocation: sourceLocation) {
            try await AppAttestVerifier(policy: try made.policy()).verifyAttestation(made.object, clientDataHash: sample.clientDataHash)
        }
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    }
}

@Suite("App Attest: synthetic assertions by a test device key")
struct AppAttestSyntheticAssertionTests {
    static let hash = Array(SHA256.hash(data: Array("GET /v1/me".utf8)))

    @Test("an assertion by the attested key verifies; the counter must grow; another key, another app or another hash is refused")
    func assertions() async throws {
        let made = try SyntheticAppAttest().make()
        let verifier = AppAttestVerifier(policy: try made.policy())
        let key = try await verifier.verifyAttestation(made.object, clientDataHash: SyntheticAppAttest().clientDataHash)
        var counter: UInt32 = 0
        for next: UInt32 in [1, 2, 7] {
            let assertion = try SyntheticAppAttestAssertion.make(key: made.key, clientDataHash: Self.hash, counter: next)
            counter = try verifier.verifyAssertion(assertion, clientDataHash: Self.hash, publicKey: key.publicKey, previousCounter: counter).counter
            #expect(counter == next)
        }
        let replay = try SyntheticAppAttestAssertion.make(key: made.key, clientDataHash: Self.hash, counter: 7)
        #expect(try thrown(AttestationError.self) {
            try verifier.verifyAssertion(replay, clientDataHash: Self.hash, publicKey: key.publicKey, previousCounter: counter)
        }.code == "counterNotIncreasing")
        let stranger = try SyntheticAppAttestAssertion.make(key: P256.Signing.PrivateKey(), clientDataHash: Self.hash, counter: 8)
        #expect(try thrown(AttestationError.self) {
            try verifier.verifyAssertion(stranger, clientDataHash: Self.hash, publicKey: key.publicKey, previousCounter: counter)
        }.code == "signatureInvalid")
        let otherApp = try SyntheticAppAttestAssertion.make(key: made.key, appID: "ABCDE12345.com.example.other", clientDataHash: Self.hash, counter: 8)
        #expect(try thrown(AttestationError.self) {
            try verifier.verifyAssertion(otherApp, clientDataHash: Self.hash, publicKey: key.publicKey, previousCounter: counter)
        }.code == "appIDMismatch")
        let good = try SyntheticAppAttestAssertion.make(key: made.key, clientDataHash: Self.hash, counter: 8)
        var otherHash = Self.hash
        otherHash[0] ^= 1
        #expect(try thrown(AttestationError.self) {
            try verifier.verifyAssertion(good, clientDataHash: otherHash, publicKey: key.publicKey, previousCounter: counter)
        }.code == "signatureInvalid")
    }
}
