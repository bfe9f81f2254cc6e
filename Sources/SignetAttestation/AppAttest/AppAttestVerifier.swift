import Crypto
import SignetCore
import SignetX509
import SwiftASN1
import X509

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A key App Attest certified: what the server keeps to check the device's assertions.
public struct AppAttestedKey: Sendable {
    /// The key identifier: SHA-256 of the key's uncompressed point (the credential id).
    public let keyID: [UInt8]
    /// The device's P-256 public key.
    public let publicKey: PublicKey
    /// The environment the key was made in.
    public let environment: AppAttestEnvironment
    /// The App ID the key belongs to.
    public let appID: String
    /// The counter (0 for a new key); assertions must count up from it.
    public let counter: UInt32
    /// Apple's receipt (a CMS message), kept for later fraud-risk checks with Apple.
    public let receipt: [UInt8]
    /// The validated chain, leaf first, root last.
    public let chain: [Certificate]
}

/// Verifies App Attest attestations (Apple's "Validating apps that connect to your server",
/// steps 1–9) and the assertions made with attested keys.
public struct AppAttestVerifier: Sendable {
    /// What attestations and assertions must satisfy.
    public let policy: AppAttestPolicy

    /// The OID of the extension that carries the attestation's nonce.
    public static let nonceExtensionOID: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 8, 2]
    /// The largest attestation object read (genuine ones are about 5–6 KiB).
    public static let maximumObjectSize = 64 * 1024

    /// A verifier for `policy`.
    public init(policy: AppAttestPolicy) {
        self.policy = policy
    }

    /// Verifies an attestation object made over `clientDataHash` (the SHA-256 of the
    /// challenge's client data, or the exact bytes the app passed to `attestKey`), at `time`.
    /// When `keyID` is given (as the app reports it), it must be the attested key's.
    /// - Throws: ``AttestationError``, naming the check that failed.
    public func verifyAttestation(
        _ object: [UInt8], clientDataHash: [UInt8], keyID: [UInt8]? = nil, at time: Date = Date(), source: String = "the attestation"
    ) async throws -> AppAttestedKey {
        let statement = try AppAttestObject(object, source: source, maximumTrailingBytes: policy.maximumTrailingAuthDataBytes)
        // 1. The chain leads to a root of the policy, at `time`.
        let chain: [Certificate]
        do {
            chain = try await ChainVerifier(anchors: .certificates(policy.roots), validationTime: time)
                .verify(leaf: statement.certificates[0], intermediates: Array(statement.certificates.dropFirst()), purpose: .any)
        } catch let error as X509Error {
            throw AttestationError.untrustedChain(source: source, reason: error)
        }
        let leaf = chain[0]
        // 2–4. The certificate's nonce is SHA-256(authData ‖ clientDataHash).
        let nonce = SHA256.hash(data: statement.authData.bytes + clientDataHash)
        guard ConstantTime.equals(try Self.certifiedNonce(leaf, source: source), Array(nonce)) else {
            throw AttestationError.nonceMismatch(
                source: source, detail: "the certificate's nonce is not SHA-256 of the authenticator data and this client data hash (another challenge?)")
        }
        // 5. The key id is SHA-256 of the certificate's key.
        guard let leafKey = P256.Signing.PublicKey(leaf.publicKey) else {
            throw AttestationError.keyIDMismatch(source: source, detail: "the certificate's key is not a P-256 key")
        }
        let point = Array(leafKey.x963Representation)
        let certifiedID = Array(SHA256.hash(data: point))
        if let keyID, !ConstantTime.equals(keyID, certifiedID) {
            throw AttestationError.keyIDMismatch(source: source, detail: "the key id given is not SHA-256 of the certified key")
        }
        // 6. The relying party id hash is SHA-256 of the App ID.
        guard ConstantTime.equals(statement.authData.rpIDHash, policy.appIDHash) else {
            throw AttestationError.appIDMismatch(source: source, expected: policy.appID)
        }
        // 7. A new key's counter is 0.
        guard statement.authData.signCount == 0 else {
            throw AttestationError.counterNotZero(source: source, counter: statement.authData.signCount)
        }
        // 8. The AAGUID names an environment the policy allows.
        guard let credential = statement.authData.attestedCredential else {
            throw AttestationError.malformed(source: source, detail: "the authenticator data carries no attested credential")
        }
        guard let environment = AppAttestEnvironment(aaguid: credential.aaguid) else {
            throw AttestationError.environmentNotAllowed(
                source: source, environment: "unknown (AAGUID \(Hex.encode(credential.aaguid)))", allowed: allowedText)
        }
        guard policy.environments.contains(environment) else {
            throw AttestationError.environmentNotAllowed(source: source, environment: environment.rawValue, allowed: allowedText)
        }
        // 9. The credential id is the key id, and the credential key the certified key.
        guard ConstantTime.equals(credential.credentialID, certifiedID) else {
            throw AttestationError.keyIDMismatch(source: source, detail: "the credential id is not SHA-256 of the certified key")
        }
        guard credential.publicKey.key.spkiDER == Array(leafKey.derRepresentation) else {
            throw AttestationError.keyIDMismatch(source: source, detail: "the credential's public key is not the certified key")
        }
        return AppAttestedKey(
            keyID: certifiedID, publicKey: credential.publicKey.key, environment: environment, appID: policy.appID, counter: 0,
            receipt: statement.receipt, chain: chain)
    }

    private var allowedText: String { policy.environments.sorted().map(\.rawValue).joined(separator: ", ") }

    /// The nonce in the certificate's extension 1.2.840.113635.100.8.2:
    /// `SEQUENCE { [1] EXPLICIT OCTET STRING }`.
    static func certifiedNonce(_ leaf: Certificate, source: String) throws -> [UInt8] {
        guard let value = leaf.extensions.first(where: { $0.oid == nonceExtensionOID })?.value else {
            throw AttestationError.missingExtension(source: source, oid: "1.2.840.113635.100.8.2 (the nonce)")
        }
        do {
            return try DER.sequence(try DER.parse(value), identifier: .sequence) { nodes in
                let nonce = try DER.explicitlyTagged(&nodes, tagNumber: 1, tagClass: .contextSpecific) { try ASN1OctetString(derEncoded: $0) }
                return Array(nonce.bytes)
            }
        } catch {
            throw AttestationError.malformed(source: source, detail: "the nonce extension is not SEQUENCE { [1] OCTET STRING }: \(AttestationError.describe(error))")
        }
    }
}
