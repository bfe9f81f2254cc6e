import Crypto
import CryptoExtras
import Foundation

/// JSON Web Keys (RFC 7517/7518, RFC 8037 for Ed25519).
enum JWK {
    /// The largest JWK we read.
    static let maximumSize = 64 * 1024

    struct Document: Codable {
        var kty: String
        var kid: String?
        var crv: String?
        var x, y: String?
        var n, e: String?
        var d, p, q, dp, dq, qi: String?
    }

    static func encode(_ key: PublicKey) -> String {
        var document = publicDocument(key)
        document.kid = key.fingerprint.description
        return render(document)
    }

    static func encode(_ key: PrivateKey) throws -> String {
        var document = publicDocument(key.publicKey)
        switch key.storage {
        case .rsa:
            let der = KeyMaterial.rsaPKCS1PrivateDER(key) ?? []
            let parts = try KeyMaterial.parsing("RSA private key", source: "key") { try DERKey.parseRSAPrivateKey(der) }
            document.d = b64(parts.d)
            document.p = b64(parts.p)
            document.q = b64(parts.q)
            document.dp = b64(parts.dp)
            document.dq = b64(parts.dq)
            document.qi = b64(parts.qi)
        // EC and OKP private values keep their full fixed length (RFC 7518 §6.2.2.1).
        case .p256(let k): document.d = Base64.encodeURL(Array(k.rawRepresentation))
        case .p384(let k): document.d = Base64.encodeURL(Array(k.rawRepresentation))
        case .ed25519(let k): document.d = Base64.encodeURL(Array(k.rawRepresentation))
        }
        return render(document)
    }

    private static func render(_ document: Document) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try! encoder.encode(document), as: UTF8.self) + "\n"
    }

    private static func b64(_ bytes: [UInt8]) -> String {
        let trimmed = Array(bytes.drop { $0 == 0 })
        return Base64.encodeURL(trimmed.isEmpty ? [0] : trimmed)
    }

    private static func publicDocument(_ key: PublicKey) -> Document {
        switch key.storage {
        case .rsa(let k):
            let primitives = try! k.getKeyPrimitives()
            let n = Array(primitives.modulus.drop { $0 == 0 })
            let e = Array(primitives.publicExponent.drop { $0 == 0 })
            return Document(kty: "RSA", n: Base64.encodeURL(n), e: Base64.encodeURL(e))
        case .p256(let k):
            let point = Array(k.x963Representation)
            return Document(kty: "EC", crv: "P-256", x: Base64.encodeURL(point[1..<33]), y: Base64.encodeURL(point[33...]))
        case .p384(let k):
            let point = Array(k.x963Representation)
            return Document(kty: "EC", crv: "P-384", x: Base64.encodeURL(point[1..<49]), y: Base64.encodeURL(point[49...]))
        case .ed25519(let k):
            return Document(kty: "OKP", crv: "Ed25519", x: Base64.encodeURL(Array(k.rawRepresentation)))
        }
    }

    static func decode(_ text: String, source: String, policy: KeyPolicy) throws -> DecodedKey {
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: Data(text.utf8))
        } catch {
            throw SignetCoreError.malformed(source: source, detail: "not a valid JWK (\(describe(error)))")
        }
        func field(_ name: String, _ value: String?) throws -> [UInt8] {
            guard let value else { throw SignetCoreError.malformed(source: source, detail: "JWK is missing \"\(name)\"") }
            guard let bytes = Base64.decodeURL(value), !bytes.isEmpty else {
                throw SignetCoreError.malformed(source: source, detail: "JWK member \"\(name)\" is not base64url")
            }
            return bytes
        }
        switch (document.kty, document.crv) {
        case ("RSA", _):
            let n = try field("n", document.n), e = try field("e", document.e)
            guard document.d != nil else {
                return .publicKey(try KeyMaterial.rsaPublicKey(pkcs1: DERKey.serializeRSAPublicKey(n: n, e: e), source: source, policy: policy))
            }
            var der = DERKey.serializeRSAPrivateKey(DERKey.RSAPrivateKey(
                n: n, e: e, d: try field("d", document.d), p: try field("p", document.p), q: try field("q", document.q),
                dp: try field("dp", document.dp), dq: try field("dq", document.dq), qi: try field("qi", document.qi)))
            defer { SecretBytes.zero(&der) }
            return .privateKey(try KeyMaterial.rsaPrivateKey(pkcs1: der, source: source, policy: policy))
        case ("EC", "P-256"), ("EC", "P-384"):
            let is256 = document.crv == "P-256"
            let size = is256 ? 32 : 48
            let x = try field("x", document.x), y = try field("y", document.y)
            guard x.count == size, y.count == size else {
                throw SignetCoreError.malformed(source: source, detail: "JWK coordinates must be \(size) bytes for \(document.crv!)")
            }
            let curve = is256 ? OID.prime256v1 : OID.secp384r1
            let publicKey = try KeyMaterial.ecPublicKey(point: [4] + x + y, curve: curve, source: source)
            guard document.d != nil else { return .publicKey(publicKey) }
            var d = try field("d", document.d)
            defer { SecretBytes.zero(&d) }
            let sec1 = DERKey.serializeECPrivateKey(scalar: KeyMaterial.leftPadded(d, to: size), curve: curve, publicKey: [4] + x + y)
            return .privateKey(try KeyMaterial.ecPrivateKey(sec1: sec1, curve: curve, source: source))
        case ("OKP", "Ed25519"):
            let x = try field("x", document.x)
            let publicKey = try KeyMaterial.ed25519PublicKey(raw: x, source: source)
            guard document.d != nil else { return .publicKey(publicKey) }
            let d = try field("d", document.d)
            guard d.count == 32, let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: d),
                Array(key.publicKey.rawRepresentation) == x
            else {
                throw SignetCoreError.malformed(source: source, detail: "JWK \"d\" is not the Ed25519 private key for \"x\"")
            }
            return .privateKey(PrivateKey(.ed25519(key)))
        default:
            throw SignetCoreError.unsupported(source: source, detail: "JWK key type \(document.kty)\(document.crv.map { " on curve \($0)" } ?? "")")
        }
    }

    private static func describe(_ error: Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): return "missing \"\(key.stringValue)\""
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            return "wrong type at \"\(context.codingPath.map(\.stringValue).joined(separator: "."))\""
        case DecodingError.dataCorrupted: return "not valid JSON"
        default: return "\(error)"
        }
    }
}
