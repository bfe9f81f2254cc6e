import Foundation
import SQLKit
import SignetCore

extension ServerStore {
    /// Rate-limit counters: attempts counted per bucket in fixed windows (`store.limits`).
    package struct Limits: Sendable {
        let database: ServerDatabase
        let clock: WallClock

        var now: Int64 { clock.unixSeconds }

        /// Counts one attempt in `bucket`'s fixed window of `window` seconds, atomically, and
        /// returns the seconds to wait when that makes more than `limit` in the window (nil: go
        /// ahead). Counting before the slow password check means parallel attempts cannot all slip
        /// under the limit; a successful one is taken back with ``forgiveAttempt(bucket:)``.
        package func countAttempt(bucket: String, limit: Int, window: Int64) async throws -> Int? {
            let now = self.now
            let stale = now - window
            let (start, attempts) = try await database.withConnection(durability: .relaxed) { sql in
                let row = try await sql.raw("""
                    INSERT INTO rate_limits (bucket, window_start, failures) VALUES (\(bind: bucket), \(bind: now), 1)
                    ON CONFLICT (bucket) DO UPDATE SET
                        failures = CASE WHEN rate_limits.window_start <= \(bind: stale) THEN 1 ELSE rate_limits.failures + 1 END,
                        window_start = CASE WHEN rate_limits.window_start <= \(bind: stale) THEN \(bind: now) ELSE rate_limits.window_start END
                    RETURNING window_start, failures
                    """).first()
                guard let row else { return (now, Int64(1)) }
                return (try row.integer("window_start"), try row.integer("failures"))
            }
            guard attempts > Int64(limit) else { return nil }
            return Int(max(1, start + window - now))
        }

        /// The attempts counted in `bucket`'s current window of `window` seconds (0 when none or expired).
        package func attempts(bucket: String, window: Int64) async throws -> Int {
            let stale = now - window
            return try await database.withConnection(durability: .relaxed) { sql in
                let row = try await sql.raw("""
                    SELECT failures FROM rate_limits WHERE bucket = \(bind: bucket) AND window_start > \(bind: stale)
                    """).first()
                return Int(try row?.integer("failures") ?? 0)
            }
        }

        /// Takes back one counted attempt (it succeeded, or it was refused before being tried).
        package func forgiveAttempt(bucket: String) async throws {
            try await database.withConnection(durability: .relaxed) { sql in
                try await sql.raw("UPDATE rate_limits SET failures = failures - 1 WHERE bucket = \(bind: bucket) AND failures > 0").run()
            }
        }

        /// Forgets `bucket`'s failures (a successful sign-in clears its account's count).
        package func clearFailures(bucket: String) async throws {
            try await database.withConnection(durability: .relaxed) { sql in
                try await sql.raw("DELETE FROM rate_limits WHERE bucket = \(bind: bucket)").run()
            }
        }
    }
}
