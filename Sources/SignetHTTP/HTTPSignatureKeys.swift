import SignetCore

/// The algorithms of RFC 9421's registry that Signet signs and verifies HTTP messages with.
public enum HTTPSignatureAlgorithms {
    /// `hmac-sha256`, `rsa-pss-sha512`, `rsa-v1_5-sha256`, `ecdsa-p256-sha256`,
    /// `ecdsa-p384-sha384`, `ed25519`.
    public static let supported: [SignatureAlgorithm] = [
        .hmacSHA256, .rsaPSSSHA512, .rsaPKCS1v15SHA256, .ecdsaP256SHA256, .ecdsaP384SHA384, .ed25519,
    ]

    /// Parses an `alg` value or `-a` argument, refusing names outside RFC 9421's registry.
    public static func parse(_ name: String) throws -> SignatureAlgorithm {
        guard let algorithm = SignatureAlgorithm(rawValue: name), supported.contains(algorithm) else {
            throw HTTPSignatureError.unsupportedAlgorithm(name)
        }
        return algorithm
    }

    /// The RFC 9421 algorithm for a public key: RSA keys get `rsa-pss-sha512` unless asked otherwise.
    public static func `default`(for kind: KeyKind) -> SignatureAlgorithm {
        switch kind {
        case .rsa: return .rsaPSSSHA512
        case .p256: return .ecdsaP256SHA256
        case .p384: return .ecdsaP384SHA384
        case .ed25519: return .ed25519
        }
    }
}

/// What signs an HTTP message: a ``Signer`` (any private key, in software or on a token) or
/// a shared HMAC secret.
public enum HTTPSigningKey: Sendable {
    /// A public-key signer; its algorithm must be one of ``HTTPSignatureAlgorithms/supported``.
    case signer(any Signer)
    /// A shared secret for `hmac-sha256`.
    case hmacSHA256(SecretBytes)

    /// The algorithm the key signs with.
    public var algorithm: SignatureAlgorithm {
        switch self {
        case .signer(let signer): return signer.algorithm
        case .hmacSHA256: return .hmacSHA256
        }
    }

    /// The key id to use when none is given: the public key's fingerprint; nil for HMAC.
    public var defaultKeyID: String? {
        if case .signer(let signer) = self { return signer.publicKey.fingerprint.description }
        return nil
    }

    /// Signs a signature base, in the encoding RFC 9421 §3.3 gives each algorithm (ECDSA as
    /// the raw `r‖s`, not DER).
    func sign(_ base: [UInt8]) async throws -> [UInt8] {
        switch self {
        case .hmacSHA256(let secret):
            var mac = try MessageAuthenticator(algorithm: .hmacSHA256, key: secret)
            mac.update(base)
            return mac.finalize()
        case .signer(let signer):
            guard HTTPSignatureAlgorithms.supported.contains(signer.algorithm) else {
                throw HTTPSignatureError.unsupportedAlgorithm(signer.algorithm.rawValue)
            }
            return try signer.algorithm.rawSignature(fromDER: try await signer.sign(message: base))
        }
    }
}

/// What verifies an HTTP message signature: a public key pinned with its algorithm, or a
/// shared HMAC secret. The algorithm comes from the key, never from the message.
public enum HTTPVerificationKey: Sendable {
    /// A public key and the one algorithm it is used with.
    case publicKey(PublicKey, SignatureAlgorithm)
    /// A shared secret for `hmac-sha256`.
    case hmacSHA256(SecretBytes)

    /// A public key with the algorithm RFC 9421 gives its kind by default (RSA: `rsa-pss-sha512`).
    public static func publicKey(_ key: PublicKey) -> HTTPVerificationKey {
        .publicKey(key, HTTPSignatureAlgorithms.default(for: key.kind))
    }

    /// The algorithm signatures under this key must use.
    public var algorithm: SignatureAlgorithm {
        switch self {
        case .publicKey(_, let algorithm): return algorithm
        case .hmacSHA256: return .hmacSHA256
        }
    }

    /// Checks `signature` over `base`; throws ``HTTPSignatureError/signatureInvalid(label:)``.
    func verify(_ signature: [UInt8], base: [UInt8], label: String) throws {
        switch self {
        case .hmacSHA256(let secret):
            guard var mac = try? MessageAuthenticator(algorithm: .hmacSHA256, key: secret) else { throw HTTPSignatureError.signatureInvalid(label: label) }
            mac.update(base)
            guard mac.matches(signature) else { throw HTTPSignatureError.signatureInvalid(label: label) }
        case .publicKey(let key, let algorithm):
            guard HTTPSignatureAlgorithms.supported.contains(algorithm), algorithm.fits(key.kind) else {
                throw HTTPSignatureError.algorithmMismatch(declared: algorithm.rawValue, key: key.kind.description)
            }
            do {
                try PublicKeyVerifier(key: key, algorithm: algorithm).verify(rawSignature: signature, message: base)
            } catch {
                throw HTTPSignatureError.signatureInvalid(label: label)
            }
        }
    }
}

