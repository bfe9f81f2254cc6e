import Foundation
import SignetCore
import SignetHTTP
import Synchronization

/// The verification keys of enrolled apps and admins, read from the database and remembered
/// for at most ``maximumAge``, so a revocation on any node takes effect everywhere within that
/// time while a busy server does not read the database for every request.
public final class PrincipalDirectory: HTTPSignatureKeyStore {
    struct Entry {
        let principal: Principal?
        let key: HTTPVerificationKey?
        let fetched: ContinuousClock.Instant
    }

    let store: ServerStore
    /// How long a looked-up key (or its absence) is trusted before it is read again.
    public let maximumAge: Duration
    private let entries = Mutex([String: Entry]())
    private static let capacity = 10_000

    /// A directory over `store`, remembering answers for `maximumAge` (one second by default).
    public init(store: ServerStore, maximumAge: Duration = .seconds(1)) {
        self.store = store
        self.maximumAge = maximumAge
    }

    /// The key that verifies signatures under `keyID`, revoked or not (the authenticator
    /// refuses revoked ones after the signature checks, with 403); nil when none is enrolled.
    public func verificationKey(for keyID: String) async throws -> HTTPVerificationKey? {
        try await entry(for: keyID).key
    }

    /// The principal under `keyID`, as fresh as ``maximumAge``.
    public func principal(for keyID: String) async throws -> Principal? {
        try await entry(for: keyID).principal
    }

    /// Forgets everything remembered (this node just changed a principal).
    public func invalidate() {
        entries.withLock { $0.removeAll() }
    }

    private func entry(for keyID: String) async throws -> Entry {
        let now = ContinuousClock.now
        if let cached = entries.withLock({ $0[keyID] }), now - cached.fetched < maximumAge { return cached }
        let found = try await store.principals.find(keyID: keyID)
        var key: HTTPVerificationKey?
        if let (principal, secret) = found {
            if let secret {
                key = .hmacSHA256(secret)
            } else if let der = principal.publicKeyDER, case .publicKey(let publicKey)? = try? KeyDecoder.decode(der, source: principal.name) {
                key = .publicKey(publicKey, principal.algorithm)
            }
        }
        let entry = Entry(principal: found?.0, key: key, fetched: now)
        entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[keyID] = entry
        }
        return entry
    }
}
