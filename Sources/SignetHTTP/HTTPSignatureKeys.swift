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

/// A signature scheme outside RFC 9421's registry, verified by the application: the
/// `Signature` member is whatever the scheme defines (an App Attest assertion, say), checked
/// by ``verify(signature:base:)`` over the signature base.
///
/// The message's `alg` parameter is required for such a key and must equal
/// ``algorithmName``: the bytes are not a raw signature of the primitive underneath, and a
/// verifier must never be led to take them as one.
public protocol HTTPSignatureVerifying: Sendable {
    /// The `alg` value this scheme answers to, e.g. `apple-app-attest`.
    var algorithmName: String { get }
    /// The primitive underneath, for reports (``VerifiedHTTPSignature/algorithm``).
    var algorithm: SignatureAlgorithm { get }
    /// Checks `signature` over `base`. Returns the scheme's signature counter when it has one
    /// (the caller keeps it growing), nil otherwise. An ``HTTPSignatureError`` thrown here
    /// reaches the caller as it is; any other error becomes
    /// ``HTTPSignatureError/signatureInvalid(label:)``.
    func verify(signature: [UInt8], base: [UInt8]) throws -> UInt64?
}

/// The signing half of ``HTTPSignatureVerifying``: produces the `Signature` member's bytes
/// for a scheme outside RFC 9421's registry.
public protocol HTTPSignatureProducing: Sendable {
    /// The `alg` value written with every signature, e.g. `apple-app-attest`.
    var algorithmName: String { get }
    /// The primitive underneath.
    var algorithm: SignatureAlgorithm { get }
    /// Exactly the bytes of the `Signature` member for `base`.
    func sign(base: [UInt8]) async throws -> [UInt8]
}

/// What signs an HTTP message: a ``Signer`` (any private key, in software or on a token), a
/// shared HMAC secret, or a scheme of the application's own.
public enum HTTPSigningKey: Sendable {
    /// A public-key signer; its algorithm must be one of ``HTTPSignatureAlgorithms/supported``.
    case signer(any Signer)
    /// A shared secret for `hmac-sha256`.
    case hmacSHA256(SecretBytes)
    /// A scheme outside RFC 9421's registry; `alg` is always written, and a key id must be given.
    case custom(any HTTPSignatureProducing)

    /// The algorithm the key signs with (for a custom scheme, the primitive underneath).
    public var algorithm: SignatureAlgorithm {
        switch self {
        case .signer(let signer): return signer.algorithm
        case .hmacSHA256: return .hmacSHA256
        case .custom(let producer): return producer.algorithm
        }
    }

    /// The `alg` value of signatures by this key.
    public var algorithmName: String {
        if case .custom(let producer) = self { return producer.algorithmName }
        return algorithm.rawValue
    }

    /// Whether this is a scheme of the application's own (``custom(_:)``).
    var isCustom: Bool {
        if case .custom = self { return true }
        return false
    }

    /// The key id to use when none is given: the public key's fingerprint; nil for HMAC and
    /// custom schemes.
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
        case .custom(let producer):
            return try await producer.sign(base: base)
        }
    }
}

/// What verifies an HTTP message signature: a public key pinned with its algorithm, a
/// shared HMAC secret, or a scheme of the application's own. The algorithm comes from the
/// key, never from the message.
public enum HTTPVerificationKey: Sendable {
    /// A public key and the one algorithm it is used with.
    case publicKey(PublicKey, SignatureAlgorithm)
    /// A shared secret for `hmac-sha256`.
    case hmacSHA256(SecretBytes)
    /// A scheme outside RFC 9421's registry; the message must name it in `alg`.
    case custom(any HTTPSignatureVerifying)

    /// A public key with the algorithm RFC 9421 gives its kind by default (RSA: `rsa-pss-sha512`).
    public static func publicKey(_ key: PublicKey) -> HTTPVerificationKey {
        .publicKey(key, HTTPSignatureAlgorithms.default(for: key.kind))
    }

    /// The algorithm signatures under this key must use.
    public var algorithm: SignatureAlgorithm {
        switch self {
        case .publicKey(_, let algorithm): return algorithm
        case .hmacSHA256: return .hmacSHA256
        case .custom(let verifier): return verifier.algorithm
        }
    }

    /// The `alg` value signatures under this key carry (or may omit, but for custom schemes).
    public var algorithmName: String {
        if case .custom(let verifier) = self { return verifier.algorithmName }
        return algorithm.rawValue
    }

    /// Checks `signature` over `base`; throws ``HTTPSignatureError/signatureInvalid(label:)``.
    /// Returns a custom scheme's signature counter, nil for every other key.
    @discardableResult
    func verify(_ signature: [UInt8], base: [UInt8], label: String) throws -> UInt64? {
        switch self {
        case .custom(let verifier):
            do {
                return try verifier.verify(signature: signature, base: base)
            } catch let error as HTTPSignatureError {
                throw error
            } catch {
                throw HTTPSignatureError.signatureInvalid(label: label)
            }
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
        return nil
    }
}

