import Crypto
import Foundation
import SignetAttestation
import SignetAttestationTestSupport
import SignetCore
import SignetTestSupport
import SwiftASN1
import Testing
import X509

/// Synthetic Android chains over the test CA: the failures no genuine sample shows.
@Suite("Android key attestation: synthetic chains over a test root")
struct AndroidSyntheticTests {
    static let challenge = Array("synthetic challenge".utf8)

    static func keyDescription(level: Int = 1, challenge: [UInt8] = challenge, locked: Bool = true) throws -> [UInt8] {
        try SyntheticKeyDescription.make(level: level, challenge: challenge, locked: locked)
    }

    /// A chain leaf → intermediate → root of the test CA, the leaf carrying `description`.
    static func chain(description: [UInt8]?, intermediateIsCA: Bool = true) throws -> (chain: [Certificate], ca: AttestationTestCA) {
        let ca = try AttestationTestCA.make(intermediateIsCA: intermediateIsCA)
        let extensions = description.map { [Certificate.Extension(oid: AndroidAttestationVerifier.keyDescriptionOID, critical: false, value: $0[...])] } ?? []
        let leaf = try ca.leaf(key: .init(P256.Signing.PrivateKey().publicKey), extensions: extensions)
        return ([leaf, ca.intermediate, ca.root], ca)
    }

    static func verify(_ made: (chain: [Certificate], ca: AttestationTestCA), minimum: AndroidSecurityLevel = .trustedEnvironment) throws -> AndroidAttestation {
        let policy = AndroidAttestationPolicy(challenge: challenge, packageName: "com.example.app", signerDigests: [[UInt8](repeating: 0x11, count: 32)],
                                              minimumSecurityLevel: minimum, roots: [made.ca.root])
        return try AndroidAttestationVerifier(policy: policy).verify(chain: made.chain)
    }

    @Test("a well-made synthetic chain verifies with its facts")
    func syntheticVerifies() throws {
        let attestation = try Self.verify(try Self.chain(description: try Self.keyDescription()))
        #expect(attestation.securityLevel == .trustedEnvironment)
        #expect(attestation.application?.packages.map(\.name) == ["com.example.app"])
        #expect(attestation.application?.packages.map(\.version) == [7])
        #expect(attestation.rootOfTrust?.deviceLocked == true)
    }

    @Test("a software key is refused by default, and accepted only when the policy allows software")
    func softwareLevel() throws {
        let made = try Self.chain(description: try Self.keyDescription(level: 0))
        let error = try thrown(AttestationError.self) { try Self.verify(made) }
        #expect(error.code == "securityLevelTooLow")
        #expect(error.description.contains("Software"))
        _ = try Self.verify(made, minimum: .software)
    }

    @Test("an unlocked bootloader is refused")
    func unlocked() throws {
        let error = try thrown(AttestationError.self) { try Self.verify(try Self.chain(description: try Self.keyDescription(locked: false))) }
        #expect(error.code == "deviceUnlocked")
    }

    @Test("a leaf without the key description is refused")
    func missingKeyDescription() throws {
        let error = try thrown(AttestationError.self) { try Self.verify(try Self.chain(description: nil)) }
        #expect(error.code == "missingExtension")
    }

    @Test("a certificate above the attestation key that is not a CA breaks the chain; the attestation key itself need not be one")
    func notCA() throws {
        // root → A (not a CA) → B (the attestation key, not a CA) → leaf: A at index 2 is refused.
        let ca = try AttestationTestCA.make(intermediateIsCA: false)
        let bKey = P256.Signing.PrivateKey()
        let bName = try DistinguishedName { CommonName("attestation key") }
        let b = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(bKey.publicKey), notValidBefore: ca.notBefore,
            notValidAfter: ca.notBefore.addingTimeInterval(86_400 * 30), issuer: ca.intermediate.subject, subject: bName,
            signatureAlgorithm: .ecdsaWithSHA256, extensions: Certificate.Extensions(), issuerPrivateKey: .init(ca.intermediateKey))
        let description = try Self.keyDescription()
        let leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(P256.Signing.PrivateKey().publicKey), notValidBefore: ca.notBefore,
            notValidAfter: ca.notBefore.addingTimeInterval(86_400 * 30), issuer: bName, subject: try DistinguishedName { CommonName("leaf") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions([Certificate.Extension(oid: AndroidAttestationVerifier.keyDescriptionOID, critical: false, value: description[...])]),
            issuerPrivateKey: .init(bKey))
        let verifier = AndroidAttestationVerifier(policy: AndroidAttestationPolicy(challenge: Self.challenge, roots: [ca.root]))
        let error = try thrown(AttestationError.self) { try verifier.verify(chain: [leaf, b, ca.intermediate, ca.root]) }
        #expect(error.code == "untrustedChain")
        #expect(error.description.contains("not a CA"), "\(error)")
        // B signing the leaf directly under a CA intermediate is accepted (Sony's devices do so).
        let good = try AttestationTestCA.make()
        let b2 = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(bKey.publicKey), notValidBefore: good.notBefore,
            notValidAfter: good.notBefore.addingTimeInterval(86_400 * 30), issuer: good.intermediate.subject, subject: bName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions { Critical(BasicConstraints.notCertificateAuthority) }, issuerPrivateKey: .init(good.intermediateKey))
        _ = try AndroidAttestationVerifier(policy: AndroidAttestationPolicy(challenge: Self.challenge, roots: [good.root]))
            .verify(chain: [leaf, b2, good.intermediate, good.root])
    }

    @Test("hostile key descriptions are refused as malformed", arguments: [
        [UInt8](), [0x30, 0x00], [0x30, 0x03, 0x02, 0x01, 0x03], [UInt8](repeating: 0x30, count: 100),
    ])
    func hostileKeyDescription(bytes: [UInt8]) throws {
        let error = try thrown(AttestationError.self) { try Self.verify(try Self.chain(description: bytes)) }
        #expect(error.code == "malformed", "\(error)")
    }

    @Test("chain files: PEM, concatenated DER, and hostile input", arguments: ["pem", "der", "garbage", "truncated", "empty"])
    func chainFiles(kind: String) throws {
        let made = try Self.chain(description: try Self.keyDescription())
        let ders = try made.chain.map { certificate -> [UInt8] in
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            return serializer.serializedBytes
        }
        switch kind {
        case "pem":
            let pem = try made.chain.map { try $0.serializeAsPEM().pemString }.joined(separator: "\n")
            #expect(try AndroidAttestationVerifier.readChain(Array(pem.utf8), source: "chain.pem") == made.chain)
        case "der":
            #expect(try AndroidAttestationVerifier.readChain(ders.flatMap { $0 }, source: "chain.der") == made.chain)
        default:
            let bytes: [UInt8] = kind == "garbage" ? Array("hello".utf8) : kind == "truncated" ? Array(ders[0].dropLast()) : []
            let error = try thrown(AttestationError.self) { try AndroidAttestationVerifier.readChain(bytes, source: "chain") }
            #expect(error.category == .malformedInput || error.code == "missingCertificate", "\(error)")
        }
    }
}
