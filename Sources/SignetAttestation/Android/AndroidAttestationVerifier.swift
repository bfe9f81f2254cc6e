import SignetCore
import SignetX509
import SwiftASN1
import X509

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a verified Android key attestation says about the key and the device.
public struct AndroidAttestation: Sendable {
    /// The attested key (the leaf certificate's).
    public let publicKey: Certificate.PublicKey
    /// Where the key lives.
    public let securityLevel: AndroidSecurityLevel
    /// The key description's attestation version (3, 4, 100, 200, 300, 400 …).
    public let attestationVersion: Int
    /// The app the key was made for, when the attestation names it.
    public let application: AndroidAttestedApplication?
    /// How the device booted, from the hardware-enforced list.
    public let rootOfTrust: AndroidRootOfTrust?
    /// The OS version (`MMmmpp`: 140000 is 14.0.0), when reported.
    public let osVersion: Int64?
    /// The OS patch level (`YYYYMM`), when reported.
    public let osPatchLevel: Int64?
    /// The vendor patch level (`YYYYMMDD`), when reported.
    public let vendorPatchLevel: Int64?
    /// The boot patch level (`YYYYMMDD`), when reported.
    public let bootPatchLevel: Int64?
    /// The validated chain, leaf first, ending with the trusted root certificate.
    public let chain: [Certificate]
}

/// Verifies Android key attestation certificate chains (leaf first) offline: each link's
/// signature, every certificate's validity at the time given, the anchor by Google's root key,
/// the revocation status list, and the leaf's key description against the policy.
///
/// The path rules are Android's, not the Web PKI's: the certificate that signs the leaf (the
/// device's attestation key) need not be marked as a CA — genuine devices (Sony's among them)
/// issue leaves from an end-entity certificate — while every certificate above it must be a
/// CA. Chains whose key description appears above the leaf (attestation keys made with
/// `ATTEST_KEY`) are refused, as Google's own verifier refuses them.
public struct AndroidAttestationVerifier: Sendable {
    /// What attestations must satisfy.
    public let policy: AndroidAttestationPolicy

