import Crypto
import Foundation
import SignetCore
import Synchronization

/// Remembers the nonces of verified signatures until the signatures could no longer be
/// accepted anyway, so that a second use is refused.
public protocol NonceCache: Sendable {
    /// Records `nonce` for `keyID` until `expiry`. Returns false when it was already recorded
    /// (a replay). Throws ``HTTPSignatureError/replayCacheFull(detail:)`` when it cannot remember more.
    func insert(nonce: String, keyID: String, until expiry: Date) async throws -> Bool

    /// Records `nonce` for `keyID` until `expiry`, knowing the signature's `created` (nil when
    /// it has none): what a cache that does not outlive its process needs to refuse signatures
    /// made before it started (``HTTPSignatureError/createdBeforeStart(created:start:)``). The
    /// verifier calls this one; by default it is ``insert(nonce:keyID:until:)``.
    func insert(nonce: String, keyID: String, created: Int64?, until expiry: Date) async throws -> Bool
}

extension NonceCache {
    public func insert(nonce: String, keyID: String, created: Int64?, until expiry: Date) async throws -> Bool {
        try await insert(nonce: nonce, keyID: keyID, until: expiry)
    }
}

/// A ``NonceCache`` in memory, bounded: entries leave when they expire, and when it is full
/// of unexpired entries it refuses new ones (failing closed) rather than forgetting one that
/// could then be replayed.
///
/// Only nonces of signatures that verified reach it, so filling it takes valid keys; the
/// bound protects memory from a compromised or runaway client. For several server processes,
/// implement ``NonceCache`` over shared storage.
public final class InMemoryNonceCache: NonceCache {
    /// The most nonces held at once.
    public let capacity: Int
    private let clock: WallClock
    /// Two random salts, so that the fingerprints of this cache are its own.
    private let salts: (UInt64, UInt64)
    /// Whether fingerprints are SHA-256 (the same in every process, for a ``Snapshot`` another
    /// process restores) rather than the standard library's `Hasher`, which is seeded anew in
    /// each process.
    private let portable: Bool
    /// A lock rather than an actor: an insert is a few dictionary operations, cheaper than
    /// the thread hop an actor costs a server on every request.
    private let state = Mutex(State())

    /// What is remembered of a key id and nonce: two salted SipHash runs over both (128 bits on
    /// a 64-bit platform) rather than the strings. The dictionary then hashes and compares
    /// fixed-size keys without touching the heap, a large cache stays small, and two different
    /// pairs share a fingerprint with odds of about one in 2¹²⁸ per pair held (a shared one
    /// would refuse a new request as a replay, never let a replay through).
    private struct Fingerprint: Hashable {
        let high: UInt64
        let low: UInt64

        // `high` is already a uniform hash: the dictionary needs no more of it.
        func hash(into hasher: inout Hasher) { hasher.combine(high) }
    }

    /// A fingerprint as the sweep sees it: with the expiry it was inserted with, so the sweep
    /// reads the dictionary only for entries that have expired.
    private struct Inserted {
        let key: Fingerprint
        let expiry: Date
    }

    private struct State {
        var expiries: [Fingerprint: Date] = [:]
        /// Fingerprints in insertion order, for sweeping; may hold ones since removed or
        /// inserted again.
        var order: [Inserted] = []
        var head = 0
    }

    /// A cache holding at most `capacity` nonces (100,000 by default), which reads the time
    /// from `clock`.
    ///
    /// Room for `reserving` nonces — by default `capacity`, up to ``reservedCapacity`` — is
    /// reserved at once: about 110 bytes a nonce, 11 MiB for the default (of which the system
    /// backs the insertion order's part only as it fills). Past that room the cache grows, and
    /// each time it doubles it stops every request, under its lock, to copy all it holds; a
    /// server that expects more nonces within its signatures' lifetime reserves room for them.
    public convenience init(capacity: Int = 100_000, reserving: Int? = nil, clock: WallClock = .system) {
        var random = SystemRandomNumberGenerator()
        self.init(capacity: capacity, reserving: reserving, clock: clock, salts: (random.next(), random.next()), portable: false)
    }

    /// A cache whose fingerprints are SHA-256 under `salts` (those of a ``Snapshot`` to
    /// restore), the same in every process, when `portable` (only such a cache's snapshot can
    /// be restored by another process).
    package init(capacity: Int, reserving: Int?, clock: WallClock, salts: (UInt64, UInt64), portable: Bool) {
        self.capacity = max(1, capacity)
        self.clock = clock
        self.salts = salts
        self.portable = portable
        let reserved = min(self.capacity, max(0, reserving ?? Self.reservedCapacity))
        state.withLock {
            $0.expiries.reserveCapacity(reserved)
            // The insertion order runs up to twice the nonces held before it is compacted.
            $0.order.reserveCapacity(2 * reserved)
        }
    }

    /// The most nonces a cache reserves room for up front unless told otherwise (1,048,576); a
    /// larger one grows past it as it fills.
    public static let reservedCapacity = 1 << 20

    /// How many nonces are held now.
    public var count: Int { state.withLock { $0.expiries.count } }

