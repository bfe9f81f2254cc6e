import Crypto
import CryptoExtras

/// A public key of any supported kind.
public struct PublicKey: Sendable {
    enum Storage: Sendable {
        case rsa(_RSA.Signing.PublicKey)
        case p256(P256.Signing.PublicKey)
        case p384(P384.Signing.PublicKey)
        case ed25519(Curve25519.Signing.PublicKey)
    }

    let storage: Storage

    init(_ storage: Storage) { self.storage = storage }

    /// What kind of key this is.
    public var kind: KeyKind {
        switch storage {
        case .rsa(let key): return .rsa(bits: key.keySizeInBits)
        case .p256: return .p256
        case .p384: return .p384
        case .ed25519: return .ed25519
        }
    }

    /// The DER `SubjectPublicKeyInfo`: the canonical form, and what the fingerprint covers.
    public var spkiDER: [UInt8] {
        switch storage {
        case .rsa(let key): return Array(key.derRepresentation)
        case .p256(let key): return Array(key.derRepresentation)
        case .p384(let key): return Array(key.derRepresentation)
        case .ed25519(let key): return Array(key.derRepresentation)
        }
    }

    /// The key's identity: SHA-256 over its DER SPKI, also its pin and its key id (``KeyFingerprint``).
    public var fingerprint: KeyFingerprint { KeyFingerprint(spkiDER: spkiDER) }
}

extension PublicKey: Equatable {
    /// Two keys are equal when their DER `SubjectPublicKeyInfo` encodings are identical.
    public static func == (lhs: PublicKey, rhs: PublicKey) -> Bool { lhs.spkiDER == rhs.spkiDER }
}

/// SHA-256 over a key's DER `SubjectPublicKeyInfo`, written `sha256/<base64>`.
///
/// One value serves as the certificate pin (as HPKP, TrustKit and OWASP write it), the key id
/// in bundle manifests and trust roots, and the default `keyid` of HTTP signatures.
public struct KeyFingerprint: Sendable, Hashable, CustomStringConvertible {
    /// The 32 digest bytes.
    public let bytes: [UInt8]

    /// Computes the fingerprint of a DER SPKI.
    public init(spkiDER: [UInt8]) {
        bytes = Array(SHA256.hash(data: spkiDER))
    }

    /// Parses `sha256/<base64>`; nil for anything else.
    public init?(string: String) {
        guard string.hasPrefix("sha256/"), let decoded = Base64.decode(string.dropFirst(7)), decoded.count == 32
        else { return nil }
        bytes = decoded
    }

    /// `sha256/<base64>`.
    public var description: String { "sha256/" + Base64.encode(bytes) }
}
