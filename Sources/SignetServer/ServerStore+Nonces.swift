import SQLKit
import SignetCore

extension ServerStore {
    /// The nonces of signed requests, recorded until they expire so that a replay is refused
    /// (`store.nonces`; used by `LocalReplayCache` and `SharedReplayCache`).
    package struct Nonces: Sendable {
        let database: ServerDatabase
        let clock: WallClock

        var now: Int64 { clock.unixSeconds }

        /// Records a nonce until `expiry`; false when it is already recorded and unexpired (a
        /// replay). One statement, atomic on every node: of two nodes seeing the same nonce at
        /// once, exactly one gets true. Committed with relaxed durability: a nonce survives a
        /// node's crash, and only a power loss of the database machine could forget the last
        /// ones (a replay window of those few requests, which their `created` still bounds).
        package func insert(_ nonce: String, keyID: String, until expiry: Int64) async throws -> Bool {
            let now = self.now
            return try await database.withConnection(durability: .relaxed) { sql in
                try await sql.raw("""
                    INSERT INTO nonces (key_id, nonce, expires_at) VALUES (\(bind: keyID), \(bind: nonce), \(bind: expiry))
                    ON CONFLICT (key_id, nonce) DO UPDATE SET expires_at = excluded.expires_at
                    WHERE nonces.expires_at <= \(bind: now)
                    RETURNING nonce
                    """).first() != nil
            }
        }

        /// Records the nonces, in one statement; returns those that were new (the others are
        /// replays of unexpired ones).
        func insertAll(_ nonces: [(keyID: String, nonce: String, expiry: Int64)]) async throws -> Set<StoredNonceKey> {
            guard !nonces.isEmpty else { return [] }
            let now = self.now
            let rows = nonces.map { "(\(bind: $0.keyID), \(bind: $0.nonce), \(bind: $0.expiry))" as SQLQueryString }.joined(separator: ", ")
            return try await database.withConnection(durability: .relaxed) { sql in
                let inserted = try await sql.raw("""
                    INSERT INTO nonces (key_id, nonce, expires_at) VALUES \(rows)
                    ON CONFLICT (key_id, nonce) DO UPDATE SET expires_at = excluded.expires_at
                    WHERE nonces.expires_at <= \(bind: now)
                    RETURNING key_id, nonce
                    """).all()
                return Set(try inserted.map { StoredNonceKey(keyID: try $0.text("key_id"), nonce: try $0.text("nonce")) })
            }
        }

        /// The unexpired nonces, at most `limit`.
        package func unexpired(limit: Int) async throws -> [(keyID: String, nonce: String, expiry: Int64)] {
            let now = self.now
            return try await database.withConnection { sql in
                try await sql.raw("""
                    SELECT key_id, nonce, expires_at FROM nonces WHERE expires_at > \(bind: now) LIMIT \(bind: limit)
                    """).all().map { (try $0.text("key_id"), try $0.text("nonce"), try $0.integer("expires_at")) }
            }
        }
    }
}

/// A key id and nonce, as the database returns the ones it recorded.
struct StoredNonceKey: Hashable {
    let keyID: String
    let nonce: String
}
