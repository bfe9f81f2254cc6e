import SignetCore
import X509

/// The roots Android key attestation chains lead to.
public enum AndroidAttestationRoots {
    /// Google's hardware attestation roots: the RSA-4096 root in its four certificates (one
    /// key, re-issued 2016, 2019, 2021 and 2022) and Key Attestation CA1 (ECDSA P-384, 2025).
    /// A chain is anchored by the root's key; the root certificate valid at the time of
    /// verification decides the anchor's validity, so a chain made while the 2016 certificate
    /// was current verifies at its own time, and at later times through a re-issued one.
    public static let google: [Certificate] = googlePEMs.map { pem in
        do {
            return try Certificate(pemEncoded: pem)
        } catch {
            preconditionFailure("a shipped Google root does not parse: \(error)")
        }
    }
}

/// What an Android key attestation must satisfy.
public struct AndroidAttestationPolicy: Sendable {
    /// The challenge the server gave the app (the key description's `attestationChallenge`).
    public var challenge: [UInt8]
    /// The package the key must be made for; nil accepts any.
    public var packageName: String?
    /// SHA-256 digests of the app signing certificates accepted; empty accepts any.
    public var signerDigests: [[UInt8]]
    /// The lowest security level accepted: the TEE by default (software keys refused).
    public var minimumSecurityLevel: AndroidSecurityLevel
    /// Whether the device must have booted verified software (`Verified`); true by default.
    public var requiresVerifiedBoot: Bool
    /// Whether the bootloader must be locked; true by default.
    public var requiresLockedBootloader: Bool
    /// The roots chains must lead to; Google's by default. Replace them only for test roots.
    public var roots: [Certificate]
    /// The revocation status list; the shipped snapshot by default.
    public var revocations: AndroidRevocationList

    /// A policy for `challenge`, with the defaults above.
    public init(
        challenge: [UInt8], packageName: String? = nil, signerDigests: [[UInt8]] = [], minimumSecurityLevel: AndroidSecurityLevel = .trustedEnvironment,
        requiresVerifiedBoot: Bool = true, requiresLockedBootloader: Bool = true, roots: [Certificate] = AndroidAttestationRoots.google,
        revocations: AndroidRevocationList = .shipped
    ) {
        self.challenge = challenge
        self.packageName = packageName
        self.signerDigests = signerDigests
        self.minimumSecurityLevel = minimumSecurityLevel
        self.requiresVerifiedBoot = requiresVerifiedBoot
        self.requiresLockedBootloader = requiresLockedBootloader
        self.roots = roots
        self.revocations = revocations
    }
}
