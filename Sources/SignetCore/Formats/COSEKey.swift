import Crypto
import CryptoExtras

/// The COSE algorithms (RFC 9053, RFC 8812) a credential key may name.
public enum COSEAlgorithm: Int64, Sendable, CaseIterable {
    /// ECDSA with SHA-256 over P-256.
    case es256 = -7
    /// ECDSA with SHA-384 over P-384.
    case es384 = -35
    /// EdDSA; with an OKP key on Ed25519, Ed25519.
    case edDSA = -8
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    case rs256 = -257

    /// The signature algorithm that checks this algorithm's signatures (ECDSA in DER).
    public var signatureAlgorithm: SignatureAlgorithm {
        switch self {
        case .es256: return .ecdsaP256SHA256
        case .es384: return .ecdsaP384SHA384
        case .edDSA: return .ed25519
        case .rs256: return .rsaPKCS1v15SHA256
        }
    }

    /// The key kind this algorithm signs with (RSA of any allowed size for RS256).
    func fits(_ kind: KeyKind) -> Bool {
        switch (self, kind) {
        case (.es256, .p256), (.es384, .p384), (.edDSA, .ed25519), (.rs256, .rsa): return true
        default: return false
        }
    }
}

/// A public key in COSE form (RFC 9052 §7, RFC 9053): as WebAuthn's attested credential data
/// and App Attest's `authData` carry it.
public struct COSEKey: Sendable {
    /// The key.
    public let key: PublicKey
    /// The algorithm the key is for (its `alg`, 3), when it names one.
    public let algorithm: COSEAlgorithm?

    /// Reads a COSE key map: EC2 (kty 2) on P-256 (crv 1) or P-384 (crv 2) with `x` and `y`,
    /// OKP (kty 1) on Ed25519 (crv 6) with `x`, or RSA (kty 3) with `n` and `e` (2048 bits or
    /// more). An `alg` must be one of ``COSEAlgorithm`` and fit the key.
    /// - Throws: ``SignetCoreError/malformed(source:detail:)``, ``SignetCoreError/unsupported(source:detail:)``
    ///   or ``SignetCoreError/weakKey(source:bits:)``.
    public init(_ value: CBORValue, source: String) throws {
        guard value.mapValue != nil else { throw SignetCoreError.malformed(source: source, detail: "a COSE key is a map, not \(value.kind)") }
        func bytes(_ label: Int64, _ name: String) throws -> [UInt8] {
            guard let field = value[label] else { throw SignetCoreError.malformed(source: source, detail: "the COSE key has no \(name) (\(label))") }
            guard let bytes = field.bytesValue else {
                throw SignetCoreError.malformed(source: source, detail: "the COSE key's \(name) (\(label)) is \(field.kind), not a byte string")
            }
            return bytes
        }
        guard let kty = value[1]?.int64Value else { throw SignetCoreError.malformed(source: source, detail: "the COSE key has no integer kty (1)") }
        let crv = value[-1]?.int64Value
        let storage: PublicKey.Storage
        switch (kty, crv) {
        case (2, 1):
            let point = try Self.point(x: bytes(-2, "x"), y: bytes(-3, "y"), size: 32, source: source)
            guard let key = try? P256.Signing.PublicKey(x963Representation: point) else { throw Self.offCurve(source) }
            storage = .p256(key)
        case (2, 2):
            let point = try Self.point(x: bytes(-2, "x"), y: bytes(-3, "y"), size: 48, source: source)
            guard let key = try? P384.Signing.PublicKey(x963Representation: point) else { throw Self.offCurve(source) }
            storage = .p384(key)
        case (1, 6):
            let x = try bytes(-2, "x")
            guard x.count == 32, let key = try? Curve25519.Signing.PublicKey(rawRepresentation: x) else {
                throw SignetCoreError.malformed(source: source, detail: "the COSE key's Ed25519 x is \(x.count) bytes, not 32")
            }
            storage = .ed25519(key)
        case (3, _):
            let n = try bytes(-1, "n")
            let e = try bytes(-2, "e")
            // The modulus's bit length: a 256-byte modulus whose top byte is 0x01 has 2041 bits.
            let significant = n.drop { $0 == 0 }
            let bits = significant.first.map { significant.count * 8 - $0.leadingZeroBitCount } ?? 0
            guard bits >= 2048 else { throw SignetCoreError.weakKey(source: source, bits: bits) }
            guard n.count <= 2048, e.count <= 8, let key = try? _RSA.Signing.PublicKey(n: n, e: e) else {
                throw SignetCoreError.malformed(source: source, detail: "the COSE key's RSA modulus or exponent is not usable")
            }
            storage = .rsa(key)
        default:
            throw SignetCoreError.unsupported(
                source: source, detail: "COSE key type \(kty)\(crv.map { " on curve \($0)" } ?? "") (supported: EC2 P-256 and P-384, OKP Ed25519, RSA)")
        }
        let key = PublicKey(storage)
        var algorithm: COSEAlgorithm?
        if let alg = value[3] {
            guard let number = alg.int64Value, let known = COSEAlgorithm(rawValue: number) else {
                throw SignetCoreError.unsupported(source: source, detail: "COSE algorithm \(alg.int64Value.map(String.init) ?? alg.kind) (supported: -7, -35, -8, -257)")
            }
            guard known.fits(key.kind) else {
                throw SignetCoreError.malformed(source: source, detail: "the COSE key names algorithm \(number), which does not fit its \(key.kind) key")
            }
            algorithm = known
        }
        self.key = key
        self.algorithm = algorithm
    }

