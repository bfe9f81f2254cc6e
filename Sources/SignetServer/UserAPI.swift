import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOPosix
import SignetCore

/// The request and response bodies of the user endpoints (docs/api/openapi.yaml).
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
    }

    /// The answer to a sign-in: the bearer token (shown once; the server keeps its hash).
    public struct Session: Codable, Sendable {
        public var token: String
        /// Unix seconds.
        public var expiresAt: Int64
        public var user: Profile
    }

    /// The answer to revoking sessions.
    public struct Revoked: Codable, Sendable {
        public var revoked: Int
    }
}

/// Session tokens: 32 random bytes, `sgt_` and base64url; the database keeps only SHA-256.
enum SessionToken {
    static let prefix = "sgt_"

    static func make() -> String { prefix + Base64.encodeURL(RandomBytes.make(32)) }

    static func hash(_ token: String) -> String { DigestAlgorithm.sha256.hash(Array(token.utf8)).hex }

    /// The token of `Authorization: Bearer …`, or nil.
    static func bearer(in fields: HTTPFields) -> String? {
        guard let value = fields[.authorization] else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        guard token.hasPrefix(prefix), token.utf8.count <= 100 else { return nil }
        return token
    }
}
