/// Every signature and MAC algorithm Signet knows, with their stable string identifiers
/// (RFC 9421's registered names where one exists). One enum for CLI flags, manifests, trust
/// files and HTTP signatures.
public enum SignatureAlgorithm: String, CaseIterable, Sendable, Codable {
    /// RSASSA-PKCS1-v1_5 with SHA-256 (RFC 8017), as `openssl dgst -sha256 -sign` makes; the
    /// default for RSA keys.
    case rsaPKCS1v15SHA256 = "rsa-v1_5-sha256"
    /// RSASSA-PKCS1-v1_5 with SHA-512 (RFC 8017), as `openssl dgst -sha512 -sign` makes.
    case rsaPKCS1v15SHA512 = "rsa-v1_5-sha512"
    /// RSASSA-PSS (RFC 8017) with SHA-256, MGF1-SHA-256 and a 32-byte salt, as openssl makes with
    /// `-sigopt rsa_padding_mode:pss -sigopt rsa_pss_saltlen:digest`.
    case rsaPSSSHA256 = "rsa-pss-sha256"
    /// RSASSA-PSS (RFC 8017) with SHA-512, MGF1-SHA-512 and a 64-byte salt, as openssl makes with
    /// `-sha512 -sigopt rsa_padding_mode:pss -sigopt rsa_pss_saltlen:digest`.
    case rsaPSSSHA512 = "rsa-pss-sha512"
    /// ECDSA on P-256 with SHA-256 (FIPS 186-5), DER-encoded as `openssl dgst -sha256 -sign`
    /// writes it; the default for P-256 keys.
    case ecdsaP256SHA256 = "ecdsa-p256-sha256"
    /// ECDSA on P-384 with SHA-384 (FIPS 186-5), DER-encoded as `openssl dgst -sha384 -sign`
    /// writes it; the default for P-384 keys.
    case ecdsaP384SHA384 = "ecdsa-p384-sha384"
    /// Ed25519 (RFC 8032) over the whole message, as `openssl pkeyutl -sign -rawin` makes.
    case ed25519 = "ed25519"
    /// HMAC-SHA256 (RFC 2104) under a shared secret: a MAC, not a public-key signature.
    case hmacSHA256 = "hmac-sha256"
    /// HMAC-SHA512 (RFC 2104) under a shared secret: a MAC, not a public-key signature.
    case hmacSHA512 = "hmac-sha512"

    /// Parses an identifier, with a message listing the valid ones.
    public init(identifier: String) throws {
        guard let value = SignatureAlgorithm(rawValue: identifier) else {
            throw SignetCoreError.invalidArgument(
                detail: "unknown algorithm \"\(identifier)\" (known: \(SignatureAlgorithm.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        self = value
    }

    /// Whether this is a MAC (symmetric key) rather than a public-key signature.
    public var isMAC: Bool { self == .hmacSHA256 || self == .hmacSHA512 }

    /// The hash applied to the message before signing; nil for Ed25519, which signs the
    /// message itself.
    public var digest: DigestAlgorithm? {
        switch self {
        case .rsaPKCS1v15SHA256, .rsaPSSSHA256, .ecdsaP256SHA256, .hmacSHA256: return .sha256
        case .ecdsaP384SHA384: return .sha384
        case .rsaPKCS1v15SHA512, .rsaPSSSHA512, .hmacSHA512: return .sha512
        case .ed25519: return nil
        }
    }

    /// Whether a key of `kind` can make or check this kind of signature.
    public func fits(_ kind: KeyKind) -> Bool {
        switch (self, kind) {
        case (.rsaPKCS1v15SHA256, .rsa), (.rsaPKCS1v15SHA512, .rsa), (.rsaPSSSHA256, .rsa), (.rsaPSSSHA512, .rsa): return true
        case (.ecdsaP256SHA256, .p256), (.ecdsaP384SHA384, .p384), (.ed25519, .ed25519): return true
        default: return false
        }
    }

    /// The algorithms a key of `kind` can use.
    public static func fitting(_ kind: KeyKind) -> [SignatureAlgorithm] {
        allCases.filter { $0.fits(kind) }
    }

    /// Checks that `kind` fits, with a message that names the algorithms that would.
    public func requireFits(_ kind: KeyKind) throws {
        guard fits(kind) else {
            let options = SignatureAlgorithm.fitting(kind).map(\.rawValue).joined(separator: ", ")
            throw SignetCoreError.algorithmMismatch(algorithm: rawValue, keyDescription: kind.description, hint: "use \(options)")
        }
    }
}