    /// What a cache holds, for a process that follows this one to restore (a server's clean
    /// stop): the salts and every unexpired fingerprint with its expiry, in Unix seconds.
    package struct Snapshot: Sendable {
        package var salts: (UInt64, UInt64)
        package var entries: [(high: UInt64, low: UInt64, expiry: Double)]

        package init(salts: (UInt64, UInt64), entries: [(high: UInt64, low: UInt64, expiry: Double)]) {
            self.salts = salts
            self.entries = entries
        }
    }

    /// The unexpired entries and the salts.
    package func snapshot() -> Snapshot {
        let now = clock.now
        let entries = state.withLock { state in
            state.expiries.compactMap { key, expiry in
                expiry > now ? (high: key.high, low: key.low, expiry: expiry.timeIntervalSince1970) : nil
            }
        }
        return Snapshot(salts: salts, entries: entries)
    }

    /// Adds the entries of `snapshot`, which must have been taken with this cache's salts by a
    /// portable cache; false (nothing added) when the salts differ, this cache is not portable
    /// or they do not fit.
    package func restore(_ snapshot: Snapshot) -> Bool {
        guard portable, snapshot.salts == salts else { return false }
        let now = clock.now
        let capacity = capacity
        return state.withLock { state in
            let live = snapshot.entries.filter { $0.expiry > now.timeIntervalSince1970 }
            guard state.expiries.count + live.count <= capacity else { return false }
            for entry in live {
                let key = Fingerprint(high: entry.high, low: entry.low)
                let expiry = Date(timeIntervalSince1970: entry.expiry)
                if let known = state.expiries[key], known >= expiry { continue }
                state.expiries[key] = expiry
                state.order.append(Inserted(key: key, expiry: expiry))
            }
            // The sweep expects the order by expiry from its head: restored entries are sorted in.
            state.order.sort { $0.expiry < $1.expiry }
            state.head = 0
            return true
        }
    }

    /// Records `nonce` for `keyID` until `expiry`; false for a replay, and
    /// ``HTTPSignatureError/replayCacheFull(detail:)`` when ``capacity`` unexpired nonces are held.
    public func insert(nonce: String, keyID: String, until expiry: Date) async throws -> Bool {
        let now = clock.now
        let key = fingerprint(nonce: nonce, keyID: keyID)
        let capacity = capacity
        return try state.withLock { (state: inout State) throws -> Bool in
            Self.sweep(&state, now: now, everything: false)
            if state.expiries.count >= capacity {
                // Full: a replay is still told apart from a new nonce, which needs the room
                // that expired entries, wherever they are, give back.
                if let known = state.expiries[key], known > now { return false }
                Self.sweep(&state, now: now, everything: true)
                guard state.expiries.count < capacity else {
                    throw HTTPSignatureError.replayCacheFull(detail: "\(capacity) recent nonces are held, the most this server keeps")
                }
            }
            // One lookup for the common case, a new nonce; a replay puts its entry back.
            if let known = state.expiries.updateValue(expiry, forKey: key), known > now {
                state.expiries[key] = known
                return false
            }
            state.order.append(Inserted(key: key, expiry: expiry))
            return true
        }
    }

    /// The pair's fingerprint. The key id's length goes in first, so ("k", "1n2") and
    /// ("k1", "n2") differ.
    private func fingerprint(nonce: String, keyID: String) -> Fingerprint {
        if portable {
            var hash = SHA256()
            withUnsafeBytes(of: (salts.0.littleEndian, salts.1.littleEndian, UInt64(keyID.utf8.count).littleEndian)) { hash.update(bufferPointer: $0) }
            hash.update(data: Array(keyID.utf8))
            hash.update(data: Array(nonce.utf8))
            return hash.finalize().withUnsafeBytes { digest in
                Fingerprint(high: digest.loadUnaligned(fromByteOffset: 0, as: UInt64.self), low: digest.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            }
        }
        func run(_ salt: UInt64) -> UInt64 {
            var hasher = Hasher()
            hasher.combine(salt)
            hasher.combine(keyID.utf8.count)
            hasher.combine(keyID)
            hasher.combine(nonce)
            return UInt64(bitPattern: Int64(hasher.finalize()))
        }
        return Fingerprint(high: run(salts.0), low: run(salts.1))
    }

    /// Drops expired entries: from the front of the insertion order (cheap, the common
    /// case), or all of them when the cache is full.
    private static func sweep(_ state: inout State, now: Date, everything: Bool) {
        while state.head < state.order.count {
            let inserted = state.order[state.head]
            if inserted.expiry > now { break }
            // Expired as inserted; the fingerprint may since have been removed, or inserted
            // again with a later expiry, which stays.
            if let expiry = state.expiries[inserted.key], expiry <= now { state.expiries[inserted.key] = nil }
            state.head += 1
        }
        // Both are pruned in place, keeping the room reserved for them. A full cache with
        // nothing expired has nothing to compact either.
        var pruned = false
        if everything {
            let expired = state.expiries.compactMap { $0.value > now ? nil : $0.key }
            for key in expired { state.expiries[key] = nil }
            pruned = !expired.isEmpty
        }
        if pruned || (state.head > 1024 && state.head * 2 > state.order.count) {
            state.order.removeSubrange(..<state.head)
            let live = state.expiries
            // Kept: what is still held with the expiry it was inserted with.
            state.order.removeAll { live[$0.key] != $0.expiry }
            state.head = 0
        }
    }
}
