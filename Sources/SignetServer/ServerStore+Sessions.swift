import SQLKit
import SignetCore

extension ServerStore {
    /// Signed-in sessions, found by the hash of their bearer token (`store.sessions`).
    package struct Sessions: Sendable {
        let database: ServerDatabase
        let clock: WallClock

        var now: Int64 { clock.unixSeconds }

        /// Stores a session (its token's hash only).
        package func add(_ session: SessionRecord) async throws {
            try await add(session, keepingAtMost: .max)
        }

        /// Adds a session and ends the user's oldest ones past `limit`, in one transaction: a flood
        /// of sign-ins cannot grow one account's sessions without bound.
        package func add(_ session: SessionRecord, keepingAtMost limit: Int) async throws {
            try await database.transaction { sql in
                try await sql.raw("""
                    INSERT INTO sessions (token_hash, user_id, app, created_at, expires_at, device)
                    VALUES (\(bind: session.tokenHash), \(bind: session.userID), \(bind: session.app),
                            \(bind: session.createdAt), \(bind: session.expiresAt), \(bind: session.device))
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

        /// The unexpired session with the token hash and its user (one query joining `users`), or nil.
        package func find(tokenHash: String) async throws -> (SessionRecord, UserRecord)? {
            let now = self.now
            return try await database.withConnection { sql in
                guard let row = try await sql.raw("""
                    SELECT s.token_hash, s.user_id, s.app, s.created_at AS s_created, s.expires_at, s.device,
                           u.id, u.email, u.display_name, u.password_hash, u.created_at, u.disabled_at
                    FROM sessions s JOIN users u ON u.id = s.user_id
                    WHERE s.token_hash = \(bind: tokenHash) AND s.expires_at > \(bind: now)
                    """).first() else { return nil }
                let session = SessionRecord(
                    tokenHash: try row.text("token_hash"), userID: try row.text("user_id"), app: try row.text("app"),
                    createdAt: try row.integer("s_created"), expiresAt: try row.integer("expires_at"), device: try row.optionalText("device"))
                return (session, try Users.record(from: row))
            }
        }

        /// Ends one session; false when there was none.
        @discardableResult
        package func delete(tokenHash: String) async throws -> Bool {
            try await database.withConnection { sql in
                try await sql.raw("DELETE FROM sessions WHERE token_hash = \(bind: tokenHash) RETURNING token_hash").first() != nil
            }
        }

        /// Ends every session of the user; returns how many there were.
        @discardableResult
        package func deleteAll(userID: String) async throws -> Int {
            try await database.withConnection { sql in
                try await sql.raw("DELETE FROM sessions WHERE user_id = \(bind: userID) RETURNING token_hash").all().count
            }
        }
    }
}
