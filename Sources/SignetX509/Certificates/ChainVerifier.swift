import SignetCore
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where the trust anchors of a chain validation come from.
public enum TrustAnchors: Sendable {
    /// The system's roots (on Linux, the usual CA bundle files).
    case system
    /// Only these certificates (a private CA).
    case certificates([Certificate])

    var store: CertificateStore {
        switch self {
        case .system: return CertificateStore.systemTrustRoots
        case .certificates(let roots): return CertificateStore(roots)
        }
    }
}

/// RFC 5280 path validation, with the checks `openssl verify -purpose` adds (key usages for
/// the purpose, `keyCertSign` on every issuer, name constraints on a CN that looks like a DNS
/// name) and server identity (RFC 6125) by the CA/Browser Forum's name rules, over a bounded
/// path search (``PathBuildingLimits``), with a failure that says why. docs/certificates.md
/// has the rules and where they differ from OpenSSL's.
public struct ChainVerifier: Sendable {
    /// The trust anchors.
    public var anchors: TrustAnchors
    /// The time certificates must be valid at; nil is the moment of validation.
    public var validationTime: Date?

    /// A verifier trusting `anchors` at `validationTime` (nil: now).
    public init(anchors: TrustAnchors, validationTime: Date? = nil) {
        self.anchors = anchors
        self.validationTime = validationTime
    }

    /// Validates `leaf` through `intermediates` to an anchor for `purpose` and, when
    /// `hostname` is given (a DNS name or an IP literal), checks that the leaf is for it: by
    /// its alternative names, and by its CN only when `allowCommonNameFallback` is set, it has
    /// no DNS name and no certificate of the path carries name constraints. Returns the
    /// validated chain, leaf first, anchor last. Stops with
    /// ``X509Error/pathBuildingLimit(subject:detail:)`` when the search reaches `limits`, and
    /// with ``X509Error/verificationCancelled(subject:)`` when its task is cancelled.
    public func verify(
        leaf: Certificate, intermediates: [Certificate] = [], hostname: String? = nil, purpose: CertificatePurpose = .server,
        allowCommonNameFallback: Bool = false, limits: PathBuildingLimits = .default
    ) async throws -> [Certificate] {
        let now = validationTime ?? Date()
        try Self.requireRepresentable(now)
        let subject = PrintableText.escaped(leaf.subject.description)
        let anchorCertificates: [Certificate]
        switch anchors {
        case .system: anchorCertificates = SystemTrustRoots.certificates
        case .certificates(let roots): anchorCertificates = roots
        }
        let builder = PathBuilder(anchors: anchorCertificates, intermediates: intermediates, limits: limits, validationTime: now)
        let outcome = try builder.paths(from: leaf)
        var firstChainFailure: String?
        var nameFailure: String?
        for path in outcome.paths {
            if Task.isCancelled { throw X509Error.verificationCancelled(subject: subject) }
            let anchor = path[path.count - 1]
            let time = validationTime
            var verifier = Verifier(rootCertificates: CertificateStore([anchor])) {
                if let time { RFC5280Policy(fixedExpiryValidationTime: time) } else { RFC5280Policy() }
                PurposePolicy(purpose: purpose)
                IssuerKeyUsagePolicy()
                CommonNameConstraintsPolicy()
                if let hostname { HostnamePolicy(hostname: hostname, allowCommonNameFallback: allowCommonNameFallback) }
            }
            switch await verifier.validate(leaf: leaf, intermediates: CertificateStore(path.dropFirst().dropLast())) {
            case .validCertificate(let chain):
                return Array(chain)
            case .couldNotValidate(let failures):
                for failure in failures {
                    let reason = failure.policyFailureReason.description
                    if reason.hasPrefix(HostnamePolicy.reasonPrefix) {
                        nameFailure = nameFailure ?? String(reason.dropFirst(HostnamePolicy.reasonPrefix.count))
                    } else if let outdated = failure.chain.first(where: { !($0.notValidBefore <= now && now <= $0.notValidAfter) }) {
                        // Said in a line, not as swift-certificates' description of the whole certificate.
                        firstChainFailure = firstChainFailure ?? Self.outsideValidity(outdated, at: now)
                    } else {
                        firstChainFailure = firstChainFailure ?? reason
                    }
                }
            }
        }
        if let nameFailure, let hostname {
            throw X509Error.hostnameMismatch(hostname: PrintableText.escaped(hostname), detail: "\(nameFailure); its names are \(Self.names(of: leaf))")
        }
        if outcome.budgetSpent {
            var detail = "the \(intermediates.count + 1) certificates offered form too many candidate paths: stopped after \(outcome.signatureChecks) signature checks"
            if let firstChainFailure { detail += " (the paths tried failed: \(firstChainFailure))" }
            throw X509Error.pathBuildingLimit(subject: subject, detail: detail)
        }
        if let firstChainFailure { throw X509Error.chainInvalid(subject: subject, detail: firstChainFailure) }
        throw X509Error.chainInvalid(subject: subject, detail: Self.noPathDetail(leaf: leaf, sawBadSignature: outcome.sawBadSignature))
    }

