import SignetAPI
import Foundation
import NIOCore
import SQLKit
import SignetBundle
import SignetCore

extension ServerStore {
    /// Bundles are stored in rows of this many bytes, so that serving one (or a range of one)
    /// never holds more than a few chunks in memory.
    package static let resourceChunkSize = 1 << 20

    /// The newest version of `name`, nil when none is published.
    package func latestResource(name: String) async throws(ServerError) -> ResourceRecord? {
        try await database.withConnection { sql in
            try await sql.raw("""
                SELECT * FROM resources WHERE name = \(bind: name) ORDER BY version DESC LIMIT 1
                """).first().map(Self.resource(from:))
        }
    }

    /// The version `version` of `name`, nil when it was never published.
    package func resource(name: String, version: Int64) async throws(ServerError) -> ResourceRecord? {
        try await database.withConnection { sql in
            try await sql.raw("""
                SELECT * FROM resources WHERE name = \(bind: name) AND version = \(bind: version)
                """).first().map(Self.resource(from:))
        }
    }

    /// Every published version, by name and then version.
    package func resources() async throws(ServerError) -> [ResourceRecord] {
        try await database.withConnection { sql in
            try await sql.raw("SELECT * FROM resources ORDER BY name, version").all().map(Self.resource(from:))
        }
    }

