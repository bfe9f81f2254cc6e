/// The request and response bodies of the admin API, and its name rule.
public enum AdminAPI {
    /// What an enrolled key may do.
    public enum Role: String, Sendable, CaseIterable, Codable {
        /// Signs the API requests of an app.
        case app
        /// Signs requests to the admin API.
        case admin
    }

    /// `POST /v1/admin/apps` and `POST /v1/admin/admins`: a public key (SPKI as PEM, or its
    /// DER in base64) or, for an app of the tutorial scheme, `hmac: true`.
    public struct Enrolment: Codable, Sendable {
        public var name: String
        public var publicKey: String?
        /// The RFC 9421 algorithm; by default the key's (RSA: `rsa-pss-sha512`).
        public var algorithm: String?
        public var hmac: Bool?
        /// An app's platform identities and attestation policy (apps only).
        public var attestation: AttestationSettings?
        public init(name: String, publicKey: String? = nil, algorithm: String? = nil, hmac: Bool? = nil, attestation: AttestationSettings? = nil) {
            self.name = name
            self.publicKey = publicKey
            self.algorithm = algorithm
            self.hmac = hmac
            self.attestation = attestation
        }
    }

    /// An app's platform identities, against which its devices' attestations are verified, and
    /// whether its user routes take requests only from enrolled devices.
    ///
    /// `PUT /v1/admin/apps/{name}/attestation` replaces them whole.
    public struct AttestationSettings: Codable, Sendable, Equatable {
        /// Apple: the App ID, `TEAMID.bundle.id`.
        public var appleAppId: String?
        /// Apple: the App Attest environments accepted, `production` and/or `development`
        /// (default: production only).
        public var appleEnvironments: [String]?
        /// Android: the package name.
        public var androidPackage: String?
        /// Android: the SHA-256 digests of the signing certificates, hex (colons allowed, as
        /// keytool prints them); the attested app must be signed by one of them.
        public var androidSigners: [String]?
        /// Android: the lowest security level accepted, `tee` (default) or `strongbox`.
        public var androidMinimumSecurity: String?
        /// Whether the app's user routes take requests only from enrolled devices.
        public var required: Bool?
        public init(
            appleAppId: String? = nil, appleEnvironments: [String]? = nil, androidPackage: String? = nil, androidSigners: [String]? = nil,
            androidMinimumSecurity: String? = nil, required: Bool? = nil
        ) {
            self.appleAppId = appleAppId
            self.appleEnvironments = appleEnvironments
            self.androidPackage = androidPackage
            self.androidSigners = androidSigners
            self.androidMinimumSecurity = androidMinimumSecurity
            self.required = required
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
        /// An app's attestation settings, when it has any.
        public var attestation: AttestationSettings?

        public init(
            name: String, role: String, keyId: String, algorithm: String, createdAt: Int64, revokedAt: Int64? = nil, secret: String? = nil,
            attestation: AttestationSettings? = nil
        ) {
            self.name = name
            self.role = role
            self.keyId = keyId
            self.algorithm = algorithm
            self.createdAt = createdAt
            self.revokedAt = revokedAt
            self.secret = secret
            self.attestation = attestation
        }
    }

    /// `GET /v1/admin/apps`, `GET /v1/admin/admins`.
    public struct EnrolledList: Codable, Sendable {
        public var items: [Enrolled]
        public init(items: [Enrolled]) { self.items = items }
    }

    /// `GET /v1/admin/users`.
    public struct UserList: Codable, Sendable {
        public var users: [UserAPI.Profile]
        public init(users: [UserAPI.Profile]) { self.users = users }
    }

    /// The longest name of an app or admin.
    public static let maximumNameLength = 64

    /// The rule a name of an app or admin follows, as a refusal states it.
    public static let nameRule = "must be 1 to \(maximumNameLength) of A-Z a-z 0-9 . _ -, starting with a letter or digit"

    /// Whether `name` is a valid name of an app or admin: 1 to 64 of `A–Z a–z 0–9 . _ -`,
    /// starting with a letter or digit.
    public static func isValidName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= maximumNameLength, bytes.allSatisfy(isNameByte) else { return false }
        return ![UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-")].contains(first)
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
}
