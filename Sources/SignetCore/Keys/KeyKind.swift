/// The kind of an asymmetric key: what it is, independently of how it is stored.
public enum KeyKind: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// An RSA key with a modulus of `bits` bits: 2048 to 16384, or from 1024 under a weak-key policy.
    case rsa(bits: Int)
    /// An ECDSA key on NIST P-256 (secp256r1, openssl's prime256v1).
    case p256
    /// An ECDSA key on NIST P-384 (secp384r1).
    case p384
    /// An Ed25519 key (RFC 8032).
    case ed25519

    /// "RSA-2048 key", "P-256 key" … for messages.
    public var description: String {
        switch self {
        case .rsa(let bits): return "an RSA-\(bits) key"
        case .p256: return "a P-256 key"
        case .p384: return "a P-384 key"
        case .ed25519: return "an Ed25519 key"
        }
    }

    /// The short name used in listings and JSON: `rsa`, `p256`, `p384`, `ed25519`.
    public var family: String {
        switch self {
        case .rsa: return "rsa"
        case .p256: return "p256"
        case .p384: return "p384"
        case .ed25519: return "ed25519"
        }
    }

    /// The signature algorithm used when none is asked for (issue #2).
    public var defaultAlgorithm: SignatureAlgorithm {
        switch self {
        case .rsa: return .rsaPKCS1v15SHA256
        case .p256: return .ecdsaP256SHA256
        case .p384: return .ecdsaP384SHA384
        case .ed25519: return .ed25519
        }
    }
}

/// The key types `signet key generate -t` offers.
public enum KeyGenerationType: String, CaseIterable, Sendable {
    /// RSA-1024: below the 2048-bit minimum, generated only under a weak-key policy, for
    /// testing legacy peers.
    case rsa1024
    /// RSA keys of 2048, 3072 or 4096 bits, ECDSA keys on P-256 or P-384, and Ed25519 keys.
    case rsa2048, rsa3072, rsa4096, p256, p384, ed25519

    /// Whether this type is below the accepted minimum strength.
    public var isWeak: Bool { self == .rsa1024 }
}

/// How strictly to treat keys on import.
public struct KeyPolicy: Sendable, Equatable {
    /// Accept RSA keys of 1024 to 2047 bits (never fewer). Off by default.
    public var allowWeakRSA: Bool

    /// A policy; `allowWeakRSA` accepts RSA keys of 1024 to 2047 bits, which are refused by default.
    public init(allowWeakRSA: Bool = false) {
        self.allowWeakRSA = allowWeakRSA
    }

    /// The default policy: RSA keys must have at least 2048 bits.
    public static let strict = KeyPolicy()
}
