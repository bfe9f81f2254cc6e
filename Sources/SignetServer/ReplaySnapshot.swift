import Crypto
import SignetHTTP

/// What a node on SQLite leaves for the next start when it stops cleanly
/// (``LocalReplayCache/persist(logger:)``): its start, its high-water mark and the nonces its
/// replay cache holds, as fingerprints under its salts. The file is private to the server and
/// read once; a damaged or truncated one (its SHA-256 does not match) is ignored, and the next
/// start then refuses what was signed before it, which is always safe.
///
/// Layout: the magic line, then little-endian start (Int64), high-water mark (Int64), the two
/// salts (UInt64), the count (UInt64), each entry's two fingerprint halves (UInt64) and expiry
/// (Float64 bits), and the SHA-256 of everything before it.
package struct ReplaySnapshot: Sendable {
    package var start: Int64
    package var highWater: Int64
    package var cache: InMemoryNonceCache.Snapshot

    static let magic = Array("signet-replay-snapshot-1\n".utf8)

    /// The size of a snapshot of `entries` nonces.
    static func size(entries: Int) -> Int { magic.count + 40 + 24 * entries + 32 }

    package func encoded() -> [UInt8] {
        var bytes = Self.magic
        bytes.reserveCapacity(bytes.count + 40 + cache.entries.count * 24 + 32)
        func append(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
        append(UInt64(bitPattern: start))
        append(UInt64(bitPattern: highWater))
        append(cache.salts.0)
        append(cache.salts.1)
        append(UInt64(cache.entries.count))
        for entry in cache.entries {
            append(entry.high)
            append(entry.low)
            append(entry.expiry.bitPattern)
        }
        bytes.append(contentsOf: SHA256.hash(data: bytes))
        return bytes
    }

    package init(start: Int64, highWater: Int64, cache: InMemoryNonceCache.Snapshot) {
        self.start = start
        self.highWater = highWater
        self.cache = cache
    }

    /// The snapshot in `bytes`, or nil when they are not a whole, intact one.
    package init?(decoding bytes: [UInt8]) {
        let header = Self.magic.count + 40
        guard bytes.count >= header + 32, bytes.starts(with: Self.magic) else { return nil }
        let body = bytes[..<(bytes.count - 32)]
        guard Array(SHA256.hash(data: body)) == Array(bytes[(bytes.count - 32)...]) else { return nil }
        var offset = Self.magic.count
        func next() -> UInt64 {
            var value: UInt64 = 0
            for index in 0..<8 { value |= UInt64(bytes[offset + index]) << (8 * index) }
            offset += 8
            return value
        }
        start = Int64(bitPattern: next())
        highWater = Int64(bitPattern: next())
        let salts = (next(), next())
        let count = next()
        guard count <= UInt64((body.count - header) / 24), UInt64(body.count - header) == count * 24 else { return nil }
        var entries: [(high: UInt64, low: UInt64, expiry: Double)] = []
        entries.reserveCapacity(Int(count))
        for _ in 0..<count { entries.append((next(), next(), Double(bitPattern: next()))) }
        cache = InMemoryNonceCache.Snapshot(salts: salts, entries: entries)
    }
}
