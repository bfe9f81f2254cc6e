import Foundation
import Synchronization

/// Session lookups remembered for at most ``maximumAge`` (``ServerConfiguration/revocationLatency``,
/// one second by default), so an app's stream of signed requests does not read the database for
/// each one. The bound is the revocation's: a sign-out, "sign out everywhere", or a disabled
/// account on any node takes effect on every node within that time, and at once on the node
/// that made it (its routes call ``forget(tokenHash:)`` or ``forget(userID:)``).
///
/// Only sessions found are remembered: a token unknown a moment ago may be a sign-in just made
/// on another node. An entry's age counts from before its lookup began, a lookup that overlapped
/// a forgetting is not remembered (it may have read the row just ended), and an expired session
/// is never answered from memory.
final class SessionDirectory: Sendable {
    struct Entry {
        let session: SessionRecord
        let user: UserRecord
        let fetched: ContinuousClock.Instant
    }

    let store: ServerStore
    let maximumAge: Duration
    struct State {
        var entries: [String: Entry] = [:]
        /// Counts the forgettings, so a lookup that overlapped one is not remembered.
        var generation = 0
    }

    private let state = Mutex(State())
    static let capacity = 10_000

    init(store: ServerStore, maximumAge: Duration) {
        self.store = store
        self.maximumAge = maximumAge
    }

    /// The unexpired session with `tokenHash` and its user, or nil.
    func session(tokenHash: String) async throws -> (SessionRecord, UserRecord)? {
        let now = ContinuousClock.now
        let (cached, generation) = state.withLock { ($0.entries[tokenHash], $0.generation) }
        if let cached, now - cached.fetched < maximumAge, cached.session.expiresAt > store.now {
            return (cached.session, cached.user)
        }
        guard let (session, user) = try await store.sessions.find(tokenHash: tokenHash) else {
            state.withLock { _ = $0.entries.removeValue(forKey: tokenHash) }
            return nil
        }
        guard maximumAge > .zero else { return (session, user) }
        state.withLock { state in
            guard state.generation == generation else { return }
            if state.entries.count >= Self.capacity { state.entries.removeAll(keepingCapacity: true) }
            state.entries[tokenHash] = Entry(session: session, user: user, fetched: now)
        }
        return (session, user)
    }

    /// Forgets one session (it just ended here).
    func forget(tokenHash: String) {
        state.withLock { state in
            state.generation += 1
            state.entries[tokenHash] = nil
        }
    }

    /// Forgets every session of a user (they just ended, or the account changed, here).
    func forget(userID: String) {
        state.withLock { state in
            state.generation += 1
            state.entries = state.entries.filter { $0.value.session.userID != userID }
        }
    }

    /// How many sessions are remembered.
    var count: Int { state.withLock { $0.entries.count } }
}
