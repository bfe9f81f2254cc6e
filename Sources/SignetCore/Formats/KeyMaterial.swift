import Crypto
import CryptoExtras
import SwiftASN1

/// Builds keys from the DER structures of `DERKey` and back, enforcing the ``KeyPolicy``.
enum KeyMaterial {
    /// Runs a DER parse, turning any failure into a message that names the structure.
    static func parsing<T>(_ structure: String, source: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SignetCoreError {
            throw error
        } catch let error as ASN1Error {
            throw SignetCoreError.malformed(source: source, detail: "not a valid \(structure) (\(reason(error)))")
        } catch {
            throw SignetCoreError.malformed(source: source, detail: "not a valid \(structure) (\(error))")
        }
    }

    private static func reason(_ error: ASN1Error) -> String {
        switch error.code {
        case .truncatedASN1Field: return "truncated"
        case .unexpectedFieldType: return "unexpected field type"
        case .invalidASN1Object: return "invalid structure"
        case .invalidASN1IntegerEncoding: return "invalid integer"
        case .tooFewOIDComponents: return "invalid object identifier"
        case .unsupportedFieldLength: return "unsupported length"
        case .invalidPEMDocument: return "invalid PEM"
        default: return "invalid DER"
        }
    }

    // MARK: RSA size policy

    static func bitLength(ofUnsigned bytes: [UInt8]) -> Int {
        guard let index = bytes.firstIndex(where: { $0 != 0 }) else { return 0 }
        return (bytes.count - index - 1) * 8 + (8 - bytes[index].leadingZeroBitCount)
    }

    static func checkRSASize(modulus: [UInt8], source: String, policy: KeyPolicy) throws -> Bool {
        let bits = bitLength(ofUnsigned: modulus)
        if bits < 1024 {
            throw SignetCoreError.unsupported(source: source, detail: "RSA keys under 1024 bits (this one has \(bits)) cannot be used at all")
        }
        if bits > 16384 {
            throw SignetCoreError.unsupported(source: source, detail: "RSA keys over 16384 bits (this one has \(bits))")
        }
        if bits < 2048 {
            guard policy.allowWeakRSA else { throw SignetCoreError.weakKey(source: source, bits: bits) }
            return true
        }
        return false
    }

    // MARK: Public keys

    static func publicKey(spki der: [UInt8], source: String, policy: KeyPolicy) throws -> PublicKey {
        let spki = try parsing("SubjectPublicKeyInfo", source: source) { try DERKey.parseSPKI(der) }
        let oid = spki.algorithm.oid
        switch oid {
        case OID.rsaEncryption:
            return try rsaPublicKey(pkcs1: spki.key, source: source, policy: policy)
        case OID.ecPublicKey:
            let curve = try curveOID(spki.algorithm.parameters, source: source)
            return try ecPublicKey(point: spki.key, curve: curve, source: source)
        case OID.ed25519:
            return try ed25519PublicKey(raw: spki.key, source: source)
        default:
            throw SignetCoreError.unsupported(source: source, detail: "\(OID.describe(oid)) keys")
        }
    }

    static func rsaPublicKey(pkcs1 der: [UInt8], source: String, policy: KeyPolicy) throws -> PublicKey {
        let parts = try parsing("RSA public key", source: source) { try DERKey.parseRSAPublicKey(der) }
        let weak = try checkRSASize(modulus: parts.n, source: source, policy: policy)
        let spki = DERKey.serializeSPKI(oid: OID.rsaEncryption, curve: nil, null: true, key: DERKey.serializeRSAPublicKey(n: parts.n, e: parts.e))
        do {
            let key = weak
                ? try _RSA.Signing.PublicKey(unsafeDERRepresentation: spki)
                : try _RSA.Signing.PublicKey(derRepresentation: spki)
            return PublicKey(.rsa(key))
        } catch {
            throw SignetCoreError.malformed(source: source, detail: "not a usable RSA public key")
        }
    }

