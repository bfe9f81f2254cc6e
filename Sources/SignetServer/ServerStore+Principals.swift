import Logging
import SQLKit
import SignetAPI
import SignetCore

extension ServerStore {
    /// Enrolled apps and admins (`store.principals`), with the HMAC secrets of apps at rest:
    /// sealed with the store's app-secret key (`AppSecretCipher`) before they reach the
    /// database, opened when a request is verified.
    public struct Principals: Sendable {
        let database: ServerDatabase
        let clock: WallClock
        /// Seals and opens HMAC app secrets; nil when the store was given no key (it then neither
        /// stores nor reads one).
        let appSecrets: AppSecretCipher?

        var now: Int64 { clock.unixSeconds }

        /// Enrols a key, with an app's attestation settings in the same transaction;
        /// ``ServerError/conflict(detail:)`` when the name (for the role) or the key is already
        /// enrolled (a device's key included). `secret` is the HMAC secret of an HMAC app, stored
        /// sealed under the store's app-secret key (``ServerError/unavailable(detail:)`` when it
        /// has none).
        public func add(_ principal: Principal, secret: SecretBytes? = nil) async throws {
            let publicKey = principal.publicKeyDER.map { Base64.encode($0) }
            var sealed: String?
            if let secret { sealed = try sealedSecret(secret, keyID: principal.keyID) }
            let storedSecret = sealed
            let now = self.now
            let inserted = try await database.transaction { sql in
                let inserted = try await sql.raw("""
                    INSERT INTO principals (key_id, role, name, algorithm, public_key, secret, created_at)
                    SELECT \(bind: principal.keyID), \(bind: principal.role.rawValue), \(bind: principal.name),
                           \(bind: principal.algorithm.rawValue), \(bind: publicKey), \(bind: storedSecret), \(bind: principal.createdAt)
                    WHERE NOT EXISTS (SELECT 1 FROM devices WHERE key_id = \(bind: principal.keyID))
                    ON CONFLICT DO NOTHING RETURNING key_id
                    """).first() != nil
                if inserted, principal.role == .app, let settings = principal.attestation {
                    try await Self.write(settings, app: principal.name, now: now, sql: sql)
                }
                return inserted
            }
            guard inserted else {
                throw ServerError.conflict(detail: "an \(principal.role.rawValue) named \(principal.name) or with key \(principal.keyID) is already enrolled")
            }
        }

        /// Replaces the attestation settings of the app `name` (nil removes them);
        /// ``ServerError/notFound(what:)`` when there is no such app.
        public func setAttestation(app name: String, _ settings: AdminAPI.AttestationSettings?) async throws {
            let now = self.now
            let found = try await database.transaction { sql in
                guard try await sql.raw("SELECT key_id FROM principals WHERE role = 'app' AND name = \(bind: name)").first() != nil else {
                    return false
                }
                try await sql.raw("DELETE FROM app_attestation WHERE app = \(bind: name)").run()
                if let settings { try await Self.write(settings, app: name, now: now, sql: sql) }
                return true
            }
            guard found else { throw ServerError.notFound(what: "the app \(name)") }
        }

        private static func write(_ settings: AdminAPI.AttestationSettings, app: String, now: Int64, sql: any SQLDatabase) async throws {
            try await sql.raw("""
                INSERT INTO app_attestation (app, apple_app_id, apple_environments, android_package, android_signers,
                                             android_min_security, required, updated_at)
                VALUES (\(bind: app), \(bind: settings.appleAppId), \(bind: settings.appleEnvironments?.joined(separator: ",")),
                        \(bind: settings.androidPackage), \(bind: settings.androidSigners?.joined(separator: ",")),
                        \(bind: settings.androidMinimumSecurity), \(bind: settings.required == true ? 1 : 0), \(bind: now))
                """).run()
        }

        /// The columns of `app_attestation` (aliased `a`) that ``record(from:prefix:)`` reads.
        static let attestationColumns: SQLQueryString = """
            a.app AS a_app, a.apple_app_id, a.apple_environments, a.android_package, a.android_signers, a.android_min_security, a.required
            """

        /// The principals of `role`, oldest first, revoked ones included.
        public func all(role: Principal.Role) async throws -> [Principal] {
            try await database.withConnection { sql in
                try await sql.raw("""
                    SELECT p.key_id, p.role, p.name, p.algorithm, p.public_key, p.created_at, p.revoked_at, \(Self.attestationColumns)
                    FROM principals p LEFT JOIN app_attestation a ON p.role = 'app' AND a.app = p.name
                    WHERE p.role = \(bind: role.rawValue) ORDER BY p.created_at, p.name
                    """).all().map { try Self.record(from: $0) }
            }
        }

