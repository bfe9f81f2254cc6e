import Foundation
import Synchronization

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
public final class InMemoryNonceCache: NonceCache {
    /// The most nonces held at once.
    public let capacity: Int
    private let clock: @Sendable () -> Date
    /// A lock rather than an actor: an insert is a few dictionary operations, cheaper than
    /// the thread hop an actor costs a server on every request.
    private let state = Mutex(State())

    private struct State {
        var expiries: [String: Date] = [:]
        /// Keys in insertion order, for sweeping; may hold keys already removed.
        var order: [String] = []
        var head = 0
    }

    /// A cache holding at most `capacity` nonces (100,000 by default: about 20 MiB).
    public init(capacity: Int = 100_000, clock: @escaping @Sendable () -> Date = Date.init) {
        self.capacity = max(1, capacity)
        self.clock = clock
    }

    /// How many nonces are held now.
    public var count: Int { state.withLock { $0.expiries.count } }

    /// Records `nonce` for `keyID` until `expiry`; false for a replay, and
    /// ``HTTPSignatureError/replayCacheFull`` when ``capacity`` unexpired nonces are held.
    public func insert(nonce: String, keyID: String, until expiry: Date) async throws(HTTPSignatureError) -> Bool {
        let now = clock()
        let key = keyID + "\u{0}" + nonce
        let capacity = capacity
        return try state.withLock { (state: inout State) throws(HTTPSignatureError) -> Bool in
            if let known = state.expiries[key] {
                if known > now { return false }
                state.expiries[key] = nil
            }
            Self.sweep(&state, now: now, everything: false)
            if state.expiries.count >= capacity { Self.sweep(&state, now: now, everything: true) }
            guard state.expiries.count < capacity else { throw .replayCacheFull }
            state.expiries[key] = expiry
            state.order.append(key)
            return true
        }
    }

    /// Drops expired entries: from the front of the insertion order (cheap, the common
    /// case), or all of them when the cache is full.
    private static func sweep(_ state: inout State, now: Date, everything: Bool) {
        while state.head < state.order.count {
            let key = state.order[state.head]
            if let expiry = state.expiries[key] {
                if expiry > now { break }
                state.expiries[key] = nil
            }
            state.head += 1
        }
        if everything {
            state.expiries = state.expiries.filter { $0.value > now }
        }
        if everything || (state.head > 1024 && state.head * 2 > state.order.count) {
            let live = state.expiries
            state.order = state.order[state.head...].filter { live[$0] != nil }
            state.head = 0
        }
    }
}
