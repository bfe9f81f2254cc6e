import CPKCS11
import SignetCore

/// The `CKA_EC_PARAMS` values Signet knows: the DER of a named curve's object identifier, or,
/// for Ed25519, the PrintableString some modules use instead (PKCS#11 3.0 allows both).
enum CurveParameters {
    /// OBJECT IDENTIFIER 1.2.840.10045.3.1.7 (prime256v1, P-256).
    static let p256: [UInt8] = [0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]
    /// OBJECT IDENTIFIER 1.3.132.0.34 (secp384r1, P-384).
    static let p384: [UInt8] = [0x06, 0x05, 0x2B, 0x81, 0x04, 0x00, 0x22]
    /// OBJECT IDENTIFIER 1.3.101.112 (id-Ed25519, RFC 8410).
    static let ed25519: [UInt8] = [0x06, 0x03, 0x2B, 0x65, 0x70]
    /// PrintableString "edwards25519".
    static let edwards25519: [UInt8] = [0x13, 0x0C] + Array("edwards25519".utf8)

    /// A readable name for parameters Signet does not use, for messages.
    static func describe(_ parameters: [UInt8]) -> String {
        if let content = TinyDER.content(of: parameters, tag: TinyDER.objectIdentifier), let dotted = TinyDER.dottedOID(content) {
            return "the curve \(dotted)"
        }
        if let content = TinyDER.content(of: parameters, tag: 0x13), content.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) {
            return "the curve \"\(String(decoding: content, as: UTF8.self))\""
        }
        return "explicit or unknown curve parameters"
    }

    /// The point inside a `CKA_EC_POINT`: the DER OCTET STRING the standard asks for, or the
    /// raw point some modules give; nil when neither has one of the `lengths` expected.
    static func point(_ value: [UInt8], lengths: Set<Int>) -> [UInt8]? {
        if let inner = TinyDER.content(of: value, tag: TinyDER.octetString), lengths.contains(inner.count) { return inner }
        return lengths.contains(value.count) ? value : nil
    }
}

extension PKCS11Module {
    /// The public key of a key object, read from its attributes: `CKA_MODULUS` and
    /// `CKA_PUBLIC_EXPONENT` for RSA; `CKA_EC_PARAMS` and `CKA_EC_POINT` for P-256, P-384 and
    /// Ed25519.
    ///
    /// - Parameters:
    ///   - fromPrivateKey: the object is the private key (the token has no public key object).
    ///   - name: names the key in messages (its URI).
    /// - Throws: ``PKCS11Error/unsupportedKey(uri:detail:)`` for other kinds and curves and
    ///   missing points, ``SignetCoreError`` when the numbers are not a valid key (or an RSA key
    ///   below the policy's minimum).
    func readPublicKey(
        _ object: CK_OBJECT_HANDLE, keyType: PKCS11KeyType, fromPrivateKey: Bool, session: CK_SESSION_HANDLE, name: String, policy: KeyPolicy
    ) throws -> PublicKey {
        switch keyType {
        case .rsa:
            guard let modulus = try attribute(CKA_MODULUS, of: object, session: session), !modulus.isEmpty,
                let exponent = try attribute(CKA_PUBLIC_EXPONENT, of: object, session: session), !exponent.isEmpty
            else {
                throw PKCS11Error.unsupportedKey(uri: name, detail: missingPart("modulus and public exponent", fromPrivateKey))
            }
            return try PublicKey(rsaModulus: modulus, publicExponent: exponent, source: name, policy: policy)
        case .ec, .ecEdwards:
            let parameters = try requiredAttribute(CKA_EC_PARAMS, "CKA_EC_PARAMS", of: object, session: session)
            let kind: KeyKind
            let lengths: Set<Int>
            switch parameters {
            case CurveParameters.p256 where keyType == .ec:
                kind = .p256
                lengths = [65, 33]
            case CurveParameters.p384 where keyType == .ec:
                kind = .p384
                lengths = [97, 49]
            case CurveParameters.ed25519 where keyType == .ecEdwards, CurveParameters.edwards25519 where keyType == .ecEdwards:
                kind = .ed25519
                lengths = [32]
            default:
                throw PKCS11Error.unsupportedKey(
                    uri: name, detail: "\(keyType) keys on \(CurveParameters.describe(parameters)) (Signet uses P-256, P-384 and Ed25519)")
            }
            guard let value = try attribute(CKA_EC_POINT, of: object, session: session), !value.isEmpty else {
                throw PKCS11Error.unsupportedKey(uri: name, detail: missingPart("public point", fromPrivateKey))
            }
            guard let point = CurveParameters.point(value, lengths: lengths) else {
                throw PKCS11Error.unsupportedKey(uri: name, detail: "the token gives a CKA_EC_POINT of \(value.count) bytes, which is not a \(kind.family) point")
            }
            if kind == .ed25519 { return try PublicKey(ed25519: point, source: name) }
            return try PublicKey(ecPoint: point, kind: kind, source: name)
        case .other:
            throw PKCS11Error.unsupportedKey(uri: name, detail: "\(keyType) keys (Signet uses RSA, P-256, P-384 and Ed25519)")
        }
    }

    private func missingPart(_ part: String, _ fromPrivateKey: Bool) -> String {
        fromPrivateKey
            ? "the token has no public key object for this key (with the same id), and the private key does not give its \(part)"
            : "the public key object does not give its \(part)"
    }
}
