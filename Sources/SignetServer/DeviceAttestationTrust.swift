import SignetAttestation
import X509

/// What the server verifies devices' attestations against: the roots of Apple's App Attest and
/// of Google's hardware attestation, and Google's attestation revocation list.
///
/// Replacing a root makes attestations under it acceptable: do it only for test roots (the
/// server logs a warning at every start when the roots are not the shipped ones).
public struct DeviceAttestationTrust: Sendable {
    /// App Attest's roots; Apple's App Attestation Root CA by default.
    public var appleRoots: [Certificate] = AppAttestRoots.apple
    /// Android key attestation's roots; every root Google has published, by default.
    public var androidRoots: [Certificate] = AndroidAttestationRoots.google
    /// Revoked attestation certificates; the snapshot shipped with Signet by default
    /// (``AndroidRevocationList/shipped``). Read once at start: restart to take a newer list.
    public var androidRevocations: AndroidRevocationList = .shipped

    /// The shipped roots and revocation list.
    public init() {}

    /// Whether the roots are other than Apple's and Google's.
    public var replacesRoots: Bool {
        appleRoots != AppAttestRoots.apple || androidRoots != AndroidAttestationRoots.google
    }
}