        /// The key under `keyID` and, for an HMAC app, its secret (opened with the store's
        /// app-secret key); nil when none is enrolled.
        package func find(keyID: String) async throws -> (Principal, SecretBytes?)? {
            let found = try await database.withConnection { sql -> (Principal, String?)? in
                guard let row = try await sql.raw("""
                    SELECT p.key_id, p.role, p.name, p.algorithm, p.public_key, p.secret, p.created_at, p.revoked_at, \(Self.attestationColumns)
                    FROM principals p LEFT JOIN app_attestation a ON p.role = 'app' AND a.app = p.name
                    WHERE p.key_id = \(bind: keyID)
                    """).first() else { return nil }
                return (try Self.record(from: row), try row.optionalText("secret"))
            }
            guard let (principal, stored) = found else { return nil }
            guard let stored else { return (principal, nil) }
            return (principal, try openedSecret(stored, keyID: principal.keyID))
        }

        /// Revokes the principal `name` of `role`; ``ServerError/notFound(what:)`` when there is
        /// none. Revoking twice keeps the first time.
        package func revoke(role: Principal.Role, name: String) async throws {
            let now = self.now
            let found = try await database.withConnection { sql in
                try await sql.raw("""
                    UPDATE principals SET revoked_at = COALESCE(revoked_at, \(bind: now))
                    WHERE role = \(bind: role.rawValue) AND name = \(bind: name) RETURNING key_id
                    """).first() != nil
            }
            guard found else { throw ServerError.notFound(what: "the \(role.rawValue) \(name)") }
        }

        /// Revokes the admin `name` unless it is the last unrevoked one
        /// (``ServerError/conflict(detail:)``): checked and done in one transaction, under a lock
        /// on PostgreSQL, so two admins revoking each other at once cannot leave none.
        package func revokeAdmin(name: String) async throws {
            let now = self.now
            let postgres = !database.isSQLite
            let outcome = try await database.transaction { sql -> Int in
                if postgres { try await sql.raw("SELECT pg_advisory_xact_lock(\(literal: 0x5369676E6574 + 1))").run() }
                let active = try await sql.raw("SELECT name FROM principals WHERE role = 'admin' AND revoked_at IS NULL").all()
                    .map { try $0.text("name") }
                if active.contains(name) && active.count <= 1 { return 1 }
                let found = try await sql.raw("""
                    UPDATE principals SET revoked_at = COALESCE(revoked_at, \(bind: now))
                    WHERE role = 'admin' AND name = \(bind: name) RETURNING key_id
                    """).first() != nil
                return found ? 0 : 2
            }
            switch outcome {
            case 1: throw ServerError.conflict(detail: "\(name) is the last admin; add another admin before revoking it")
            case 2: throw ServerError.notFound(what: "the admin \(name)")
            default: return
            }
        }

        /// A principal from a row with its columns (`key_id`, `public_key`, `created_at` and
        /// `revoked_at` under `prefix`) and, when joined, ``attestationColumns``.
        static func record(from row: any SQLRow, prefix: String = "") throws -> Principal {
            guard let role = Principal.Role(rawValue: try row.text("role")),
                  let algorithm = SignatureAlgorithm(rawValue: try row.text("algorithm"))
            else { throw ServerError.unavailable(detail: "a principals row has an unknown role or algorithm") }
            return Principal(
                keyID: try row.text(prefix + "key_id"), role: role, name: try row.text("name"), algorithm: algorithm,
                publicKeyDER: try row.optionalText(prefix + "public_key").flatMap { Base64.decode($0) },
                createdAt: try row.integer(prefix + "created_at"), revokedAt: try row.optionalInteger(prefix + "revoked_at"),
                attestation: try attestation(from: row))
        }

        /// The attestation settings of a row joined with `app_attestation`, nil when it has none.
        private static func attestation(from row: any SQLRow) throws -> AdminAPI.AttestationSettings? {
            guard row.contains(column: "a_app"), try row.optionalText("a_app") != nil else { return nil }
            let list = { (text: String?) in text.map { $0.split(separator: ",").map(String.init) } }
            return AdminAPI.AttestationSettings(
                appleAppId: try row.optionalText("apple_app_id"), appleEnvironments: list(try row.optionalText("apple_environments")),
                androidPackage: try row.optionalText("android_package"), androidSigners: list(try row.optionalText("android_signers")),
                androidMinimumSecurity: try row.optionalText("android_min_security"), required: try row.integer("required") != 0)
        }