    /// The uncompressed point (X9.63) of coordinates `x` and `y`, each `size` bytes.
    private static func point(x: [UInt8], y: [UInt8], size: Int, source: String) throws -> [UInt8] {
        guard x.count == size, y.count == size else {
            throw SignetCoreError.malformed(source: source, detail: "the COSE key's coordinates are \(x.count) and \(y.count) bytes, not \(size)")
        }
        return [0x04] + x + y
    }

    private static func offCurve(_ source: String) -> SignetCoreError {
        .malformed(source: source, detail: "the COSE key's point is not on the curve")
    }

    /// `key` as a COSE key map, with `algorithm` when given (for building test samples).
    /// - Throws: ``SignetCoreError/invalidArgument(detail:)`` for an algorithm that does not fit.
    public static func encode(_ key: PublicKey, algorithm: COSEAlgorithm? = nil) throws -> CBORValue {
        var entries: [CBORMapEntry]
        switch key.storage {
        case .p256(let k):
            let raw = Array(k.x963Representation)
            entries = [.init(CBORValue(1), CBORValue(2)), .init(CBORValue(-1), CBORValue(1)),
                       .init(CBORValue(-2), .bytes(Array(raw[1...32]))), .init(CBORValue(-3), .bytes(Array(raw[33...])))]
        case .p384(let k):
            let raw = Array(k.x963Representation)
            entries = [.init(CBORValue(1), CBORValue(2)), .init(CBORValue(-1), CBORValue(2)),
                       .init(CBORValue(-2), .bytes(Array(raw[1...48]))), .init(CBORValue(-3), .bytes(Array(raw[49...])))]
        case .ed25519(let k):
            entries = [.init(CBORValue(1), CBORValue(1)), .init(CBORValue(-1), CBORValue(6)), .init(CBORValue(-2), .bytes(Array(k.rawRepresentation)))]
        case .rsa(let k):
            let primitives = try k.getKeyPrimitives()
            entries = [.init(CBORValue(1), CBORValue(3)), .init(CBORValue(-1), .bytes(Array(primitives.modulus))),
                       .init(CBORValue(-2), .bytes(Array(primitives.publicExponent)))]
        }
        if let algorithm {
            guard algorithm.fits(key.kind) else {
                throw SignetCoreError.invalidArgument(detail: "COSE algorithm \(algorithm.rawValue) does not fit a \(key.kind) key")
            }
            entries.insert(.init(CBORValue(3), CBORValue(algorithm.rawValue)), at: 1)
        }
        return .map(entries)
    }
}
