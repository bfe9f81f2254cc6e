import Foundation
import SignetCore
import SignetHTTP
import Synchronization

/// The verification keys of enrolled apps, admins and devices, read from the database and
/// remembered for at most ``maximumAge``, so a revocation on any node takes effect everywhere
/// within that time while a busy server does not read the database for every request.
///
/// A device's key stands for its app: its principal is the app's, with the device's key,
/// enrolment time and ``Principal/device``, revoked when the device or the app is.
public final class PrincipalDirectory: HTTPSignatureKeyStore {
    struct Entry {
        let principal: Principal?
        let key: HTTPVerificationKey?
        let fetched: ContinuousClock.Instant
    }

    let store: ServerStore
    /// How long a looked-up key (or its absence) is trusted before it is read again.
    public let maximumAge: Duration
    /// What App Attest devices' assertions are verified against.
    let trust: DeviceAttestationTrust
    private let entries = Mutex([String: Entry]())
    /// The look-ups running now, by key id: requests arriving together for one key (a thousand
    /// downloads signed by one app) share one read of the database.
    private let lookups = Mutex([String: Task<Entry, any Error>]())
    private static let capacity = 10_000

    /// A directory over `store`, remembering answers for `maximumAge` (one second by default);
    /// App Attest devices' assertions lead to the roots of `trust`.
    public init(store: ServerStore, maximumAge: Duration = .seconds(1), trust: DeviceAttestationTrust = DeviceAttestationTrust()) {
        self.store = store
        self.maximumAge = maximumAge
        self.trust = trust
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

    /// Forgets what is remembered of `keyID` (this node just enrolled it).
    public func forget(keyID: String) {
        _ = entries.withLock { $0.removeValue(forKey: keyID) }
    }

    private func entry(for keyID: String) async throws -> Entry {
        if let cached = entries.withLock({ $0[keyID] }), ContinuousClock.now - cached.fetched < maximumAge { return cached }
        let lookup = lookups.withLock { lookups in
            if let running = lookups[keyID] { return running }
            let started = Task { [self] in
                defer { _ = self.lookups.withLock { $0.removeValue(forKey: keyID) } }
                return try await lookUp(keyID)
            }
            lookups[keyID] = started
            return started
        }
        return try await lookup.value
    }

    /// Reads `keyID`'s principal (or device) from the database and remembers the answer.
    private func lookUp(_ keyID: String) async throws -> Entry {
        let now = ContinuousClock.now
        var principal: Principal?
        var key: HTTPVerificationKey?
        if let (found, secret) = try await store.principals.find(keyID: keyID) {
            principal = found
            if let secret {
                key = .hmacSHA256(secret)
            } else if let der = found.publicKeyDER, case .publicKey(let publicKey)? = try? KeyDecoder.decode(der, source: found.name) {
                key = .publicKey(publicKey, found.algorithm)
            }
        } else if let (device, app) = try await store.devices.find(keyID: keyID) {
            (principal, key) = deviceEntry(device, app: app)
        }
        let entry = Entry(principal: principal, key: key, fetched: now)
        entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[keyID] = entry
        }
        return entry
    }

    /// A device's principal (its app's, with the device's key) and verification key.
    private func deviceEntry(_ device: DeviceRecord, app: Principal) -> (Principal, HTTPVerificationKey?) {
        var principal = app
        principal.keyID = device.keyID
        principal.algorithm = .ecdsaP256SHA256
        principal.publicKeyDER = device.publicKeyDER
        principal.createdAt = device.createdAt
        principal.revokedAt = device.revokedAt ?? app.revokedAt
        principal.device = device
        switch device.platform {
        case .apple:
            return (principal, AppAttestSignatureCheck(device: device, trust: trust).map { .custom($0) })
        case .android:
            guard case .publicKey(let key)? = try? KeyDecoder.decode(device.publicKeyDER, source: device.id) else { return (principal, nil) }
            return (principal, .publicKey(key, .ecdsaP256SHA256))
        }
    }
}