        // MARK: App secrets

        /// The stored form of the secret of the app `keyID`.
        func sealedSecret(_ secret: SecretBytes, keyID: String) throws -> String {
            guard let appSecrets else {
                throw ServerError.unavailable(detail: "the store was opened without an app-secret key, so it cannot store the secret of the app \(keyID)")
            }
            return try appSecrets.seal(secret, keyID: keyID)
        }

        /// The secret of the app `keyID` from its stored form; only the sealed form is accepted.
        func openedSecret(_ stored: String, keyID: String) throws -> SecretBytes {
            guard let appSecrets else {
                throw ServerError.unavailable(detail: "the store was opened without an app-secret key, so it cannot read the secret of the app \(keyID)")
            }
            return try appSecrets.open(stored, keyID: keyID)
        }

        /// Checks that the database's secrets are sealed under this store's key and seals those
        /// that older servers stored in the clear, all in one transaction (under an advisory lock on
        /// PostgreSQL, so nodes starting together take turns); returns how many were sealed (0,
        /// doing nothing, without an app-secret key).
        ///
        /// The first start with a key records a check value of it (``AppSecretCipher/keyCheck``)
        /// in `server_keys`; a node holding another key is refused
        /// (``ServerError/configuration(detail:)``) rather than left to fail every request of an
        /// HMAC app. On SQLite the rewritten rows' old bytes are zeroed (`secure_delete`) and
        /// checkpointed out of the write-ahead log, so the file keeps no copy of a plain secret;
        /// PostgreSQL keeps old row versions until `VACUUM`.
        @discardableResult
        func sealStoredSecrets() async throws -> Int {
            guard let cipher = appSecrets else { return 0 }
            let check = cipher.keyCheck
            let sqlite = database.isSQLite
            let now = self.now
            let location = database.location.description
            let (sealed, skipped) = try await database.transaction { sql -> (Int, [String]) in
                if !sqlite { try await sql.raw("SELECT pg_advisory_xact_lock(\(literal: 0x5369676E6574 + 2))").run() }
                if let row = try await sql.raw("SELECT key_check FROM server_keys WHERE purpose = 'app-secrets'").first() {
                    guard try row.text("key_check") == check else {
                        throw ServerError.configuration(detail: """
                            \(location): its HMAC app secrets are sealed under another app-secret key than this server's; \
                            every node sharing a database needs the same data folder (or a copy of it made after the first start), \
                            whose vault holds the key
                            """)
                    }
                } else {
                    try await sql.raw("""
                        INSERT INTO server_keys (purpose, key_check, added_at) VALUES ('app-secrets', \(bind: check), \(bind: now))
                        """).run()
                }
                let rows = try await sql.raw("SELECT key_id, secret FROM principals WHERE secret IS NOT NULL").all()
                var plain: [(keyID: String, text: String)] = []
                for row in rows {
                    let text = try row.text("secret")
                    if !AppSecretCipher.isSealed(text) { plain.append((try row.text("key_id"), text)) }
                }
                guard !plain.isEmpty else { return (0, []) }
                // The old cells are overwritten with zeros as they are freed.
                if sqlite { try await sql.raw("PRAGMA secure_delete = ON").run() }
                var count = 0
                var unreadable: [String] = []
                for (keyID, text) in plain {
                    guard var bytes = Base64.decode(text) else {
                        unreadable.append(keyID)
                        continue
                    }
                    let sealedText = try cipher.seal(SecretBytes(consuming: &bytes), keyID: keyID)
                    try await sql.raw("UPDATE principals SET secret = \(bind: sealedText) WHERE key_id = \(bind: keyID)").run()
                    count += 1
                }
                if sqlite { try await sql.raw("PRAGMA secure_delete = OFF").run() }
                return (count, unreadable)
            }
            if !skipped.isEmpty {
                database.logger.warning("stored HMAC secrets that are not base64 were left as they are; those apps cannot sign", metadata: [
                    "apps": "\(skipped.joined(separator: ", "))",
                ])
            }
            if sealed > 0, sqlite {
                // Moves the rewritten pages into the database file now, over the old ones.
                _ = try? await database.withConnection { sql in try await sql.raw("PRAGMA wal_checkpoint(TRUNCATE)").run() }
            }
            return sealed
        }
    }
}
