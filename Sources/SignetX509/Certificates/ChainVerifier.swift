import SignetCore
import SwiftASN1
import Synchronization
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

/// RFC 5280 path validation plus server identity (RFC 6125), on swift-certificates'
/// `Verifier`, with a failure that says why.
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

    /// Validates `leaf` through `intermediates` to an anchor and, when `hostname` is given (a
    /// DNS name or an IP literal), checks that the leaf is for it. Returns the validated chain,
    /// leaf first, anchor last.
    public func verify(leaf: Certificate, intermediates: [Certificate] = [], hostname: String? = nil) async throws(X509Error) -> [Certificate] {
        let store = CertificateStore(intermediates)
        if let hostname {
            let isIP = SubjectParsing.ipAddressBytes(hostname) != nil
            let identity = ServerIdentityPolicy(serverHostname: isIP ? nil : hostname, serverIP: isIP ? hostname : nil)
            var verifier = Verifier(rootCertificates: anchors.store) {
                rfc5280Policy
                identity
            }
            if case .validCertificate(let chain) = await verifier.validate(leaf: leaf, intermediates: store) { return Array(chain) }
            // Tell a chain failure from a name failure: validate the chain alone.
            _ = try await verifyChainOnly(leaf: leaf, store: store)
            throw X509Error.hostnameMismatch(hostname: hostname, detail: "its names are \(Self.names(of: leaf))")
        }
        return try await verifyChainOnly(leaf: leaf, store: store)
    }

    /// Checks a leaf trusted by its pin rather than a chain (a pinned self-signed server): it
    /// must be valid at the validation time and, when `hostname` is given, be for it. No
    /// anchor and no CA flag are needed: the pin stands for the chain.
    public func verifyPinnedLeaf(_ leaf: Certificate, hostname: String?) async throws(X509Error) {
        let now = validationTime ?? Date()
        guard leaf.notValidBefore <= now, now <= leaf.notValidAfter else {
            throw X509Error.chainInvalid(
                subject: leaf.subject.description,
                detail: "it is not valid at \(now.formatted(.iso8601)) (valid \(leaf.notValidBefore.formatted(.iso8601)) to \(leaf.notValidAfter.formatted(.iso8601)))")
        }
        guard let hostname else { return }
        let isIP = SubjectParsing.ipAddressBytes(hostname) != nil
        let identity = ServerIdentityPolicy(serverHostname: isIP ? nil : hostname, serverIP: isIP ? hostname : nil)
        var verifier = Verifier(rootCertificates: CertificateStore([leaf])) {
            PinnedLeafUsagePolicy()
            identity
        }
        guard case .validCertificate = await verifier.validate(leaf: leaf, intermediates: CertificateStore()) else {
            throw X509Error.hostnameMismatch(hostname: hostname, detail: "its names are \(Self.names(of: leaf))")
        }
    }

    private func verifyChainOnly(leaf: Certificate, store: CertificateStore) async throws(X509Error) -> [Certificate] {
        var verifier = Verifier(rootCertificates: anchors.store) { rfc5280Policy }
        let collector = DiagnosticsCollector()
        let result = await verifier.validate(leaf: leaf, intermediates: store) { collector.add($0) }
        switch result {
        case .validCertificate(let chain):
            return Array(chain)
        case .couldNotValidate(let failures):
            let subject = leaf.subject.description
            if let failure = failures.first {
                throw X509Error.chainInvalid(subject: subject, detail: failure.policyFailureReason.description)
            }
            throw X509Error.chainInvalid(subject: subject, detail: Self.noPathDetail(leaf: leaf, collector: collector))
        }
    }

    private var rfc5280Policy: RFC5280Policy {
        validationTime.map { RFC5280Policy(fixedExpiryValidationTime: $0) } ?? RFC5280Policy()
    }

    static func noPathDetail(leaf: Certificate, collector: DiagnosticsCollector) -> String {
        if leaf.issuer == leaf.subject {
            return "it is self-signed and not among the trusted roots"
        }
        if collector.sawBadSignature {
            return "no path to a trusted root (a certificate named as its issuer, \(leaf.issuer), was found, but its key did not sign it)"
        }
        return "no path to a trusted root (issuer \(leaf.issuer) is not trusted, and no given intermediate leads to a trusted root)"
    }

    /// The DNS and IP names of a certificate, for messages.
    public static func names(of certificate: Certificate) -> String {
        let sans = (try? certificate.extensions.subjectAlternativeNames).map { Array($0) } ?? []
        guard !sans.isEmpty else { return "none (no subject alternative names)" }
        return sans.map { name -> String in
            switch name {
            case .dnsName(let dns): return "DNS:\(dns)"
            case .ipAddress(let bytes): return "IP:\(CertificateDescription.ipString(Array(bytes.bytes)))"
            default: return "\(name)"
            }
        }.joined(separator: ", ")
    }
}

/// Collects verifier diagnostics from the synchronous callback.
final class DiagnosticsCollector: Sendable {
    private let badSignature = Mutex(false)

    func add(_ diagnostic: VerificationDiagnostic) {
        if diagnostic.description.contains("has not signed") { badSignature.withLock { $0 = true } }
    }

    var sawBadSignature: Bool { badSignature.withLock { $0 } }
}

/// What a pinned leaf's critical extensions must allow when it stands alone: if it has an
/// extended key usage, serverAuth (or any); if it has a key usage, digital signature or key
/// encipherment. Basic constraints are read and need nothing: a pinned CA certificate may serve.
struct PinnedLeafUsagePolicy: VerifierPolicy {
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [
        .X509ExtensionID.basicConstraints, .X509ExtensionID.keyUsage, .X509ExtensionID.extendedKeyUsage,
    ]

    mutating func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        let leaf = chain.leaf
        if let usage = try? leaf.extensions.extendedKeyUsage,
            !usage.contains(.serverAuth), !usage.contains(.any)
        {
            return .failsToMeetPolicy(reason: "its extended key usage does not allow TLS server authentication")
        }
        if let usage = try? leaf.extensions.keyUsage, !usage.digitalSignature, !usage.keyEncipherment {
            return .failsToMeetPolicy(reason: "its key usage allows neither digital signatures nor key encipherment")
        }
        return .meetsPolicy
    }
}
