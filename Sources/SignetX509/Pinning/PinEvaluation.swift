#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SignetCore
import SwiftASN1
import X509

/// What checking a chain against a ``PinSet`` found.
public enum PinVerdict: Sendable, Equatable {
    /// The host has no pins: only chain and host name validation apply.
    case notPinned
    /// A key of the validated chain is pinned: this one (the first found, leaf first).
    case matched(KeyFingerprint)
    /// The host's pins expired: they are not enforced (chain and host name validation still
    /// are).
    case expired
    /// No pinned key is in the chain, but the host's pins are report-only: send the report and
    /// let the connection go on.
    case failedReportOnly(PinFailureReport)
    /// No pinned key is in the chain: close the connection (``PinFailureReport/error``) and
    /// send the report.
    case failed(PinFailureReport)

    /// Whether the connection may go on: everything but ``failed(_:)``.
    public var allowsConnection: Bool {
        if case .failed = self { return false }
        return true
    }

    /// The report to send, for either kind of failure.
    public var failureReport: PinFailureReport? {
        switch self {
        case .failed(let report), .failedReportOnly(let report): return report
        case .notPinned, .matched, .expired: return nil
        }
    }
}

/// One certificate of a chain as pin checking sees it: its key's fingerprint (what is
/// compared with the pins) and its DER (what a failure report carries).
public struct ChainCertificate: Sendable, Equatable {
    /// SHA-256 over the certificate's DER `SubjectPublicKeyInfo`.
    public var fingerprint: KeyFingerprint
    /// The certificate's DER.
    public var der: [UInt8]

    /// A certificate whose key's fingerprint is already known.
    public init(fingerprint: KeyFingerprint, der: [UInt8]) {
        self.fingerprint = fingerprint
        self.der = der
    }

    /// Reads the `SubjectPublicKeyInfo` out of a DER certificate, byte for byte as the
    /// certificate holds it, and fingerprints it; refuses bytes that are not a DER certificate
    /// (``X509Error/malformed(source:detail:)`` naming `source`).
    public init(der: [UInt8], source: String) throws {
        let spki: [UInt8]
        do {
            spki = try Self.subjectPublicKeyInfo(of: der)
        } catch {
            throw X509Error.malformed(source: source, detail: "not a DER certificate: its SubjectPublicKeyInfo cannot be found")
        }
        self.init(fingerprint: KeyFingerprint(spkiDER: spki), der: der)
    }

    /// The certificate as swift-certificates holds it (its original DER, re-serialised
    /// byte for byte).
    public init(_ certificate: Certificate) throws {
        let source = "certificate \(certificate.subject)"
        let der: [UInt8]
        do {
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            der = serializer.serializedBytes
        } catch {
            throw X509Error.malformed(source: source, detail: "cannot be encoded as DER: \(error)")
        }
        try self.init(der: der, source: source)
    }

    private struct NotACertificate: Error {}

    /// Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signature }, and
    /// TBSCertificate ::= SEQUENCE { [0] version OPTIONAL, serialNumber, signature, issuer,
    /// validity, subject, subjectPublicKeyInfo, … } (RFC 5280 §4.1).
    private static func subjectPublicKeyInfo(of der: [UInt8]) throws -> [UInt8] {
        let root = try DER.parse(der)
        guard root.identifier == .sequence, case .constructed(let certificateParts) = root.content else { throw NotACertificate() }
        let parts = Array(certificateParts)
        guard parts.count == 3, parts[0].identifier == .sequence, case .constructed(let tbsParts) = parts[0].content else {
            throw NotACertificate()
        }
        let fields = Array(tbsParts)
        let versionTag = ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)
        let first = fields.first?.identifier == versionTag ? 1 : 0
        guard fields.count > first + 5, fields[first].identifier == .integer else { throw NotACertificate() }
        let spki = fields[first + 5]
        guard spki.identifier == .sequence, case .constructed = spki.content else { throw NotACertificate() }
        return Array(spki.encodedBytes)
    }
}

extension PinSet {
    /// Checks a chain that has already been validated (RFC 5280 path and host name) for `host`
    /// against the host's pins at `now`, as RFC 7469 §2.6 does: the connection is pinned when
    /// any key of `validatedChain` (leaf first) is one of the host's pins.
    ///
    /// `servedChain` (the DER certificates the server sent, in its order) is only carried in a
    /// failure report; keys the server sent that did not make it into the validated chain do
    /// not count. After the host's `expires` the verdict is ``PinVerdict/expired`` whatever the
    /// chain.
    public func evaluate(host: String, port: Int, validatedChain: [ChainCertificate], servedChain: [[UInt8]], now: Date = Date()) -> PinVerdict {
        guard let entry = policy(for: host) else { return .notPinned }
        if entry.isExpired(at: now) { return .expired }
        for certificate in validatedChain where entry.pins.contains(certificate.fingerprint) {
            return .matched(certificate.fingerprint)
        }
        let report = PinFailureReport(
            dateTime: now, hostname: HostPins.normalize(host), port: port, effectiveExpirationDate: entry.expires,
            includeSubdomains: entry.includeSubdomains, notedHostname: entry.host,
            servedCertificateChain: servedChain.map { PEM.encode(label: "CERTIFICATE", der: $0) },
            validatedCertificateChain: validatedChain.map { PEM.encode(label: "CERTIFICATE", der: $0.der) },
            knownPins: entry.pins, presentedPins: validatedChain.map(\.fingerprint), enforced: entry.isEnforced,
            reportURIs: entry.reportURIs)
        return entry.reportOnly ? .failedReportOnly(report) : .failed(report)
    }
}
