import Logging
import SQLKit
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

        /// Enrols a key; ``ServerError/conflict(detail:)`` when the name (for the role) or the key
        /// is already enrolled. `secret` is the HMAC secret of an HMAC app, stored sealed under the
        /// store's app-secret key (``ServerError/unavailable(detail:)`` when it has none).
        public func add(_ principal: Principal, secret: SecretBytes? = nil) async throws {
            let publicKey = principal.publicKeyDER.map { Base64.encode($0) }
            var sealed: String?
            if let secret { sealed = try sealedSecret(secret, keyID: principal.keyID) }
            let storedSecret = sealed
            let inserted = try await database.withConnection { sql in
                try await sql.raw("""
                    INSERT INTO principals (key_id, role, name, algorithm, public_key, secret, created_at, revoked_at)
                    VALUES (\(bind: principal.keyID), \(bind: principal.role.rawValue), \(bind: principal.name),
                            \(bind: principal.algorithm.rawValue), \(bind: publicKey), \(bind: storedSecret), \(bind: principal.createdAt), NULL)
                    ON CONFLICT DO NOTHING RETURNING key_id
                    """).first() != nil
            }
            guard inserted else {
                throw ServerError.conflict(detail: "an \(principal.role.rawValue) named \(principal.name) or with key \(principal.keyID) is already enrolled")
            }
        }

        /// The principals of `role`, oldest first, revoked ones included.
        public func all(role: Principal.Role) async throws -> [Principal] {
            try await database.withConnection { sql in
                try await sql.raw("""
                    SELECT key_id, role, name, algorithm, public_key, created_at, revoked_at FROM principals
                    WHERE role = \(bind: role.rawValue) ORDER BY created_at, name
                    """).all().map(Self.record(from:))
            }
        }

        /// The key under `keyID` and, for an HMAC app, its secret (opened with the store's
        /// app-secret key); nil when none is enrolled.
        package func find(keyID: String) async throws -> (Principal, SecretBytes?)? {
            let found = try await database.withConnection { sql -> (Principal, String?)? in
                guard let row = try await sql.raw("""
                    SELECT key_id, role, name, algorithm, public_key, secret, created_at, revoked_at FROM principals
                    WHERE key_id = \(bind: keyID)
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

        static func record(from row: any SQLRow) throws -> Principal {
            guard let role = Principal.Role(rawValue: try row.text("role")),
                  let algorithm = SignatureAlgorithm(rawValue: try row.text("algorithm"))
            else { throw ServerError.unavailable(detail: "a principals row has an unknown role or algorithm") }
            return Principal(
                keyID: try row.text("key_id"), role: role, name: try row.text("name"), algorithm: algorithm,
                publicKeyDER: try row.optionalText("public_key").flatMap { Base64.decode($0) },
                createdAt: try row.integer("created_at"), revokedAt: try row.optionalInteger("revoked_at"))
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
