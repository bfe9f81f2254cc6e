import SignetCore
import SwiftASN1
import X509

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Any SignetCore ``Signer`` (a key file, a vault key, a token key) as swift-certificates'
/// `CustomPrivateKey`, so every certificate and CSR Signet makes is signed through the seam.
///
/// Signing is asynchronous only: a token may take its time. The private key itself is never
/// serialised through this type.
public struct SignerPrivateKey: CustomPrivateKey {
    /// The signer every signature is asked of.
    public let signer: any Signer
    /// The signer's public key as swift-certificates holds it.
    public let publicKey: Certificate.PublicKey
    /// The one algorithm this key signs with: the signer's.
    public let defaultSignatureAlgorithm: Certificate.SignatureAlgorithm

    /// Wraps `signer`; refuses algorithms an X.509 signature cannot carry here (RSA-PSS, MACs).
    public init(_ signer: any Signer) throws {
        self.signer = signer
        self.defaultSignatureAlgorithm = try Self.certificateAlgorithm(for: signer.algorithm)
        do {
            self.publicKey = try Certificate.PublicKey(derEncoded: signer.publicKey.spkiDER)
        } catch {
            throw X509Error.unsupported(source: "the signing key", detail: "its public key cannot go into a certificate (\(error))")
        }
    }

    /// The X.509 algorithm for a Signet algorithm.
    public static func certificateAlgorithm(for algorithm: SignatureAlgorithm) throws -> Certificate.SignatureAlgorithm {
        switch algorithm {
        case .rsaPKCS1v15SHA256: return .sha256WithRSAEncryption
        case .rsaPKCS1v15SHA512: return .sha512WithRSAEncryption
        case .ecdsaP256SHA256: return .ecdsaWithSHA256
        case .ecdsaP384SHA384: return .ecdsaWithSHA384
        case .ed25519: return .ed25519
        case .rsaPSSSHA256, .rsaPSSSHA512:
            throw X509Error.unsupported(source: "the signing key", detail: "RSA-PSS certificate signatures (use rsa-v1_5-sha256 for RSA keys)")
        case .hmacSHA256, .hmacSHA512:
            throw X509Error.unsupported(source: "the signing key", detail: "an HMAC key cannot sign certificates")
        }
    }

    /// The algorithm a certificate or CSR is signed with for a key of `kind`: the key's
    /// default, except RSA, which X.509 signs with PKCS#1 v1.5 and SHA-256 (as openssl does).
    public static func preferredAlgorithm(for kind: KeyKind) -> SignatureAlgorithm {
        kind.family == "rsa" ? .rsaPKCS1v15SHA256 : kind.defaultAlgorithm
    }

    /// The one algorithm this key supports.
    public var supportedSignatureAlgorithms: [Certificate.SignatureAlgorithm] { [defaultSignatureAlgorithm] }

    /// Refused: a signer may wait for a token, so only ``signAsynchronously(bytes:signatureAlgorithm:)`` signs.
    public func signSynchronously(bytes: some DataProtocol, signatureAlgorithm: Certificate.SignatureAlgorithm) throws -> Certificate.Signature {
        throw X509Error.unsupported(source: "the signing key", detail: "it signs asynchronously only")
    }

    /// Signs `bytes` through the signer.
    public func signAsynchronously(
        bytes: some DataProtocol & Sendable, signatureAlgorithm: Certificate.SignatureAlgorithm
    ) async throws -> Certificate.Signature {
        guard signatureAlgorithm == defaultSignatureAlgorithm else {
            throw X509Error.unsupported(source: "the signing key", detail: "it signs with \(defaultSignatureAlgorithm), not \(signatureAlgorithm)")
        }
        let signature = try await signer.sign(message: Array(bytes))
        return try Certificate.Signature(signatureAlgorithm: signatureAlgorithm, signatureBytes: ASN1BitString(bytes: signature[...]))
    }

    /// The PEM label; never used, since the key is not serialised.
    public static var defaultPEMDiscriminator: String { "PRIVATE KEY" }

    /// Refused: the private key stays where the signer keeps it.
    public func serialize(into coder: inout DER.Serializer) throws {
        throw X509Error.unsupported(source: "the signing key", detail: "a signer's private key is not exported")
    }

    /// Equal when the public keys are.
    public static func == (lhs: SignerPrivateKey, rhs: SignerPrivateKey) -> Bool {
        lhs.signer.publicKey.spkiDER == rhs.signer.publicKey.spkiDER && lhs.signer.algorithm == rhs.signer.algorithm
    }

    /// Hashes the public key.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(signer.publicKey.spkiDER)
        hasher.combine(signer.algorithm)
    }
}
