import Crypto
import Foundation
import Logging
import SQLKit
import SignetAPI
import SignetCore

/// The server's data, over a ``ServerDatabase``: apps and admins, users, sessions, the nonce
/// replay cache and rate-limit counters. Every value reaches SQL as a bound parameter.
///
/// Each operation is one statement or one transaction, so a node killed at any moment leaves
/// either the old row or the new one.
public struct ServerStore: Sendable {
    /// The pool.
    public let database: ServerDatabase
    /// The time used for stamps and expiries.
    package let clock: WallClock
    /// Seals and opens HMAC app secrets; nil when the store was given no key (it then neither
    /// stores nor reads one).
    let appSecrets: AppSecretCipher?

    /// A store over `database`. `appSecretKey` (256 bits, from the server's vault:
    /// ``ServerDataFolder/Identity/appSecretKey``) seals the HMAC secrets of apps; every node
    /// sharing a database needs the same one. Stamps and expiries read the time from `clock`.
    public init(database: ServerDatabase, appSecretKey: SymmetricKey? = nil, clock: WallClock = .system) {
        self.database = database
        self.clock = clock
        if let appSecretKey {
            guard let cipher = AppSecretCipher(key: appSecretKey) else { preconditionFailure("the app-secret key must have 256 bits") }
            appSecrets = cipher
        } else {
            appSecrets = nil
        }
    }

    /// Brings the schema up to date (see ``ServerMigrations``) and, given an app-secret key,
    /// seals the HMAC secrets stored in the clear by older servers (``sealStoredSecrets()``);
    /// returns the schema versions applied.
    @discardableResult
    public func migrate() async throws(ServerError) -> [Int] {
        let applied = try await ServerMigrations.migrate(database, now: now)
        if appSecrets != nil {
            let sealed = try await sealStoredSecrets()
            if sealed > 0 { database.logger.notice("sealed the HMAC secrets stored in the clear", metadata: ["apps": "\(sealed)"]) }
        }
        return applied
    }

    var now: Int64 { Int64(clock.now.timeIntervalSince1970.rounded(.down)) }
}

/// An enrolled app or admin key.
public struct Principal: Sendable, Equatable {
    /// What the key may do (SignetAPI's `AdminAPI.Role`).
    public typealias Role = AdminAPI.Role

    /// The RFC 9421 `keyid`: the public key's fingerprint, or the name of an HMAC app.
    public var keyID: String
    public var role: Role
    /// The name it was enrolled under (unique per role).
    public var name: String
    /// The RFC 9421 algorithm its signatures use.
    public var algorithm: SignatureAlgorithm
    /// The public key's SPKI DER (nil for an HMAC app).
    public var publicKeyDER: [UInt8]?
    /// When it was enrolled and revoked, Unix seconds.
    public var createdAt: Int64
    public var revokedAt: Int64?

    /// A principal; `publicKeyDER` is nil for an HMAC app.
    public init(
        keyID: String, role: Role, name: String, algorithm: SignatureAlgorithm, publicKeyDER: [UInt8]? = nil,
        createdAt: Int64, revokedAt: Int64? = nil
    ) {
        self.keyID = keyID
        self.role = role
        self.name = name
        self.algorithm = algorithm
        self.publicKeyDER = publicKeyDER
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }

    /// Whether requests signed with it are refused.
    public var isRevoked: Bool { revokedAt != nil }
}

/// A registered user.
public struct UserRecord: Sendable, Equatable {
    public init(id: String, email: String, displayName: String, passwordHash: String, createdAt: Int64, disabledAt: Int64? = nil) {
        self.id = id
        self.email = email
        self.displayName = displayName
        self.passwordHash = passwordHash
        self.createdAt = createdAt
        self.disabledAt = disabledAt
    }

    public var id: String
    /// The normalised e-mail address.
    public var email: String
    public var displayName: String
    /// The PHC string of the password.
    public var passwordHash: String
    public var createdAt: Int64
    public var disabledAt: Int64?
}

/// A signed-in session, found by the hash of its bearer token.
public struct SessionRecord: Sendable, Equatable {
    public init(tokenHash: String, userID: String, app: String, createdAt: Int64, expiresAt: Int64) {
        self.tokenHash = tokenHash
        self.userID = userID
        self.app = app
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }

    /// SHA-256 of the token, hex.
    public var tokenHash: String
    public var userID: String
    /// The app that signed the sign-in request.
    public var app: String
    public var createdAt: Int64
    public var expiresAt: Int64
}

extension SQLRow {
    func text(_ column: String) throws -> String { try decode(column: column, as: String.self) }
    func optionalText(_ column: String) throws -> String? { try decode(column: column, as: String?.self) }
    func integer(_ column: String) throws -> Int64 { Int64(try decode(column: column, as: Int.self)) }
    func optionalInteger(_ column: String) throws -> Int64? { try decode(column: column, as: Int?.self).map(Int64.init) }
}