    /// Checks a leaf trusted by its pin rather than a chain (a pinned self-signed server): it
    /// must be valid at the validation time, allow `purpose` and, when `hostname` is given, be
    /// for it (CN fallback as in ``verify(leaf:intermediates:hostname:purpose:allowCommonNameFallback:limits:)``).
    /// No anchor and no CA flag are needed: the pin stands for the chain.
    public func verifyPinnedLeaf(
        _ leaf: Certificate, hostname: String?, purpose: CertificatePurpose = .server, allowCommonNameFallback: Bool = false
    ) async throws {
        let now = validationTime ?? Date()
        try Self.requireRepresentable(now)
        let subject = PrintableText.escaped(leaf.subject.description)
        guard leaf.notValidBefore <= now, now <= leaf.notValidAfter else {
            throw X509Error.chainInvalid(
                subject: subject,
                detail: "it is not valid at \(now.formatted(.iso8601)) (valid \(leaf.notValidBefore.formatted(.iso8601)) to \(leaf.notValidAfter.formatted(.iso8601)))")
        }
        var verifier = Verifier(rootCertificates: CertificateStore([leaf])) {
            PinnedLeafExtensionsPolicy()
            PurposePolicy(purpose: purpose)
            if let hostname { HostnamePolicy(hostname: hostname, allowCommonNameFallback: allowCommonNameFallback) }
        }
        guard case .couldNotValidate(let failures) = await verifier.validate(leaf: leaf, intermediates: CertificateStore()) else { return }
        let reason = failures.first?.policyFailureReason.description ?? "it does not validate"
        if let hostname, reason.hasPrefix(HostnamePolicy.reasonPrefix) {
            throw X509Error.hostnameMismatch(
                hostname: PrintableText.escaped(hostname),
                detail: "\(reason.dropFirst(HostnamePolicy.reasonPrefix.count)); its names are \(Self.names(of: leaf))")
        }
        throw X509Error.chainInvalid(subject: subject, detail: reason)
    }

    /// The times a certificate can state (GeneralizedTime: years 0001 to 9999; 0001-01-01 is
    /// −62135596800 s from 1970, 9999-12-31T23:59:59Z is 253402300799 s).
    public static let representableTimes = Date(timeIntervalSince1970: -62_135_596_800)...Date(timeIntervalSince1970: 253_402_300_799)

    /// Refuses a validation time no certificate can state (swift-certificates traps on one).
    static func requireRepresentable(_ time: Date) throws {
        guard representableTimes.contains(time) else {
            throw X509Error.invalidArgument(detail: "the validation time \(time.timeIntervalSince1970) s from 1970 is outside the years 0001 to 9999")
        }
    }

    /// Why `certificate` is refused at `time`: it has expired, or is not valid yet.
    package static func outsideValidity(_ certificate: Certificate, at time: Date) -> String {
        let subject = PrintableText.escaped(certificate.subject.description)
        let state = time > certificate.notValidAfter ? "has expired" : "is not valid yet"
        return "\(subject) \(state): it is valid from \(certificate.notValidBefore.formatted(.iso8601)) to \(certificate.notValidAfter.formatted(.iso8601)), not at \(time.formatted(.iso8601))"
    }

    static func noPathDetail(leaf: Certificate, sawBadSignature: Bool) -> String {
        let issuer = PrintableText.escaped(leaf.issuer.description)
        if leaf.issuer == leaf.subject {
            return "it is self-signed and not among the trusted roots"
        }
        if sawBadSignature {
            return "no path to a trusted root (a certificate named as its issuer, \(issuer), was found, but its key did not sign it)"
        }
        return "no path to a trusted root (issuer \(issuer) is not trusted, and no given intermediate leads to a trusted root)"
    }

    /// The DNS and IP names of a certificate, for messages.
    public static func names(of certificate: Certificate) -> String {
        let sans = (try? certificate.extensions.subjectAlternativeNames).map { Array($0) } ?? []
        guard !sans.isEmpty else { return "none (no subject alternative names)" }
        return sans.map { name -> String in
            switch name {
            case .dnsName(let dns): return "DNS:\(PrintableText.escaped(dns))"
            case .ipAddress(let bytes): return "IP:\(CertificateDescription.ipString(Array(bytes.bytes)))"
            default: return PrintableText.escaped("\(name)")
            }
        }.joined(separator: ", ")
    }
}

/// A pinned leaf stands alone: its basic constraints are read and need nothing (a pinned CA
/// certificate may serve); its key usages are left to ``PurposePolicy``.
struct PinnedLeafExtensionsPolicy: VerifierPolicy {
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [.X509ExtensionID.basicConstraints]

    mutating func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        .meetsPolicy
    }
}
