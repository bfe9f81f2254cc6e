import SQLKit
import SignetCore

extension ServerStore {
    /// Adds a user; ``ServerError/conflict(detail:)`` when the e-mail is taken. One statement:
    /// after a crash the user is either fully there or not at all.
    package func addUser(_ user: UserRecord) async throws(ServerError) {
        let inserted = try await database.withConnection { sql in
            try await sql.raw("""
                INSERT INTO users (id, email, display_name, password_hash, created_at, disabled_at)
                VALUES (\(bind: user.id), \(bind: user.email), \(bind: user.displayName), \(bind: user.passwordHash),
                        \(bind: user.createdAt), NULL)
                ON CONFLICT DO NOTHING RETURNING id
                """).first() != nil
        }
        guard inserted else { throw .conflict(detail: "an account with this e-mail address already exists") }
    }

    /// The user with the (normalised) e-mail address, or nil.
    package func user(email: String) async throws(ServerError) -> UserRecord? {
        try await database.withConnection { sql in
            try await sql.raw("SELECT * FROM users WHERE email = \(bind: email)").first().map(Self.user(from:))
        }
    }

    /// The user stored under the first of `emails` that has one, or nil.
    package func user(anyOf emails: [String]) async throws(ServerError) -> UserRecord? {
        for email in emails {
            if let user = try await user(email: email) { return user }
        }
        return nil
    }

    /// The user with the id, or nil.
    package func user(id: String) async throws(ServerError) -> UserRecord? {
        try await database.withConnection { sql in
            try await sql.raw("SELECT * FROM users WHERE id = \(bind: id)").first().map(Self.user(from:))
        }
    }

    /// Every user, oldest first, at most `limit`.
    package func users(limit: Int = 10_000) async throws(ServerError) -> [UserRecord] {
        try await database.withConnection { sql in
            try await sql.raw("SELECT * FROM users ORDER BY created_at, email LIMIT \(bind: limit)").all().map(Self.user(from:))
        }
    }

    /// Replaces the password hash (a re-hash under a stronger policy).
    package func updatePasswordHash(userID: String, to hash: String) async throws(ServerError) {
        try await database.withConnection { sql in
            try await sql.raw("UPDATE users SET password_hash = \(bind: hash) WHERE id = \(bind: userID)").run()
        }
    }

    /// Disables the account and ends all its sessions, in one transaction;
    /// ``ServerError/notFound(what:)`` when there is no such user.
    package func disableUser(email: String) async throws(ServerError) {
        let now = self.now
        let found = try await database.transaction { sql -> Bool in
            guard let row = try await sql.raw("""
                UPDATE users SET disabled_at = COALESCE(disabled_at, \(bind: now)) WHERE email = \(bind: email) RETURNING id
                """).first() else { return false }
            let id = try row.text("id")
            try await sql.raw("DELETE FROM sessions WHERE user_id = \(bind: id)").run()
            return true
        }
        guard found else { throw .notFound(what: "the user \(email)") }
    }

    static func user(from row: any SQLRow) throws -> UserRecord {
        UserRecord(
            id: try row.text("id"), email: try row.text("email"), displayName: try row.text("display_name"),
            passwordHash: try row.text("password_hash"), createdAt: try row.integer("created_at"),
            disabledAt: try row.optionalInteger("disabled_at"))
    }
}

extension ServerStore {
    /// Stores a session (its token's hash only).
    package func addSession(_ session: SessionRecord) async throws(ServerError) {
        try await addSession(session, keepingAtMost: .max)
    }

    /// Adds a session and ends the user's oldest ones past `limit`, in one transaction: a flood
    /// of sign-ins cannot grow one account's sessions without bound.
    package func addSession(_ session: SessionRecord, keepingAtMost limit: Int) async throws(ServerError) {
        try await database.transaction { sql in
            try await sql.raw("""
                INSERT INTO sessions (token_hash, user_id, app, created_at, expires_at)
                VALUES (\(bind: session.tokenHash), \(bind: session.userID), \(bind: session.app),
                        \(bind: session.createdAt), \(bind: session.expiresAt))
                """).run()
            guard limit < Int.max else { return }
            // The new session stays; of the others, the newest `limit - 1` (times are seconds:
            // ties keep an arbitrary one of the same second).
            try await sql.raw("""
                DELETE FROM sessions WHERE user_id = \(bind: session.userID) AND token_hash <> \(bind: session.tokenHash)
                AND token_hash NOT IN (
                    SELECT token_hash FROM sessions WHERE user_id = \(bind: session.userID) AND token_hash <> \(bind: session.tokenHash)
                    ORDER BY created_at DESC, token_hash LIMIT \(bind: max(0, limit - 1)))
                """).run()
        }
    }

    /// The unexpired session with the token hash and its user, or nil.
    package func session(tokenHash: String) async throws(ServerError) -> (SessionRecord, UserRecord)? {
        let now = self.now
        return try await database.withConnection { sql in
            guard let row = try await sql.raw("""
                SELECT s.token_hash, s.user_id, s.app, s.created_at AS s_created, s.expires_at,
                       u.id, u.email, u.display_name, u.password_hash, u.created_at, u.disabled_at
                FROM sessions s JOIN users u ON u.id = s.user_id
                WHERE s.token_hash = \(bind: tokenHash) AND s.expires_at > \(bind: now)
                """).first() else { return nil }
            let session = SessionRecord(
                tokenHash: try row.text("token_hash"), userID: try row.text("user_id"), app: try row.text("app"),
                createdAt: try row.integer("s_created"), expiresAt: try row.integer("expires_at"))
            return (session, try Self.user(from: row))
        }
    }

    /// Ends one session; false when there was none.
    @discardableResult
    package func deleteSession(tokenHash: String) async throws(ServerError) -> Bool {
        try await database.withConnection { sql in
            try await sql.raw("DELETE FROM sessions WHERE token_hash = \(bind: tokenHash) RETURNING token_hash").first() != nil
        }
    }

    /// Ends every session of the user; returns how many there were.
    @discardableResult
    package func deleteSessions(userID: String) async throws(ServerError) -> Int {
        try await database.withConnection { sql in
            try await sql.raw("DELETE FROM sessions WHERE user_id = \(bind: userID) RETURNING token_hash").all().count
        }
    }

    /// Removes expired sessions and nonces, and rate-limit counters whose window of
    /// `rateLimitWindow` seconds has passed; returns how many rows went.
    @discardableResult
    package func purgeExpired(rateLimitWindow: Int64) async throws(ServerError) -> Int {
        let now = self.now
        return try await database.withConnection { sql in
            let sessions = try await sql.raw("DELETE FROM sessions WHERE expires_at <= \(bind: now) RETURNING token_hash").all().count
            let nonces = try await sql.raw("DELETE FROM nonces WHERE expires_at <= \(bind: now) RETURNING nonce").all().count
            let limits = try await sql.raw("DELETE FROM rate_limits WHERE window_start <= \(bind: now - rateLimitWindow) RETURNING bucket")
                .all().count
            return sessions + nonces + limits
        }
    }
}
