import SignetAPI
import Foundation
import NIOCore
import SQLKit
import SignetCore

extension ServerStore {
    /// Published resources: each version's record and its bundle's bytes in chunks
    /// (`store.resources`).
    package struct Resources: Sendable {
        let database: ServerDatabase

        /// Bundles are stored in rows of this many bytes, so that serving one (or a range of one)
        /// never holds more than a few chunks in memory.
        package static let chunkSize = 1 << 20

        /// The newest version of `name`, nil when none is published.
        package func latest(name: String) async throws -> ResourceRecord? {
            try await database.withConnection { sql in
                try await sql.raw("""
                    SELECT * FROM resources WHERE name = \(bind: name) ORDER BY version DESC LIMIT 1
                    """).first().map(Self.record(from:))
            }
        }

        /// The version `version` of `name`, nil when it was never published.
        package func find(name: String, version: Int64) async throws -> ResourceRecord? {
            try await database.withConnection { sql in
                try await sql.raw("""
                    SELECT * FROM resources WHERE name = \(bind: name) AND version = \(bind: version)
                    """).first().map(Self.record(from:))
            }
        }

        /// Every published version, by name and then version.
        package func all() async throws -> [ResourceRecord] {
            try await database.withConnection { sql in
                try await sql.raw("SELECT * FROM resources ORDER BY name, version").all().map(Self.record(from:))
            }
        }

        /// Stores the bundle at `path` as `record` — its `size` and `sha256` taken from the bytes
        /// as they are stored — in one transaction with every chunk: the version appears whole or
        /// not at all, on every node. Refused with ``ServerError/conflict(detail:)`` unless it is
        /// newer than every stored version of the name. Returns the stored record.
        @discardableResult
        package func publish(_ record: ResourceRecord, bundlePath path: String) async throws -> ResourceRecord {
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
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunkSize, alignment: 16)
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
        package func slice(name: String, version: Int64, chunk: Int64, offset: Int, length: Int) async throws -> ByteBuffer? {
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
        package func chunks(name: String, version: Int64, _ chunks: ClosedRange<Int64>) async throws -> [ByteBuffer] {
            try await database.withConnection { sql in
                try await sql.raw("""
                    SELECT data FROM resource_chunks
                    WHERE name = \(bind: name) AND version = \(bind: version)
                          AND chunk >= \(bind: chunks.lowerBound) AND chunk <= \(bind: chunks.upperBound)
                    ORDER BY chunk
                    """).all().map { try $0.decode(column: "data", as: ByteBuffer.self) }
            }
        }

        static func record(from row: any SQLRow) throws -> ResourceRecord {
            ResourceRecord(
                name: try row.text("name"), version: try row.integer("version"), size: try row.integer("size"),
                sha256: try row.text("sha256"), manifestSHA256: try row.text("manifest_sha256"),
                expiresAt: try row.optionalInteger("expires_at"), signedBy: try row.text("signed_by"),
                publishedBy: try row.text("published_by"), publishedAt: try row.integer("published_at"))
        }
    }
}