    /// The OID of the key description extension.
    public static let keyDescriptionOID: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 11129, 2, 1, 17]
    /// The longest chain read.
    public static let maximumChainLength = 10

    /// A verifier for `policy`.
    public init(policy: AndroidAttestationPolicy) {
        self.policy = policy
    }

    /// Verifies `chain` (leaf first) at `time`.
    /// - Throws: ``AttestationError``, naming the check that failed.
    public func verify(chain: [Certificate], at time: Date = Date(), source: String = "the attestation") throws -> AndroidAttestation {
        guard ChainVerifier.representableTimes.contains(time) else {
            throw AttestationError.invalidArgument(detail: "the verification time is outside the years 0001 to 9999")
        }
        let validated = try validatePath(chain, at: time, source: source)
        for certificate in validated {
            if let (serial, entry) = policy.revocations.entry(for: certificate) {
                throw AttestationError.revoked(source: source, serial: serial, status: entry.status, reason: entry.reason)
            }
        }
        let leaf = chain[0]
        guard let extensionValue = leaf.extensions.first(where: { $0.oid == Self.keyDescriptionOID })?.value else {
            throw AttestationError.missingExtension(source: source, oid: "1.3.6.1.4.1.11129.2.1.17 (the key description)")
        }
        for (index, certificate) in chain.enumerated().dropFirst() where certificate.extensions.contains(where: { $0.oid == Self.keyDescriptionOID }) {
            throw AttestationError.untrustedChain(
                source: source,
                reason: .chainInvalid(subject: Self.subject(leaf), detail: "certificate \(index) also carries a key description (an ATTEST_KEY chain), which is not supported"))
        }
        let description: KeyDescription
        let facts: (AndroidAttestedApplication?, AndroidRootOfTrust?, [Int64?])
        do {
            description = try KeyDescription(derEncoded: extensionValue)
            let hardware = description.hardwareEnforced
            facts = (
                try description.softwareEnforced.application() ?? hardware.application(), try hardware.rootOfTrust(),
                [try hardware.integer(705), try hardware.integer(706), try hardware.integer(718), try hardware.integer(719)]
            )
        } catch let error as AttestationError {
            throw error
        } catch {
            throw AttestationError.malformed(source: source, detail: "the key description is not valid DER of its schema: \(AttestationError.describe(error))")
        }
        try check(description, application: facts.0, rootOfTrust: facts.1, source: source)
        return AndroidAttestation(
            publicKey: leaf.publicKey, securityLevel: description.attestationSecurityLevel, attestationVersion: description.attestationVersion,
            application: facts.0, rootOfTrust: facts.1, osVersion: facts.2[0], osPatchLevel: facts.2[1], vendorPatchLevel: facts.2[2],
            bootPatchLevel: facts.2[3], chain: validated)
    }

    private func check(_ description: KeyDescription, application: AndroidAttestedApplication?, rootOfTrust: AndroidRootOfTrust?, source: String) throws {
        guard ConstantTime.equals(description.challenge, policy.challenge) else {
            throw AttestationError.challengeMismatch(
                source: source, detail: "the key was attested for a \(description.challenge.count)-byte challenge that is not the one given")
        }
        guard description.attestationSecurityLevel >= policy.minimumSecurityLevel else {
            throw AttestationError.securityLevelTooLow(
                source: source, found: description.attestationSecurityLevel.description, required: policy.minimumSecurityLevel.description)
        }
        if let packageName = policy.packageName {
            let names = application?.packages.map(\.name) ?? []
            guard names.contains(packageName) else { throw AttestationError.packageMismatch(source: source, found: names, expected: packageName) }
        }
        if !policy.signerDigests.isEmpty {
            let digests = application?.signatureDigests ?? []
            guard digests.contains(where: { digest in policy.signerDigests.contains { ConstantTime.equals($0, digest) } }) else {
                let found = digests.isEmpty ? "none" : digests.map(Hex.encode).joined(separator: ", ")
                throw AttestationError.signerMismatch(source: source, detail: "the app is signed by \(found)")
            }
        }
        if policy.requiresVerifiedBoot {
            guard let rootOfTrust, rootOfTrust.verifiedBootState == .verified else {
                throw AttestationError.bootStateNotVerified(source: source, state: rootOfTrust?.verifiedBootState.description ?? "not reported by the hardware")
            }
        }
        if policy.requiresLockedBootloader {
            guard let rootOfTrust, rootOfTrust.deviceLocked else { throw AttestationError.deviceUnlocked(source: source) }
        }
    }

    /// The chain from the leaf to a trusted root, checked link by link; ends with the root
    /// certificate of the policy that was valid at `time`.
    func validatePath(_ chain: [Certificate], at time: Date, source: String) throws -> [Certificate] {
        guard !chain.isEmpty else { throw AttestationError.missingCertificate(source: source, detail: "the chain holds no certificate") }
        guard chain.count <= Self.maximumChainLength else {
            throw AttestationError.malformed(source: source, detail: "the chain holds \(chain.count) certificates; at most \(Self.maximumChainLength) are read")
        }
        let leafSubject = Self.subject(chain[0])
        func refuse(_ detail: String) -> AttestationError {
            .untrustedChain(source: source, reason: .chainInvalid(subject: leafSubject, detail: detail))
        }
        // A root certificate the chain carries is stood for by the policy's certificate of the
        // same key that is valid at `time` (the 2016 RSA root expired; its re-issues did not).
        let carriesRoot = policy.roots.contains { $0.publicKey == chain[chain.count - 1].publicKey }
        for (index, certificate) in chain.enumerated() where !(carriesRoot && index == chain.count - 1) {
            guard certificate.notValidBefore <= time, time <= certificate.notValidAfter else {
                throw AttestationError.untrustedChain(
                    source: source,
                    reason: .chainInvalid(
                        subject: Self.subject(certificate),
                        detail: "certificate \(index), \(ChainVerifier.outsideValidity(certificate, at: time))"))
            }
            if index >= 2 {
                guard let constraints = try? certificate.extensions.basicConstraints, case .isCertificateAuthority = constraints else {
                    throw refuse("certificate \(index) (\(Self.subject(certificate))) signs another but is not a CA")
                }
            }
        }
        for index in chain.indices.dropLast() {
            let child = chain[index]
            let issuer = chain[index + 1]
            guard child.issuer == issuer.subject, issuer.publicKey.isValidSignature(child.signature, for: child) else {
                throw refuse("certificate \(index)'s signature is not from certificate \(index + 1) (\(Self.subject(issuer)))")
            }
        }
        let top = chain[chain.count - 1]
        let anchors = policy.roots.filter { $0.notValidBefore <= time && time <= $0.notValidAfter }
        if let anchor = anchors.first(where: { $0.publicKey == top.publicKey }) {
            guard top.issuer == top.subject, top.publicKey.isValidSignature(top.signature, for: top) else {
                throw refuse("the root certificate's self-signature does not verify")
            }
            return Array(chain.dropLast()) + [anchor]
        }
        if let anchor = anchors.first(where: { $0.subject == top.issuer && $0.publicKey.isValidSignature(top.signature, for: top) }) {
            return chain + [anchor]
        }
        if policy.roots.contains(where: { $0.publicKey == top.publicKey || $0.subject == top.issuer }) {
            throw refuse("no certificate of the trusted root's key is valid at \(time)")
        }
        throw refuse("the chain ends at \(Self.subject(top)), which is not a trusted root")
    }

    static func subject(_ certificate: Certificate) -> String { PrintableText.escaped(certificate.subject.description, limit: 200) }
}
