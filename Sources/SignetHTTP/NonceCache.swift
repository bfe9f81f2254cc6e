import Foundation

/// Remembers the nonces of verified signatures until the signatures could no longer be
/// accepted anyway, so that a second use is refused.
public protocol NonceCache: Sendable {
    /// Records `nonce` for `keyID` until `expiry`. Returns false when it was already recorded
    /// (a replay). Throws ``HTTPSignatureError/replayCacheFull`` when it cannot remember more.
    func insert(nonce: String, keyID: String, until expiry: Date) async throws(HTTPSignatureError) -> Bool
}

/// A ``NonceCache`` in memory, bounded: entries leave when they expire, and when it is full
/// of unexpired entries it refuses new ones (failing closed) rather than forgetting one that
/// could then be replayed.
///
/// Only nonces of signatures that verified reach it, so filling it takes valid keys; the
/// bound protects memory from a compromised or runaway client. For several server processes,
/// implement ``NonceCache`` over shared storage.
public actor InMemoryNonceCache: NonceCache {
    /// The most nonces held at once.
    public nonisolated let capacity: Int
    private var expiries: [String: Date] = [:]
    /// Keys in insertion order, for sweeping; may hold keys already removed.
    private var order: [String] = []
    private var head = 0
    private let clock: @Sendable () -> Date

    /// A cache holding at most `capacity` nonces (100,000 by default: about 20 MiB).
    public init(capacity: Int = 100_000, clock: @escaping @Sendable () -> Date = Date.init) {
        self.capacity = max(1, capacity)
        self.clock = clock
    }

    /// How many nonces are held now.
    public var count: Int { expiries.count }

    public func insert(nonce: String, keyID: String, until expiry: Date) throws(HTTPSignatureError) -> Bool {
        let now = clock()
        let key = keyID + "\u{0}" + nonce
        if let known = expiries[key] {
            if known > now { return false }
            expiries[key] = nil
        }
        sweep(now: now, everything: false)
        if expiries.count >= capacity { sweep(now: now, everything: true) }
        guard expiries.count < capacity else { throw .replayCacheFull }
        expiries[key] = expiry
        order.append(key)
        return true
    }

    /// Drops expired entries: from the front of the insertion order (cheap, the common
    /// case), or all of them when the cache is full.
    private func sweep(now: Date, everything: Bool) {
        while head < order.count {
            let key = order[head]
            if let expiry = expiries[key], expiry > now { break }
            if let expiry = expiries[key], expiry <= now { expiries[key] = nil }
            head += 1
        }
        if everything {
            expiries = expiries.filter { $0.value > now }
        }
        if head > 1024 && head * 2 > order.count || everything {
            order = order[head...].filter { expiries[$0] != nil }
            head = 0
        }
    }
}