    static func curveOID(_ parameters: ASN1Node?, source: String) throws -> ASN1ObjectIdentifier {
        guard let parameters, let oid = try? ASN1ObjectIdentifier(derEncoded: parameters) else {
            throw SignetCoreError.unsupported(source: source, detail: "EC keys with explicit curve parameters (only named curves are accepted)")
        }
        return oid
    }

    static func ecPublicKey(point: [UInt8], curve: ASN1ObjectIdentifier, source: String) throws -> PublicKey {
        do {
            switch curve {
            case OID.prime256v1:
                if point.count == 33 { return PublicKey(.p256(try P256.Signing.PublicKey(compressedRepresentation: point))) }
                return PublicKey(.p256(try P256.Signing.PublicKey(x963Representation: point)))
            case OID.secp384r1:
                if point.count == 49 { return PublicKey(.p384(try P384.Signing.PublicKey(compressedRepresentation: point))) }
                return PublicKey(.p384(try P384.Signing.PublicKey(x963Representation: point)))
            default:
                throw SignetCoreError.unsupported(source: source, detail: OID.describe(curve))
            }
        } catch let error as SignetCoreError {
            throw error
        } catch {
            throw SignetCoreError.malformed(source: source, detail: "the EC public key is not a valid point on its curve")
        }
    }

    static func ed25519PublicKey(raw: [UInt8], source: String) throws -> PublicKey {
        guard raw.count == 32, let key = try? Curve25519.Signing.PublicKey(rawRepresentation: raw) else {
            throw SignetCoreError.malformed(source: source, detail: "an Ed25519 public key must be 32 bytes (found \(raw.count))")
        }
        return PublicKey(.ed25519(key))
    }

    // MARK: Private keys

