import Crypto
import Foundation
import Logging
import SQLKit
import SignetAPI
import SignetCore

/// The server's data, over one ``ServerDatabase``: one store per concern, each sharing the
/// database handle and clock, reached as properties — ``principals`` (enrolled app and admin
/// keys, the HMAC app secrets and apps' attestation settings), ``trustRoots``, ``devices``
/// (enrolled by attestation), and, inside the package, `users`, `sessions`, `limits`
/// (rate-limit counters), `nonces` (the replay cache's), `resources` and `deviceChallenges`.
/// Every value reaches SQL as a bound parameter.
///
/// Each operation is one statement or one transaction, so a node killed at any moment leaves
/// either the old row or the new one. One that spans concerns lives on the store of its
/// primary record, keeping its one transaction (disabling a user ends its sessions: `users`),
/// or here when no record is primary (the sweep of expired rows, `purgeExpired(rateLimitWindow:)`).
public struct ServerStore: Sendable {
    /// The pool.
    public let database: ServerDatabase
    /// The time used for stamps and expiries.
    package let clock: WallClock
    /// Enrolled apps and admins, and the sealed HMAC secrets of apps.
    public let principals: Principals
    /// The trust root's versions.
    public let trustRoots: TrustRoots
    /// Registered users.
    package let users: Users
    /// Signed-in sessions.
    package let sessions: Sessions
    /// Rate-limit counters.
    package let limits: Limits
    /// Recorded nonces (replay protection).
    package let nonces: Nonces
    /// Published resources and their chunks.
    package let resources: Resources
    /// Devices enrolled by attestation.
    public let devices: Devices
    /// The one-time challenges devices enrol with.
    package let deviceChallenges: DeviceChallenges

    /// A store over `database`. `appSecretKey` (256 bits, from the server's vault:
    /// ``ServerDataFolder/Identity/appSecretKey``) seals the HMAC secrets of apps; every node
    /// sharing a database needs the same one. Stamps and expiries read the time from `clock`.
    public init(database: ServerDatabase, appSecretKey: SymmetricKey? = nil, clock: WallClock = .system) {
        self.database = database
        self.clock = clock
        let appSecrets: AppSecretCipher?
        if let appSecretKey {
            guard let cipher = AppSecretCipher(key: appSecretKey) else { preconditionFailure("the app-secret key must have 256 bits") }
            appSecrets = cipher
        } else {
            appSecrets = nil
        }
        principals = Principals(database: database, clock: clock, appSecrets: appSecrets)
        trustRoots = TrustRoots(database: database, clock: clock)
        users = Users(database: database, clock: clock)
        sessions = Sessions(database: database, clock: clock)
        limits = Limits(database: database, clock: clock)
        nonces = Nonces(database: database, clock: clock)
        resources = Resources(database: database)
        devices = Devices(database: database, clock: clock)
        deviceChallenges = DeviceChallenges(database: database, clock: clock)
    }

    /// Brings the schema up to date (see ``ServerMigrations``) and, given an app-secret key,
    /// seals the HMAC secrets stored in the clear by older servers
    /// (`Principals.sealStoredSecrets()`); returns the schema versions applied.
    @discardableResult
    public func migrate() async throws -> [Int] {
        let applied = try await ServerMigrations.migrate(database, now: now)
        // Nothing without an app-secret key.
        let sealed = try await principals.sealStoredSecrets()
        if sealed > 0 { database.logger.notice("sealed the HMAC secrets stored in the clear", metadata: ["apps": "\(sealed)"]) }
        return applied
    }

    /// Removes expired sessions, nonces and device challenges, and rate-limit counters whose
    /// window of `rateLimitWindow` seconds has passed; returns how many rows went. Spans four
    /// concerns on one connection, so it lives here.
    @discardableResult
    package func purgeExpired(rateLimitWindow: Int64) async throws -> Int {
        let now = self.now
        return try await database.withConnection { sql in
            let sessions = try await sql.raw("DELETE FROM sessions WHERE expires_at <= \(bind: now) RETURNING token_hash").all().count
            let nonces = try await sql.raw("DELETE FROM nonces WHERE expires_at <= \(bind: now) RETURNING nonce").all().count
            let challenges = try await sql.raw("DELETE FROM device_challenges WHERE expires_at <= \(bind: now) RETURNING challenge").all().count
            let limits = try await sql.raw("DELETE FROM rate_limits WHERE window_start <= \(bind: now - rateLimitWindow) RETURNING bucket")
                .all().count
            return sessions + nonces + challenges + limits
        }
    }

    /// The current time, in whole Unix seconds.
    var now: Int64 { clock.unixSeconds }
}

extension WallClock {
    /// The current time in whole Unix seconds, as the store stamps and compares rows.
    var unixSeconds: Int64 { Int64(now.timeIntervalSince1970.rounded(.down)) }
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
    /// An app's platform identities and attestation policy, when it has any.
    public var attestation: AdminAPI.AttestationSettings?
    /// The enrolled device whose key this is: a device acts as its app (``name`` and ``role``
    /// are the app's; ``keyID``, ``publicKeyDER`` and ``createdAt`` the device's, and
    /// ``revokedAt`` the device's or else the app's). Nil for an app's or admin's own key.
    public var device: DeviceRecord?

    /// A principal; `publicKeyDER` is nil for an HMAC app.
    public init(
        keyID: String, role: Role, name: String, algorithm: SignatureAlgorithm, publicKeyDER: [UInt8]? = nil,
        createdAt: Int64, revokedAt: Int64? = nil, attestation: AdminAPI.AttestationSettings? = nil, device: DeviceRecord? = nil
    ) {
        self.keyID = keyID
        self.role = role
        self.name = name
        self.algorithm = algorithm
        self.publicKeyDER = publicKeyDER
        self.createdAt = createdAt
        self.revokedAt = revokedAt
        self.attestation = attestation
        self.device = device
    }

    /// Whether the app takes its user routes only from enrolled devices.
    public var requiresAttestation: Bool { attestation?.required == true }

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
    public init(tokenHash: String, userID: String, app: String, createdAt: Int64, expiresAt: Int64, device: String? = nil) {
        self.tokenHash = tokenHash
        self.userID = userID
        self.app = app
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.device = device
    }

    /// SHA-256 of the token, hex.
    public var tokenHash: String
    public var userID: String
    /// The app that signed the sign-in request.
    public var app: String
    public var createdAt: Int64
    public var expiresAt: Int64
    /// The key id of the enrolled device that signed the sign-in, nil for the app key: the
    /// session is honoured only in requests signed by the same.
    public var device: String?
}

extension SQLRow {
    func text(_ column: String) throws -> String { try decode(column: column, as: String.self) }
    func optionalText(_ column: String) throws -> String? { try decode(column: column, as: String?.self) }
    func integer(_ column: String) throws -> Int64 { Int64(try decode(column: column, as: Int.self)) }
    func optionalInteger(_ column: String) throws -> Int64? { try decode(column: column, as: Int?.self).map(Int64.init) }
}
