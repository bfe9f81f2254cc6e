import SQLKit
import SignetCore

extension ServerStore {
    /// Registered users: their e-mail, display name and password hash (`store.users`).
    package struct Users: Sendable {
        let database: ServerDatabase
        let clock: WallClock

        var now: Int64 { clock.unixSeconds }

        /// Adds a user; ``ServerError/conflict(detail:)`` when the e-mail is taken. One statement:
        /// after a crash the user is either fully there or not at all.
        package func add(_ user: UserRecord) async throws {
            let inserted = try await database.withConnection { sql in
                try await sql.raw("""
                    INSERT INTO users (id, email, display_name, password_hash, created_at, disabled_at)
                    VALUES (\(bind: user.id), \(bind: user.email), \(bind: user.displayName), \(bind: user.passwordHash),
                            \(bind: user.createdAt), NULL)
                    ON CONFLICT DO NOTHING RETURNING id
                    """).first() != nil
            }
            guard inserted else { throw ServerError.conflict(detail: "an account with this e-mail address already exists") }
        }

        /// The user with the (normalised) e-mail address, or nil.
        package func find(email: String) async throws -> UserRecord? {
            try await database.withConnection { sql in
                try await sql.raw("SELECT * FROM users WHERE email = \(bind: email)").first().map(Self.record(from:))
            }
        }

        /// The user stored under the first of `emails` that has one, or nil.
        package func find(anyOf emails: [String]) async throws -> UserRecord? {
            for email in emails {
                if let user = try await find(email: email) { return user }
            }
            return nil
        }

        /// The user with the id, or nil.
        package func find(id: String) async throws -> UserRecord? {
            try await database.withConnection { sql in
                try await sql.raw("SELECT * FROM users WHERE id = \(bind: id)").first().map(Self.record(from:))
            }
        }

        /// Every user, oldest first, at most `limit`.
        package func all(limit: Int = 10_000) async throws -> [UserRecord] {
            try await database.withConnection { sql in
                try await sql.raw("SELECT * FROM users ORDER BY created_at, email LIMIT \(bind: limit)").all().map(Self.record(from:))
            }
        }

        /// Replaces the password hash (a re-hash under a stronger policy).
        package func updatePasswordHash(userID: String, to hash: String) async throws {
            try await database.withConnection { sql in
                try await sql.raw("UPDATE users SET password_hash = \(bind: hash) WHERE id = \(bind: userID)").run()
            }
        }

        /// Disables the account and ends all its sessions, in one transaction (the user is the
        /// primary record, so this lives here and not on `ServerStore.Sessions`);
        /// ``ServerError/notFound(what:)`` when there is no such user.
        package func disable(email: String) async throws {
            let now = self.now
            let found = try await database.transaction { sql -> Bool in
                guard let row = try await sql.raw("""
                    UPDATE users SET disabled_at = COALESCE(disabled_at, \(bind: now)) WHERE email = \(bind: email) RETURNING id
                    """).first() else { return false }
                let id = try row.text("id")
                try await sql.raw("DELETE FROM sessions WHERE user_id = \(bind: id)").run()
                return true
            }
            guard found else { throw ServerError.notFound(what: "the user \(email)") }
        }

        /// The user a row of `users` holds (also the user columns of a session's join).
        static func record(from row: any SQLRow) throws -> UserRecord {
            UserRecord(
                id: try row.text("id"), email: try row.text("email"), displayName: try row.text("display_name"),
                passwordHash: try row.text("password_hash"), createdAt: try row.integer("created_at"),
                disabledAt: try row.optionalInteger("disabled_at"))
        }
    }
}