    static func privateKey(pkcs8 der: [UInt8], source: String, policy: KeyPolicy) throws -> PrivateKey {
        let info = try parsing("PKCS#8 private key", source: source) { try DERKey.parsePrivateKeyInfo(der) }
        var inner = info.privateKey
        defer { SecretBytes.zero(&inner) }
        switch info.algorithm.oid {
        case OID.rsaEncryption:
            return try rsaPrivateKey(pkcs1: inner, source: source, policy: policy)
        case OID.ecPublicKey:
            let curve = try curveOID(info.algorithm.parameters, source: source)
            return try ecPrivateKey(sec1: inner, curve: curve, source: source)
        case OID.ed25519:
            let raw = try parsing("Ed25519 private key", source: source) { try Array(ASN1OctetString(derEncoded: inner).bytes) }
            guard raw.count == 32, let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: raw) else {
                throw SignetCoreError.malformed(source: source, detail: "an Ed25519 private key must be 32 bytes")
            }
            return PrivateKey(.ed25519(key))
        default:
            throw SignetCoreError.unsupported(source: source, detail: "\(OID.describe(info.algorithm.oid)) keys")
        }
    }

    static func rsaPrivateKey(pkcs1 der: [UInt8], source: String, policy: KeyPolicy) throws -> PrivateKey {
        let parts = try parsing("RSA private key", source: source) { try DERKey.parseRSAPrivateKey(der) }
        let weak = try checkRSASize(modulus: parts.n, source: source, policy: policy)
        do {
            let key = weak
                ? try _RSA.Signing.PrivateKey(unsafeDERRepresentation: der)
                : try _RSA.Signing.PrivateKey(derRepresentation: der)
            return PrivateKey(.rsa(key))
        } catch {
            throw SignetCoreError.malformed(source: source, detail: "the RSA private key is inconsistent or damaged")
        }
    }

    /// A SEC1 `ECPrivateKey`; `curve` comes from the PKCS#8 wrapper, or from the key itself.
    static func ecPrivateKey(sec1 der: [UInt8], curve outerCurve: ASN1ObjectIdentifier?, source: String) throws -> PrivateKey {
        let parsed = try parsing("EC private key", source: source) { try DERKey.parseECPrivateKey(der) }
        var scalar = parsed.scalar
        defer { SecretBytes.zero(&scalar) }
        guard let curve = outerCurve ?? parsed.curve else {
            throw SignetCoreError.malformed(source: source, detail: "the EC private key does not name its curve")
        }
        let key: PrivateKey
        do {
            switch curve {
            case OID.prime256v1:
                key = PrivateKey(.p256(try P256.Signing.PrivateKey(rawRepresentation: leftPadded(scalar, to: 32))))
            case OID.secp384r1:
                key = PrivateKey(.p384(try P384.Signing.PrivateKey(rawRepresentation: leftPadded(scalar, to: 48))))
            default:
                throw SignetCoreError.unsupported(source: source, detail: OID.describe(curve))
            }
        } catch let error as SignetCoreError {
            throw error
        } catch {
            throw SignetCoreError.malformed(source: source, detail: "the EC private key is not a valid scalar for its curve")
        }
        // The optional embedded point may be stored uncompressed (04‖X‖Y) or compressed (02/03‖X).
        if let embedded = parsed.publicKey, embedded != ecPoint(key.publicKey), embedded != compressedECPoint(key.publicKey) {
            throw SignetCoreError.malformed(source: source, detail: "the public key stored with the EC private key does not match it")
        }
        return key
    }

    static func leftPadded(_ bytes: [UInt8], to length: Int) -> [UInt8] {
        bytes.count >= length ? bytes : [UInt8](repeating: 0, count: length - bytes.count) + bytes
    }

    // MARK: Encoding

    static func ecPoint(_ key: PublicKey) -> [UInt8]? {
        switch key.storage {
        case .p256(let k): return Array(k.x963Representation)
        case .p384(let k): return Array(k.x963Representation)
        default: return nil
        }
    }

    static func compressedECPoint(_ key: PublicKey) -> [UInt8]? {
        switch key.storage {
        case .p256(let k): return Array(k.compressedRepresentation)
        case .p384(let k): return Array(k.compressedRepresentation)
        default: return nil
        }
    }

    static func curve(of kind: KeyKind) -> ASN1ObjectIdentifier? {
        switch kind {
        case .p256: return OID.prime256v1
        case .p384: return OID.secp384r1
        default: return nil
        }
    }

    static func pkcs8DER(_ key: PrivateKey) -> [UInt8] {
        switch key.storage {
        case .rsa(let k): return Array(k.pkcs8DERRepresentation)
        case .p256, .p384:
            var sec1 = sec1DER(key, includeCurve: false)
            defer { SecretBytes.zero(&sec1) }
            return DERKey.serializePrivateKeyInfo(oid: OID.ecPublicKey, curve: curve(of: key.kind), null: false, key: sec1)
        case .ed25519(let k):
            var inner = DER.Serializer()
            try! inner.serialize(ASN1OctetString(contentBytes: Array(k.rawRepresentation)[...]))
            return DERKey.serializePrivateKeyInfo(oid: OID.ed25519, curve: nil, null: false, key: inner.serializedBytes)
        }
    }

    static func sec1DER(_ key: PrivateKey, includeCurve: Bool = true) -> [UInt8] {
        let scalar: [UInt8]
        switch key.storage {
        case .p256(let k): scalar = Array(k.rawRepresentation)
        case .p384(let k): scalar = Array(k.rawRepresentation)
        default: return []
        }
        return DERKey.serializeECPrivateKey(
            scalar: scalar, curve: includeCurve ? curve(of: key.kind) : nil, publicKey: ecPoint(key.publicKey) ?? [])
    }

    static func rsaPKCS1PrivateDER(_ key: PrivateKey) -> [UInt8]? {
        guard case .rsa(let k) = key.storage else { return nil }
        return Array(k.derRepresentation)
    }

    static func rsaPKCS1PublicDER(_ key: PublicKey) -> [UInt8]? {
        guard case .rsa(let k) = key.storage else { return nil }
        return Array(k.pkcs1DERRepresentation)
    }
}
