import SQLKit
import SignetCore

extension ServerStore {
    /// Enrols a key; ``ServerError/conflict(detail:)`` when the name (for the role) or the key
    /// is already enrolled. `secret` is the HMAC secret of an HMAC app, stored sealed under the
    /// store's app-secret key (``ServerError/unavailable(detail:)`` when it has none).
    public func addPrincipal(_ principal: Principal, secret: SecretBytes? = nil) async throws(ServerError) {
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
            throw .conflict(detail: "an \(principal.role.rawValue) named \(principal.name) or with key \(principal.keyID) is already enrolled")
        }
    }

    /// The principals of `role`, oldest first, revoked ones included.
    public func principals(role: Principal.Role) async throws(ServerError) -> [Principal] {
        try await database.withConnection { sql in
            try await sql.raw("""
                SELECT key_id, role, name, algorithm, public_key, created_at, revoked_at FROM principals
                WHERE role = \(bind: role.rawValue) ORDER BY created_at, name
                """).all().map(Self.principal(from:))
        }
    }

    /// The key under `keyID` and, for an HMAC app, its secret (opened with the store's
    /// app-secret key); nil when none is enrolled.
    package func principal(keyID: String) async throws(ServerError) -> (Principal, SecretBytes?)? {
        let found = try await database.withConnection { sql -> (Principal, String?)? in
            guard let row = try await sql.raw("""
                SELECT key_id, role, name, algorithm, public_key, secret, created_at, revoked_at FROM principals
                WHERE key_id = \(bind: keyID)
                """).first() else { return nil }
            return (try Self.principal(from: row), try row.optionalText("secret"))
        }
        guard let (principal, stored) = found else { return nil }
        guard let stored else { return (principal, nil) }
        return (principal, try openedSecret(stored, keyID: principal.keyID))
    }

    /// Revokes the principal `name` of `role`; ``ServerError/notFound(what:)`` when there is
    /// none. Revoking twice keeps the first time.
    package func revokePrincipal(role: Principal.Role, name: String) async throws(ServerError) {
        let now = self.now
        let found = try await database.withConnection { sql in
            try await sql.raw("""
                UPDATE principals SET revoked_at = COALESCE(revoked_at, \(bind: now))
                WHERE role = \(bind: role.rawValue) AND name = \(bind: name) RETURNING key_id
                """).first() != nil
        }
        guard found else { throw .notFound(what: "the \(role.rawValue) \(name)") }
    }

    /// Revokes the admin `name` unless it is the last unrevoked one
    /// (``ServerError/conflict(detail:)``): checked and done in one transaction, under a lock
    /// on PostgreSQL, so two admins revoking each other at once cannot leave none.
    package func revokeAdmin(name: String) async throws(ServerError) {
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
        case 1: throw .conflict(detail: "\(name) is the last admin; add another admin before revoking it")
        case 2: throw .notFound(what: "the admin \(name)")
        default: return
        }
    }

    static func principal(from row: any SQLRow) throws -> Principal {
        guard let role = Principal.Role(rawValue: try row.text("role")),
              let algorithm = SignatureAlgorithm(rawValue: try row.text("algorithm"))
        else { throw ServerError.unavailable(detail: "a principals row has an unknown role or algorithm") }
        return Principal(
            keyID: try row.text("key_id"), role: role, name: try row.text("name"), algorithm: algorithm,
            publicKeyDER: try row.optionalText("public_key").flatMap { Base64.decode($0) },
            createdAt: try row.integer("created_at"), revokedAt: try row.optionalInteger("revoked_at"))
    }
}