    /// Stores the bundle at `path` as `record` — its `size` and `sha256` taken from the bytes
    /// as they are stored — in one transaction with every chunk: the version appears whole or
    /// not at all, on every node. Refused with ``ServerError/conflict(detail:)`` unless it is
    /// newer than every stored version of the name. Returns the stored record.
    @discardableResult
    package func publishResource(_ record: ResourceRecord, bundlePath path: String) async throws(ServerError) -> ResourceRecord {
        let postgres = !database.isSQLite
        return try await database.transaction { sql in
            if postgres {
                // Two publishes of one name take turns (SQLite's BEGIN IMMEDIATE already does).
                try await sql.raw("SELECT pg_advisory_xact_lock(hashtext(\(bind: "signet-resource/" + record.name)))").run()
            }
            let input = try FileInput(path: path)
            let newest = try await sql.raw("SELECT MAX(version) AS newest FROM resources WHERE name = \(bind: record.name)")
                .first()?.decode(column: "newest", as: Int?.self)
            if let newest, Int64(newest) >= record.version {
                throw ServerError.conflict(detail: "\(record.name) is already at version \(newest); a version is published once, and only a newer one after it")
            }
            var chunk: Int64 = 0
            var stored: Int64 = 0
            var hasher = DigestAlgorithm.sha256.makeHasher()
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.resourceChunkSize, alignment: 16)
            defer { buffer.deallocate() }
            while true {
                var filled = 0
                while filled < buffer.count {
                    let count = try input.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
                    if count == 0 { break }
                    filled += count
                }
                if filled == 0 { break }
                let bytes = UnsafeRawBufferPointer(rebasing: buffer[0..<filled])
                hasher.update(bufferPointer: bytes)
                let data = ByteBuffer(bytes: bytes)
                try await sql.raw("""
                    INSERT INTO resource_chunks (name, version, chunk, data)
                    VALUES (\(bind: record.name), \(bind: record.version), \(bind: chunk), \(bind: data))
                    """).run()
                chunk += 1
                stored += Int64(filled)
                if filled < buffer.count { break }
            }
            var record = record
            record.size = stored
            record.sha256 = Hex.encode(hasher.finalize().bytes)
            try await sql.raw("""
                INSERT INTO resources (name, version, size, sha256, manifest_sha256, expires_at, signed_by, published_by, published_at)
                VALUES (\(bind: record.name), \(bind: record.version), \(bind: record.size), \(bind: record.sha256),
                        \(bind: record.manifestSHA256), \(bind: record.expiresAt), \(bind: record.signedBy),
                        \(bind: record.publishedBy), \(bind: record.publishedAt))
                """).run()
            return record
        }
    }

    /// `length` bytes of one stored chunk from `offset` (fewer at its end): a download reads
    /// this much at a time, so it never holds a whole chunk while a slow client drains it.
    package func resourceSlice(name: String, version: Int64, chunk: Int64, offset: Int, length: Int) async throws(ServerError) -> ByteBuffer? {
        try await database.withConnection { sql in
            // substr on a BLOB (SQLite) or bytea (PostgreSQL) counts bytes from 1 in both; PostgreSQL's
            // takes 32-bit integers.
            try await sql.raw("""
                SELECT substr(data, CAST(\(bind: offset + 1) AS INTEGER), CAST(\(bind: length) AS INTEGER)) AS data FROM resource_chunks
                WHERE name = \(bind: name) AND version = \(bind: version) AND chunk = \(bind: chunk)
                """).first().map { try $0.decode(column: "data", as: ByteBuffer.self) }
        }
    }

    /// The chunks `chunks` of a stored version, in order.
    package func resourceChunks(name: String, version: Int64, _ chunks: ClosedRange<Int64>) async throws(ServerError) -> [ByteBuffer] {
        try await database.withConnection { sql in
            try await sql.raw("""
                SELECT data FROM resource_chunks
                WHERE name = \(bind: name) AND version = \(bind: version)
                      AND chunk >= \(bind: chunks.lowerBound) AND chunk <= \(bind: chunks.upperBound)
                ORDER BY chunk
                """).all().map { try $0.decode(column: "data", as: ByteBuffer.self) }
        }
    }

    static func resource(from row: any SQLRow) throws -> ResourceRecord {
        ResourceRecord(
            name: try row.text("name"), version: try row.integer("version"), size: try row.integer("size"),
            sha256: try row.text("sha256"), manifestSHA256: try row.text("manifest_sha256"),
            expiresAt: try row.optionalInteger("expires_at"), signedBy: try row.text("signed_by"),
            publishedBy: try row.text("published_by"), publishedAt: try row.integer("published_at"))
    }

    // MARK: The trust root

    /// The stored trust roots newer than `version`, oldest first, as their file bytes.
    package func trustRoots(after version: Int64 = 0) async throws(ServerError) -> [[UInt8]] {
        try await database.withConnection { sql in
            try await sql.raw("SELECT root FROM trust_roots WHERE version > \(bind: version) ORDER BY version")
                .all().map { Array(try $0.text("root").utf8) }
        }
    }

    /// The newest trust root, nil before the first is stored.
    package func currentTrustRoot() async throws(ServerError) -> TrustRoot? {
        guard let text = try await database.withConnection({ sql in try await Self.newestTrustRootText(sql) }) else { return nil }
        return try Self.storedTrustRoot(text)
    }

    /// The text of the newest stored trust root, nil before the first.
    private static func newestTrustRootText(_ sql: any SQLDatabase) async throws -> String? {
        try await sql.raw("SELECT root FROM trust_roots ORDER BY version DESC LIMIT 1").first().map { try $0.text("root") }
    }

    /// A stored trust root read back; one that does not read is a damaged database.
    private static func storedTrustRoot(_ text: String) throws(ServerError) -> TrustRoot {
        do {
            return try TrustRoot(bytes: Array(text.utf8), source: "the stored trust root")
        } catch {
            throw .unavailable(detail: "the stored trust root cannot be read: \(error)")
        }
    }

    /// Stores `root` as the first trust root when there is none. When there is one already,
    /// `root` must be one of the stored versions, byte for byte, if `mustMatch` (an operator's
    /// root file), and is ignored otherwise (the default root of a node's key). Returns the
    /// current root.
    @discardableResult
    public func seedTrustRoot(_ root: TrustRoot, mustMatch: Bool = true) async throws(ServerError) -> TrustRoot {
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
            throw .configuration(detail: "the database holds another trust root than the one given (version \(root.version)); a new root is added as a rotation signed by the current one")
        }
        return try Self.storedTrustRoot(current)
    }

    /// Adds `next` as the next trust root: its version must follow the current one, and a
    /// threshold of the current root's keys must have signed it (checked again inside the
    /// transaction, so two rotations at once cannot both land).
    package func rotateTrustRoot(to next: TrustRoot) async throws(ServerError) {
        let text = String(decoding: next.fileBytes, as: UTF8.self)
        let now = self.now
        try await database.transaction { sql in
            guard let stored = try await Self.newestTrustRootText(sql) else {
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
