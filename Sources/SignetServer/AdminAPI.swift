import SignetCore
import SignetHTTP

/// The request and response bodies of the admin API (docs/api/openapi.yaml).
public enum AdminAPI {
    /// `POST /v1/admin/apps` and `POST /v1/admin/admins`: a public key (SPKI as PEM, or its
    /// DER in base64) or, for an app of the tutorial scheme, `hmac: true`.
    public struct Enrolment: Codable, Sendable {
        public var name: String
        public var publicKey: String?
        /// The RFC 9421 algorithm; by default the key's (RSA: `rsa-pss-sha512`).
        public var algorithm: String?
        public var hmac: Bool?
        public init(name: String, publicKey: String? = nil, algorithm: String? = nil, hmac: Bool? = nil) {
            self.name = name
            self.publicKey = publicKey
            self.algorithm = algorithm
            self.hmac = hmac
        }
    }

    /// An enrolled app or admin. `secret` (base64) is present once: in the answer that
    /// enrols an HMAC app.
    public struct Enrolled: Codable, Sendable, Equatable {
        public var name: String
        public var role: String
        public var keyId: String
        public var algorithm: String
        public var createdAt: Int64
        public var revokedAt: Int64?
        public var secret: String?
    }

    /// `GET /v1/admin/apps`, `GET /v1/admin/admins`.
    public struct EnrolledList: Codable, Sendable {
        public var items: [Enrolled]
    }

    /// `GET /v1/admin/users`.
    public struct UserList: Codable, Sendable {
        public var users: [UserAPI.Profile]
    }

    /// The longest name of an app or admin.
    public static let maximumNameLength = 64

    /// Checks a name: 1 to 64 of `A–Z a–z 0–9 . _ -`, starting with a letter or digit.
    public static func checkName(_ name: String) throws(ServerError) {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= maximumNameLength, bytes.allSatisfy(isNameByte),
              ![UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-")].contains(first)
        else {
            throw .unprocessable(field: "name", detail: "must be 1 to \(maximumNameLength) of A-Z a-z 0-9 . _ -, starting with a letter or digit")
        }
    }

    static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }

    /// The public key of an enrolment: PEM or base64 DER of an SPKI (any format Signet reads);
    /// a private key is refused so it never travels by mistake.
    public static func publicKey(_ text: String) throws(ServerError) -> PublicKey {
        guard text.utf8.count <= 16 << 10 else { throw .unprocessable(field: "publicKey", detail: "is longer than 16 KiB") }
        let bytes: [UInt8]
        if PEM.looksLikePEM(text) {
            bytes = Array(text.utf8)
        } else if let der = Base64.decode(text.filter { !$0.isWhitespace }) {
            bytes = der
        } else {
            throw .unprocessable(field: "publicKey", detail: "is neither PEM nor base64 DER")
        }
        let decoded: DecodedKey
        do {
            decoded = try KeyDecoder.decode(bytes, source: "publicKey")
        } catch {
            throw .unprocessable(field: "publicKey", detail: "\(error)")
        }
        guard case .publicKey(let key) = decoded else {
            throw .unprocessable(field: "publicKey", detail: "is a private key: send only the public key")
        }
        return key
    }

    /// The algorithm for `key`: the one named (which must suit the key and be one of RFC 9421's)
    /// or the key's default.
    public static func algorithm(_ name: String?, for key: PublicKey) throws(ServerError) -> SignatureAlgorithm {
        guard let name else { return HTTPSignatureAlgorithms.default(for: key.kind) }
        guard let algorithm = try? HTTPSignatureAlgorithms.parse(name), !algorithm.isMAC else {
            throw .unprocessable(field: "algorithm", detail: "\(name.prefix(40)) is not an RFC 9421 public-key algorithm")
        }
        guard algorithm.fits(key.kind) else {
            throw .unprocessable(field: "algorithm", detail: "\(algorithm.rawValue) does not suit a \(key.kind) key")
        }
        return algorithm
    }
}
