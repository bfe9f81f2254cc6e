import Crypto
import CryptoExtras

/// A ``Verifier`` over a public key.
///
/// ECDSA signatures are DER-encoded, as `openssl dgst` writes them. RSA-PSS signatures must
/// use a salt as long as the digest (openssl's `-sigopt rsa_pss_saltlen:digest`); that rule
/// is enforced on verification too, so the failure message explains it.
public struct PublicKeyVerifier: Verifier {
    /// The public key signatures are checked against.
    public let key: PublicKey
    /// The one algorithm accepted; it fits ``key``.
    public let algorithm: SignatureAlgorithm

    /// Pairs a key with an algorithm; nil `algorithm` picks the key's default.
    public init(key: PublicKey, algorithm: SignatureAlgorithm? = nil) throws {
        let chosen = algorithm ?? key.kind.defaultAlgorithm
        try chosen.requireFits(key.kind)
        self.key = key
        self.algorithm = chosen
    }

    /// Checks `signature` over `digest`, which must be of ``algorithm``'s hash (so never for
    /// Ed25519, which signs the message itself).
    public func verify(signature: [UInt8], digest: MessageDigest) throws {
        guard let expected = algorithm.digest, digest.algorithm == expected else {
            throw SignetCoreError.invalidArgument(detail: "\(algorithm.rawValue) cannot check a \(digest.algorithm.rawValue) digest")
        }
        let valid: Bool
        switch (key.storage, digest.concrete) {
        case (.rsa(let k), .sha256(let d)):
            try checkRSALength(signature, k)
            valid = k.isValidSignature(.init(rawRepresentation: signature), for: d, padding: algorithm.rsaPadding)
        case (.rsa(let k), .sha512(let d)):
            try checkRSALength(signature, k)
            valid = k.isValidSignature(.init(rawRepresentation: signature), for: d, padding: algorithm.rsaPadding)
        case (.p256(let k), .sha256(let d)):
            guard let parsed = try? P256.Signing.ECDSASignature(derRepresentation: signature) else { throw notDER() }
            valid = k.isValidSignature(parsed, for: d)
        case (.p384(let k), .sha384(let d)):
            guard let parsed = try? P384.Signing.ECDSASignature(derRepresentation: signature) else { throw notDER() }
            valid = k.isValidSignature(parsed, for: d)
        default:
            throw SignetCoreError.algorithmMismatch(algorithm: algorithm.rawValue, keyDescription: key.kind.description, hint: "")
        }
        guard valid else { throw invalid() }
    }

    /// Checks `signature` over a whole message: Ed25519 checks the message as it is, every other
    /// algorithm its digest.
    public func verify(signature: [UInt8], message: [UInt8]) throws {
        guard case .ed25519(let k) = key.storage else {
            try verify(signature: signature, digest: algorithm.digest!.hash(message))
            return
        }
        guard signature.count == 64 else {
            throw SignetCoreError.signatureInvalid(detail: "an Ed25519 signature is 64 bytes; this one has \(signature.count)")
        }
        guard k.isValidSignature(signature, for: message) else { throw invalid() }
    }

    /// Checks `signature` over a whole message, an ECDSA signature being in the raw `r‖s` form
    /// (RFC 9421, JOSE and COSE use it) rather than DER; other algorithms' signatures are as
    /// ``verify(signature:message:)`` takes them. The raw form is checked as it is, with no
    /// conversion to DER and back.
    public func verify(rawSignature signature: [UInt8], message: [UInt8]) throws {
        let valid: Bool
        switch (key.storage, algorithm) {
        case (.p256(let k), .ecdsaP256SHA256):
            guard let parsed = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { throw notRaw(64, signature.count) }
            valid = k.isValidSignature(parsed, for: SHA256.hash(data: message))
        case (.p384(let k), .ecdsaP384SHA384):
            guard let parsed = try? P384.Signing.ECDSASignature(rawRepresentation: signature) else { throw notRaw(96, signature.count) }
            valid = k.isValidSignature(parsed, for: SHA384.hash(data: message))
        default:
            return try verify(signature: signature, message: message)
        }
        guard valid else { throw invalid() }
    }

    private func notRaw(_ length: Int, _ count: Int) -> SignetCoreError {
        .signatureInvalid(detail: "a raw \(algorithm.rawValue) signature (r‖s) is \(length) bytes; this one has \(count)")
    }

    private func checkRSALength(_ signature: [UInt8], _ key: _RSA.Signing.PublicKey) throws {
        let expected = (key.keySizeInBits + 7) / 8
        guard signature.count == expected else {
            throw SignetCoreError.signatureInvalid(
                detail: "an RSA-\(key.keySizeInBits) signature is \(expected) bytes; this one has \(signature.count) (is it base64 text? decode it first)")
        }
    }

    private func notDER() -> SignetCoreError {
        .signatureInvalid(detail: "the signature is not a DER-encoded ECDSA signature (as `openssl dgst -sign` writes)")
    }

    private func invalid() -> SignetCoreError {
        switch algorithm {
        case .rsaPSSSHA256, .rsaPSSSHA512:
            return .signatureInvalid(
                detail: "signature is not valid (\(algorithm.rawValue) with a salt as long as the digest). If it was made by openssl with its default maximum-length salt, it cannot be checked; make a compatible one with `openssl dgst -\(algorithm.digest!.rawValue) -sign KEY -sigopt rsa_padding_mode:pss -sigopt rsa_pss_saltlen:digest`")
        default:
            return .signatureInvalid(detail: "signature is not valid (\(algorithm.rawValue), key \(key.fingerprint))")
        }
    }
}
