import Foundation
import SignetAttestation
import SignetAttestationTestSupport
import SignetCore
import SignetTestSupport
import Testing

@Suite("App Attest: genuine attestations and assertions from Apple and real iPhones")
struct AppAttestGenuineTests {
    static let attestations = AppAttestSample.all("attestation")
    static let assertions = AppAttestSample.all("assertion")

    @Test("the vector folder holds the collected samples")
    func samplesAreThere() {
        #expect(Self.attestations.count >= 20)
        #expect(Self.assertions.count >= 10)
    }

    @Test("every genuine attestation verifies at its time with the facts it carries", arguments: attestations)
    func genuineAttestationVerifies(sample: AppAttestSample) async throws {
        let verifier = AppAttestVerifier(policy: try sample.policy())
        let key = try await verifier.verifyAttestation(
            try sample.object(), clientDataHash: try sample.clientDataHash(), keyID: try sample.keyID(), at: try sample.time())
        #expect(key.environment.rawValue == sample.environment)
        #expect(key.appID == sample.appId)
        #expect(key.counter == 0)
        #expect(key.keyID.count == 32)
        if let given = try sample.keyID() { #expect(key.keyID == given) }
        #expect(!key.receipt.isEmpty)
        #expect(key.chain.count == 3)
        #expect(key.publicKey.kind == .p256)
    }

    @Test("every genuine attestation is refused once its leaf has expired (today)", arguments: attestations)
    func expiredLeafIsRefused(sample: AppAttestSample) async throws {
        let verifier = AppAttestVerifier(policy: try sample.policy())
        let error = try await thrownAsync(AttestationError.self) {
            try await verifier.verifyAttestation(
                try sample.object(), clientDataHash: try sample.clientDataHash(), at: Date(timeIntervalSince1970: 4_102_444_800))
        }
        #expect(error.code == "untrustedChain", "\(error)")
    }

    @Test("one input changed: the challenge, the App ID, the environment, the key id, the root", arguments: [
        "veehaitch-ios-14.4", "apple-docs-example-2026", "uebelack-production",
    ])
    func alteredInputsAreRefused(name: String) async throws {
        let sample = try #require(Self.attestations.first { $0.name == name })
        let object = try sample.object()
        let hash = try sample.clientDataHash()
        let time = try sample.time()
        let verifier = AppAttestVerifier(policy: try sample.policy())

        var otherHash = hash
        otherHash[0] ^= 1
        let challenge = try await thrownAsync(AttestationError.self) { try await verifier.verifyAttestation(object, clientDataHash: otherHash, at: time) }
        #expect(challenge.code == "nonceMismatch")

        let otherApp = AppAttestVerifier(policy: try AppAttestPolicy(appID: "ABCDE12345.com.example.other", environments: [.development, .production]))
        let app = try await thrownAsync(AttestationError.self) { try await otherApp.verifyAttestation(object, clientDataHash: hash, at: time) }
        #expect(app.code == "appIDMismatch")
        #expect(app.description.contains("ABCDE12345.com.example.other"))

        let made = try #require(sample.environment.flatMap(AppAttestEnvironment.init(rawValue:)))
        let other: AppAttestEnvironment = made == .production ? .development : .production
        let strict = AppAttestVerifier(policy: try sample.policy(environments: [other]))
        let environment = try await thrownAsync(AttestationError.self) { try await strict.verifyAttestation(object, clientDataHash: hash, at: time) }
        #expect(environment.code == "environmentNotAllowed")
        #expect(environment.description.contains(made.rawValue))

        let wrongID = [UInt8](repeating: 7, count: 32)
        let keyID = try await thrownAsync(AttestationError.self) {
            try await verifier.verifyAttestation(object, clientDataHash: hash, keyID: wrongID, at: time)
        }
        #expect(keyID.code == "keyIDMismatch")

        let testRoot = try AttestationTestCA.make().root
        let rooted = AppAttestVerifier(policy: try AppAttestPolicy(appID: sample.appId, environments: [made], roots: [testRoot]))
        let root = try await thrownAsync(AttestationError.self) { try await rooted.verifyAttestation(object, clientDataHash: hash, at: time) }
        #expect(root.code == "untrustedChain")

        // A byte of the map's head, of the leaf certificate, of authData (the object's end).
        // The receipt is not checked here: it is kept for Apple's fraud-risk service, which does.
        for index in [0, 100, 600, object.count - 1] {
            var tampered = object
            tampered[index] ^= 0x01
            do {
                _ = try await verifier.verifyAttestation(tampered, clientDataHash: hash, at: time)
                Issue.record("\(name): a flipped byte at \(index) was accepted")
            } catch let error as AttestationError {
                #expect(!error.description.isEmpty)
            }
        }
    }

    @Test("every genuine assertion verifies with its key, and is refused as a replay at its own counter", arguments: assertions)
    func genuineAssertionVerifies(sample: AppAttestSample) throws {
        let verifier = AppAttestVerifier(policy: try sample.policy())
        let key = try sample.publicKey()
        let counter = try #require(sample.counter)
        let assertion = try verifier.verifyAssertion(try sample.object(), clientDataHash: try sample.clientDataHash(), publicKey: key, previousCounter: counter - 1)
        #expect(assertion.counter == counter)

        let replay = try thrown(AttestationError.self) {
            try verifier.verifyAssertion(try sample.object(), clientDataHash: try sample.clientDataHash(), publicKey: key, previousCounter: counter)
        }
        #expect(replay.code == "counterNotIncreasing")

        var otherHash = try sample.clientDataHash()
        otherHash[31] ^= 0x80
        let forged = try thrown(AttestationError.self) {
            try verifier.verifyAssertion(try sample.object(), clientDataHash: otherHash, publicKey: key, previousCounter: 0)
        }
        #expect(forged.code == "signatureInvalid")

        let otherApp = AppAttestVerifier(policy: try AppAttestPolicy(appID: "ABCDE12345.com.example.other"))
        let app = try thrown(AttestationError.self) {
            try otherApp.verifyAssertion(try sample.object(), clientDataHash: try sample.clientDataHash(), publicKey: key, previousCounter: 0)
        }
        #expect(app.code == "appIDMismatch")
    }

    @Test("an assertion verifies only with the key its attestation certified")
    func assertionBelongsToItsAttestation() async throws {
        for assertion in Self.assertions {
            guard let attestationFile = assertion.belongs_to_attestation,
                let attestation = Self.attestations.first(where: { $0.file == attestationFile })
            else { continue }
            let verifier = AppAttestVerifier(policy: try attestation.policy())
            let key = try await verifier.verifyAttestation(try attestation.object(), clientDataHash: try attestation.clientDataHash(), at: try attestation.time())
            let checked = try verifier.verifyAssertion(
                try assertion.object(), clientDataHash: try assertion.clientDataHash(), publicKey: key.publicKey, previousCounter: key.counter)
            #expect(checked.counter == assertion.counter)
        }
    }
}
