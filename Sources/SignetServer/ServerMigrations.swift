import SQLKit

/// The database schema, as numbered migrations applied in order on start and recorded in
/// `signet_schema`. A migration is only ever added, never edited: a node finding a version it
/// does not know refuses to start rather than guess.
///
/// Types are the common ground of SQLite and PostgreSQL: `TEXT` and `BIGINT` (times are Unix
/// seconds, small binary values base64), and `BLOB` for resource chunks (`BYTEA` on PostgreSQL). Several nodes starting at once take turns: on PostgreSQL
/// under an advisory lock, on SQLite under the write lock.
enum ServerMigrations {
    static let all: [[String]] = [
        // 1: principals (apps and admins), users, sessions, nonces, rate limits.
        [
            """
            CREATE TABLE principals (
                key_id TEXT PRIMARY KEY,
                role TEXT NOT NULL,
                name TEXT NOT NULL,
                algorithm TEXT NOT NULL,
                public_key TEXT,
                secret TEXT,
                created_at BIGINT NOT NULL,
                revoked_at BIGINT,
                UNIQUE (role, name)
            )
            """,
            """
            CREATE TABLE users (
                id TEXT PRIMARY KEY,
                email TEXT NOT NULL UNIQUE,
                display_name TEXT NOT NULL,
                password_hash TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                disabled_at BIGINT
            )
            """,
            """
            CREATE TABLE sessions (
                token_hash TEXT PRIMARY KEY,
                user_id TEXT NOT NULL REFERENCES users(id),
                app TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX sessions_by_user ON sessions (user_id)",
            """
            CREATE TABLE nonces (
                key_id TEXT NOT NULL,
                nonce TEXT NOT NULL,
                expires_at BIGINT NOT NULL,
                PRIMARY KEY (key_id, nonce)
            )
            """,
            "CREATE INDEX nonces_by_expiry ON nonces (expires_at)",
            """
            CREATE TABLE rate_limits (
                bucket TEXT PRIMARY KEY,
                window_start BIGINT NOT NULL,
                failures BIGINT NOT NULL
            )
            """,
        ],
        // 2: published resources (bundles, stored in the database in chunks so that every node
        // serves every version) and the resource trust root's versions.
        [
            """
            CREATE TABLE resources (
                name TEXT NOT NULL,
                version BIGINT NOT NULL,
                size BIGINT NOT NULL,
                sha256 TEXT NOT NULL,
                manifest_sha256 TEXT NOT NULL,
                expires_at BIGINT,
                signed_by TEXT NOT NULL,
                published_by TEXT NOT NULL,
                published_at BIGINT NOT NULL,
                PRIMARY KEY (name, version)
            )
            """,
            """
            CREATE TABLE resource_chunks (
                name TEXT NOT NULL,
                version BIGINT NOT NULL,
                chunk BIGINT NOT NULL,
                data BLOB NOT NULL,
                PRIMARY KEY (name, version, chunk)
            )
            """,
            """
            CREATE TABLE trust_roots (
                version BIGINT PRIMARY KEY,
                root TEXT NOT NULL,
                added_at BIGINT NOT NULL
            )
            """,
        ],
        // 3: a check value of each key the server seals data with (the HMAC app secrets'), so
        // that a node holding another key refuses to start (ServerStore.Principals.sealStoredSecrets).
        [
            """
            CREATE TABLE server_keys (
                purpose TEXT PRIMARY KEY,
                key_check TEXT NOT NULL,
                added_at BIGINT NOT NULL
            )
            """,
        ],
        // 4: devices enrolled by attestation (App Attest, Android key attestation), the one-time
        // challenges they enrol with, each app's platform identities and policy, and the device
        // a session was started from.
        [
            """
            CREATE TABLE app_attestation (
                app TEXT PRIMARY KEY,
                apple_app_id TEXT,
                apple_environments TEXT,
                android_package TEXT,
                android_signers TEXT,
                android_min_security TEXT,
                required BIGINT NOT NULL,
                updated_at BIGINT NOT NULL
            )
            """,
            """
            CREATE TABLE device_challenges (
                challenge TEXT PRIMARY KEY,
                app TEXT NOT NULL,
                expires_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX device_challenges_by_expiry ON device_challenges (expires_at)",
            """
            CREATE TABLE devices (
                id TEXT PRIMARY KEY,
                key_id TEXT NOT NULL UNIQUE,
                app TEXT NOT NULL,
                platform TEXT NOT NULL,
                public_key TEXT NOT NULL,
                counter BIGINT NOT NULL,
                facts TEXT NOT NULL,
                receipt TEXT,
                created_at BIGINT NOT NULL,
                revoked_at BIGINT
            )
            """,
            "CREATE INDEX devices_by_app ON devices (app, created_at)",
            "ALTER TABLE sessions ADD COLUMN device TEXT",
        ],
    ]

    /// Brings the schema up to date; returns the versions applied now.
    @discardableResult
    static func migrate(_ database: ServerDatabase, now: Int64) async throws -> [Int] {
        let postgres = !database.isSQLite
        return try await database.transaction { sql in
            if postgres {
                // One node migrates at a time; the lock ends with the transaction.
                try await sql.raw("SELECT pg_advisory_xact_lock(\(literal: 0x5369676E6574))").run()
            }
            try await sql.raw("CREATE TABLE IF NOT EXISTS signet_schema (version BIGINT PRIMARY KEY, applied_at BIGINT NOT NULL)").run()
            let rows = try await sql.raw("SELECT version FROM signet_schema").all()
            let applied = Set(try rows.map { try $0.decode(column: "version", as: Int.self) })
            if let newest = applied.max(), newest > all.count {
                throw ServerError.configuration(
                    detail: "the database has schema version \(newest), newer than this server knows (\(all.count)); upgrade the server")
            }
            var done: [Int] = []
            for (index, statements) in all.enumerated() where !applied.contains(index + 1) {
                for statement in statements {
                    let dialect = postgres ? statement.replacingOccurrences(of: " BLOB ", with: " BYTEA ") : statement
                    try await sql.raw(SQLQueryString(dialect)).run()
                }
                try await sql.raw("INSERT INTO signet_schema (version, applied_at) VALUES (\(bind: index + 1), \(bind: now))").run()
                done.append(index + 1)
            }
            return done
        }
    }
}
