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

/// Rules for what users type: e-mail normalisation and the limits on every field.
public enum UserInput {
    /// The longest e-mail address (RFC 5321's path limit).
    public static let maximumEmailLength = 254

    /// Trims and lower-cases an address and checks its shape: one `@`, a non-empty local part,
    /// a domain with a dot, no spaces or control characters.
    public static func normalizedEmail(_ text: String) throws(ServerError) -> String {
        let email = text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        guard !email.isEmpty else { throw .unprocessable(field: "email", detail: "is empty") }
        guard email.count <= maximumEmailLength else {
            throw .unprocessable(field: "email", detail: "is longer than \(maximumEmailLength) characters")
        }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
              email.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F && !(0x80...0x9F).contains($0.value) })
        else { throw .unprocessable(field: "email", detail: "is not an e-mail address") }
        return email
    }

    static func checkPassword(_ password: String, allowed: ClosedRange<Int>) throws(ServerError) {
        guard password.count >= allowed.lowerBound else {
            throw .unprocessable(field: "password", detail: "must be at least \(allowed.lowerBound) characters")
        }
        guard password.count <= allowed.upperBound, password.utf8.count <= PasswordHasher.maximumPasswordLength else {
            throw .unprocessable(
                field: "password", detail: "must be at most \(allowed.upperBound) characters and \(PasswordHasher.maximumPasswordLength) bytes of UTF-8")
        }
    }

    static func displayName(_ text: String, maximum: Int) throws(ServerError) -> String {
        let name = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty else { throw .unprocessable(field: "displayName", detail: "is empty") }
        guard name.count <= maximum else { throw .unprocessable(field: "displayName", detail: "is longer than \(maximum) characters") }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .unprocessable(field: "displayName", detail: "contains control characters")
        }
        return name
    }
}

/// Password hashing off the event loops: scrypt takes a core for a few hundred
/// milliseconds, which must never stall the connections an event loop serves.
struct PasswordWork: Sendable {
    let hasher: PasswordHasher
    /// A hash of a random password, verified against when the e-mail is unknown so that
    /// an unknown address costs the same time as a wrong password.
    let decoy: String

    init(hasher: PasswordHasher) throws(ServerError) {
        self.hasher = hasher
        do {
            decoy = try hasher.hash(SecretBytes(RandomBytes.make(16)))
        } catch {
            throw .configuration(detail: "the password hasher cannot hash: \(error)")
        }
    }

    func hash(_ password: String) async throws(ServerError) -> String {
        let hasher = self.hasher
        do {
            return try await NIOThreadPool.singleton.runIfActive { try hasher.hash(SecretBytes(Array(password.utf8))) }
        } catch {
            throw .unavailable(detail: "password hashing: \(error)")
        }
    }

    /// Whether `password` matches `stored` (or, with no stored hash, the decoy: always false).
    func verify(_ password: String, against stored: String?) async throws(ServerError) -> Bool {
        let hasher = self.hasher
        let target = stored ?? decoy
        do {
            let matches = try await NIOThreadPool.singleton.runIfActive {
                try hasher.verify(SecretBytes(Array(password.utf8)), against: target)
            }
            return matches && stored != nil
        } catch {
            throw .unavailable(detail: "password verification: \(error)")
        }
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
