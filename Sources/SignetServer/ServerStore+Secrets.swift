import Logging
import SQLKit
import SignetCore

/// HMAC app secrets at rest: sealed with the store's app-secret key (``AppSecretCipher``) before
/// they reach the database, opened when a request is verified.
extension ServerStore {
    /// The stored form of the secret of the app `keyID`.
    func sealedSecret(_ secret: SecretBytes, keyID: String) throws(ServerError) -> String {
        guard let appSecrets else {
            throw .unavailable(detail: "the store was opened without an app-secret key, so it cannot store the secret of the app \(keyID)")
        }
        return try appSecrets.seal(secret, keyID: keyID)
    }

    /// The secret of the app `keyID` from its stored form; only the sealed form is accepted.
    func openedSecret(_ stored: String, keyID: String) throws(ServerError) -> SecretBytes {
        guard let appSecrets else {
            throw .unavailable(detail: "the store was opened without an app-secret key, so it cannot read the secret of the app \(keyID)")
        }
        return try appSecrets.open(stored, keyID: keyID)
    }

    /// Checks that the database's secrets are sealed under this store's key and seals those
    /// that older servers stored in the clear, all in one transaction (under an advisory lock on
    /// PostgreSQL, so nodes starting together take turns); returns how many were sealed.
    ///
    /// The first start with a key records a check value of it (``AppSecretCipher/keyCheck``);
    /// a node holding another key is refused (``ServerError/configuration(detail:)``) rather than
    /// left to fail every request of an HMAC app. On SQLite the rewritten rows' old bytes are
    /// zeroed (`secure_delete`) and checkpointed out of the write-ahead log, so the file keeps no
    /// copy of a plain secret; PostgreSQL keeps old row versions until `VACUUM`.
    @discardableResult
    func sealStoredSecrets() async throws(ServerError) -> Int {
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
