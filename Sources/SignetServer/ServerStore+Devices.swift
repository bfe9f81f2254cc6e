import Foundation
import SQLKit
import SignetAPI
import SignetCore

/// A device enrolled by attestation: an install of an app whose hardware key signs its requests.
public struct DeviceRecord: Sendable, Equatable {
    /// The admins' handle (a lower-case UUID).
    public var id: String
    /// The key id its requests are signed under: its key's `sha256/…` fingerprint.
    public var keyID: String
    /// The app it acts for.
    public var app: String
    public var platform: DeviceAPI.Platform
    /// Its public key's SPKI DER.
    public var publicKeyDER: [UInt8]
    /// The last signature counter accepted (App Attest; 0 for Android).
    public var counter: Int64
    /// What its attestation established.
    public var facts: DeviceAPI.Facts
    /// App Attest's receipt, kept for fraud checks with Apple.
    public var receipt: [UInt8]?
    public var createdAt: Int64
    public var revokedAt: Int64?

    public init(
        id: String, keyID: String, app: String, platform: DeviceAPI.Platform, publicKeyDER: [UInt8], counter: Int64 = 0,
        facts: DeviceAPI.Facts, receipt: [UInt8]? = nil, createdAt: Int64, revokedAt: Int64? = nil
    ) {
        self.id = id
        self.keyID = keyID
        self.app = app
        self.platform = platform
        self.publicKeyDER = publicKeyDER
        self.counter = counter
        self.facts = facts
        self.receipt = receipt
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }

    /// The `alg` of its request signatures.
    public var algorithmName: String {
        platform == .apple ? DeviceAPI.appAttestAlgorithm : SignatureAlgorithm.ecdsaP256SHA256.rawValue
    }

    /// What in `settings` (the app's current attestation settings) this device's attested facts
    /// no longer meet, nil when they meet them all: its platform's identity (App ID, or package
    /// and one of the signers), App Attest's environment, Android's security level.
    package func unmet(by settings: AdminAPI.AttestationSettings?) -> String? {
        switch platform {
        case .apple:
            guard let appID = settings?.appleAppId, appID == facts.appId else { return "App ID" }
            guard (settings?.appleEnvironments ?? ["production"]).contains(facts.environment ?? "") else { return "environment" }
        case .android:
            guard let package = settings?.androidPackage, package == facts.packageName else { return "package" }
            guard !Set(settings?.androidSigners ?? []).isDisjoint(with: facts.signerDigests ?? []) else { return "signer" }
            if settings?.androidMinimumSecurity == "strongbox", facts.securityLevel != "strongbox" { return "security level" }
        }
        return nil
    }

    /// Its wire form.
    package var api: DeviceAPI.Device {
        DeviceAPI.Device(
            id: id, app: app, platform: platform, keyId: keyID, algorithm: algorithmName, counter: counter, createdAt: createdAt,
            revokedAt: revokedAt, facts: facts)
    }
}

extension ServerStore {
    /// Devices enrolled by attestation (`store.devices`).
    public struct Devices: Sendable {
        let database: ServerDatabase
        let clock: WallClock

        var now: Int64 { clock.unixSeconds }

        private static let columns: SQLQueryString = """
            d.id, d.key_id, d.app, d.platform, d.public_key, d.counter, d.facts, d.receipt, d.created_at, d.revoked_at
            """

        /// Enrols a device; ``ServerError/conflict(detail:)`` when its key is enrolled already, as
        /// a device's or as an app's or admin's.
        public func add(_ device: DeviceRecord) async throws {
            let facts = String(decoding: try JSONEncoder().encode(device.facts), as: UTF8.self)
            let receipt = device.receipt.map { Base64.encode($0) }
            let inserted = try await database.withConnection { sql in
                try await sql.raw("""
                    INSERT INTO devices (id, key_id, app, platform, public_key, counter, facts, receipt, created_at)
                    SELECT \(bind: device.id), \(bind: device.keyID), \(bind: device.app), \(bind: device.platform.rawValue),
                           \(bind: Base64.encode(device.publicKeyDER)), \(bind: device.counter), \(bind: facts), \(bind: receipt),
                           \(bind: device.createdAt)
                    WHERE NOT EXISTS (SELECT 1 FROM principals WHERE key_id = \(bind: device.keyID))
                    ON CONFLICT DO NOTHING RETURNING id
                    """).first() != nil
            }
            guard inserted else { throw ServerError.conflict(detail: "the key \(device.keyID) is already enrolled") }
        }

        /// The device under `keyID` and its app (with the app's attestation settings), in one
        /// query; nil when no device has that key or its app is gone.
        package func find(keyID: String) async throws -> (device: DeviceRecord, app: Principal)? {
            try await database.withConnection { sql in
                guard let row = try await sql.raw("""
                    SELECT \(Self.columns),
                           p.key_id AS p_key_id, p.role, p.name, p.algorithm, p.public_key AS p_public_key,
                           p.created_at AS p_created_at, p.revoked_at AS p_revoked_at, \(Principals.attestationColumns)
                    FROM devices d JOIN principals p ON p.role = 'app' AND p.name = d.app
                    LEFT JOIN app_attestation a ON a.app = d.app
                    WHERE d.key_id = \(bind: keyID)
                    """).first() else { return nil }
                let app = try Principals.record(from: row, prefix: "p_")
                return (try Self.record(from: row), app)
            }
        }

