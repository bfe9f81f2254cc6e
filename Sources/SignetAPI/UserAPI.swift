/// The request and response bodies of the user endpoints.
public enum UserAPI {
    /// `POST /v1/users`.
    public struct Registration: Codable, Sendable {
        public var email: String
        public var password: String
        public var displayName: String
        public init(email: String, password: String, displayName: String) {
            self.email = email
            self.password = password
            self.displayName = displayName
        }
    }

    /// `POST /v1/sessions`.
    public struct SignIn: Codable, Sendable {
        public var email: String
        public var password: String
        public init(email: String, password: String) {
            self.email = email
            self.password = password
        }
    }

    /// A user as the API shows it.
    public struct Profile: Codable, Sendable, Equatable {
        public var id: String
        public var email: String
        public var displayName: String
        /// Gravatar's URL for the address (SHA-256 of the normalised e-mail).
        public var gravatarURL: String
        /// Unix seconds.
        public var createdAt: Int64
        public var disabled: Bool

        public init(id: String, email: String, displayName: String, gravatarURL: String, createdAt: Int64, disabled: Bool) {
            self.id = id
            self.email = email
            self.displayName = displayName
            self.gravatarURL = gravatarURL
            self.createdAt = createdAt
            self.disabled = disabled
        }
    }

    /// The answer to a sign-in: the bearer token (shown once; the server keeps its hash).
    public struct Session: Codable, Sendable {
        public var token: String
        /// Unix seconds.
        public var expiresAt: Int64
        public var user: Profile

        public init(token: String, expiresAt: Int64, user: Profile) {
            self.token = token
            self.expiresAt = expiresAt
            self.user = user
        }
    }

    /// The answer to revoking sessions.
    public struct Revoked: Codable, Sendable {
        public var revoked: Int
        public init(revoked: Int) { self.revoked = revoked }
    }

    /// The longest e-mail address, in bytes of UTF-8 (RFC 5321's path limit).
    public static let maximumEmailLength = 254
    /// The prefix of every session token (`sgt_` and 43 characters of base64url).
    public static let sessionTokenPrefix = "sgt_"
}
