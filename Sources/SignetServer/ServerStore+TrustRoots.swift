import SQLKit
import SignetBundle
import SignetCore

extension ServerStore {
    /// The trust root's versions (`store.trustRoots`): the first one seeded by the operator, each
    /// later one a rotation signed by a threshold of the keys of the one before. Clients walk
    /// them to reach the current root; resources are checked against the current one.
    public struct TrustRoots: Sendable {
        let database: ServerDatabase
        let clock: WallClock

        var now: Int64 { clock.unixSeconds }

        /// The stored trust roots newer than `version`, oldest first, as their file bytes.
        package func all(after version: Int64 = 0) async throws -> [[UInt8]] {
            try await database.withConnection { sql in
                try await sql.raw("SELECT root FROM trust_roots WHERE version > \(bind: version) ORDER BY version")
                    .all().map { Array(try $0.text("root").utf8) }
            }
        }

        /// The newest trust root, nil before the first is stored.
        package func current() async throws -> TrustRoot? {
            guard let text = try await database.withConnection({ sql in try await Self.newestText(sql) }) else { return nil }
            return try Self.storedRoot(text)
        }

        /// The text of the newest stored trust root, nil before the first.
        private static func newestText(_ sql: any SQLDatabase) async throws -> String? {
            try await sql.raw("SELECT root FROM trust_roots ORDER BY version DESC LIMIT 1").first().map { try $0.text("root") }
        }

        /// A stored trust root read back; one that does not read is a damaged database.
        private static func storedRoot(_ text: String) throws -> TrustRoot {
            do {
                return try TrustRoot(bytes: Array(text.utf8), source: "the stored trust root")
            } catch {
                throw ServerError.unavailable(detail: "the stored trust root cannot be read: \(error)")
            }
        }

        /// Stores `root` as the first trust root when there is none. When there is one already,
        /// `root` must be one of the stored versions, byte for byte, if `mustMatch` (an operator's
        /// root file), and is ignored otherwise (the default root of a node's key). Returns the
        /// current root.
        @discardableResult
        public func seed(_ root: TrustRoot, mustMatch: Bool = true) async throws -> TrustRoot {
            let text = String(decoding: root.fileBytes, as: UTF8.self)
            let now = self.now
            // Whether `root` may stand, and the newest root's text.
            let (stored, current) = try await database.transaction { sql in
                let rows = try await sql.raw("SELECT version, root FROM trust_roots ORDER BY version").all()
                guard let newest = rows.last else {
                    try await sql.raw("""
                        INSERT INTO trust_roots (version, root, added_at) VALUES (\(bind: root.version), \(bind: text), \(bind: now))
                        """).run()
                    return (true, text)
                }
                return (try !mustMatch || rows.contains { try $0.text("root") == text }, try newest.text("root"))
            }
            guard stored else {
                throw ServerError.configuration(detail: "the database holds another trust root than the one given (version \(root.version)); a new root is added as a rotation signed by the current one")
            }
            return try Self.storedRoot(current)
        }

        /// Adds `next` as the next trust root: its version must follow the current one, and a
        /// threshold of the current root's keys must have signed it (checked again inside the
        /// transaction, so two rotations at once cannot both land).
        package func rotate(to next: TrustRoot) async throws {
            let text = String(decoding: next.fileBytes, as: UTF8.self)
            let now = self.now
            try await database.transaction { sql in
                guard let stored = try await Self.newestText(sql) else {
                    throw ServerError.conflict(detail: "there is no trust root to rotate from yet")
                }
                let current = try TrustRoot(bytes: Array(stored.utf8), source: "the stored trust root")
                if current.fileBytes == next.fileBytes { return }
                do {
                    try current.accepts(next, source: "the new trust root")
                } catch {
                    throw ServerError.unprocessable(field: "the trust root", detail: "\(error)")
                }
                try await sql.raw("""
                    INSERT INTO trust_roots (version, root, added_at) VALUES (\(bind: next.version), \(bind: text), \(bind: now))
                    """).run()
            }
        }
    }
}