        /// A page of devices, oldest first, after the device `after` (its id), of `app` or of
        /// every app; at most `limit`.
        public func list(app: String?, after: String?, limit: Int) async throws -> [DeviceRecord] {
            try await database.withConnection { sql in
                var start: (Int64, String)?
                if let after {
                    guard let row = try await sql.raw("SELECT created_at, id FROM devices WHERE id = \(bind: after)").first() else {
                        throw ServerError.unprocessable(field: "after", detail: "no device has the id \(PrintableText.escaped(after))")
                    }
                    start = (try row.integer("created_at"), try row.text("id"))
                }
                let appFilter: SQLQueryString = app.map { "d.app = \(bind: $0)" } ?? "1 = 1"
                let startFilter: SQLQueryString = start.map {
                    "(d.created_at > \(bind: $0.0) OR (d.created_at = \(bind: $0.0) AND d.id > \(bind: $0.1)))"
                } ?? "1 = 1"
                return try await sql.raw("""
                    SELECT \(Self.columns) FROM devices d WHERE \(appFilter) AND \(startFilter)
                    ORDER BY d.created_at, d.id LIMIT \(bind: limit)
                    """).all().map(Self.record(from:))
            }
        }

        /// Revokes the device `id` and ends the sessions started from it, in one transaction;
        /// returns the ended sessions' token hashes. ``ServerError/notFound(what:)`` when there
        /// is no such device. Revoking twice keeps the first time.
        package func revoke(id: String) async throws -> [String] {
            let now = self.now
            let ended = try await database.transaction { sql -> [String]? in
                guard let row = try await sql.raw("""
                    UPDATE devices SET revoked_at = COALESCE(revoked_at, \(bind: now)) WHERE id = \(bind: id) RETURNING key_id
                    """).first() else { return nil }
                let keyID = try row.text("key_id")
                return try await sql.raw("DELETE FROM sessions WHERE device = \(bind: keyID) RETURNING token_hash").all()
                    .map { try $0.text("token_hash") }
            }
            guard let ended else { throw ServerError.notFound(what: "the device \(PrintableText.escaped(id))") }
            return ended
        }

        /// Raises the device's counter to `counter` if it is above the stored one and the device
        /// is not revoked; false otherwise (a replay, a clone, or a revocation). One statement, so
        /// of two nodes given the same counter at once exactly one gets true. Relaxed durability,
        /// as nonces: a power loss of the database machine may forget the last few counters, and
        /// those requests' `created` and nonces still bound the window.
        package func advanceCounter(keyID: String, to counter: Int64) async throws -> Bool {
            try await database.withConnection(durability: .relaxed) { sql in
                try await sql.raw("""
                    UPDATE devices SET counter = \(bind: counter)
                    WHERE key_id = \(bind: keyID) AND counter < \(bind: counter) AND revoked_at IS NULL RETURNING counter
                    """).first() != nil
            }
        }

        static func record(from row: any SQLRow) throws -> DeviceRecord {
            guard let platform = DeviceAPI.Platform(rawValue: try row.text("platform")),
                  let publicKey = Base64.decode(try row.text("public_key")),
                  let facts = try? JSONDecoder().decode(DeviceAPI.Facts.self, from: Data(try row.text("facts").utf8))
            else { throw ServerError.unavailable(detail: "a devices row has an unknown platform, key or facts") }
            return DeviceRecord(
                id: try row.text("id"), keyID: try row.text("key_id"), app: try row.text("app"), platform: platform,
                publicKeyDER: publicKey, counter: try row.integer("counter"), facts: facts,
                receipt: try row.optionalText("receipt").flatMap { Base64.decode($0) }, createdAt: try row.integer("created_at"),
                revokedAt: try row.optionalInteger("revoked_at"))
        }
    }

    /// The one-time challenges devices enrol with (`store.deviceChallenges`), stored as their
    /// SHA-256 with the app they were issued to.
    package struct DeviceChallenges: Sendable {
        let database: ServerDatabase
        let clock: WallClock

        /// Records a challenge's hash for `app` until `expiry` (relaxed durability: a challenge
        /// lost to a power loss is only asked for again).
        package func issue(hash: String, app: String, until expiry: Int64) async throws {
            try await database.withConnection(durability: .relaxed) { sql in
                try await sql.raw("""
                    INSERT INTO device_challenges (challenge, app, expires_at) VALUES (\(bind: hash), \(bind: app), \(bind: expiry))
                    """).run()
            }
        }

        /// Consumes the challenge: true when it was issued to `app` and had not expired. One
        /// statement, so of two enrolments racing on one challenge, on any nodes, exactly one
        /// gets true; an expired or another app's challenge is left for the sweep.
        package func consume(hash: String, app: String) async throws -> Bool {
            let now = clock.unixSeconds
            return try await database.withConnection(durability: .relaxed) { sql in
                try await sql.raw("""
                    DELETE FROM device_challenges
                    WHERE challenge = \(bind: hash) AND app = \(bind: app) AND expires_at > \(bind: now) RETURNING app
                    """).first() != nil
            }
        }
    }
}
