#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SignetCore

/// A pin validation failure report in the shape of RFC 7469 §3, plus whether the pins were
/// enforced (TrustKit's `enforce-pinning`).
///
/// ``json()`` writes the members RFC 7469 names, in its order: `date-time`, `hostname`,
/// `port`, `effective-expiration-date` (null when the pins never expire),
/// `include-subdomains`, `noted-hostname`, `served-certificate-chain`,
/// `validated-certificate-chain` (PEM strings), `known-pins` (`pin-sha256="<base64>"`
/// strings), and then `enforced`.
public struct PinFailureReport: Sendable, Equatable {
    /// When the failure happened.
    public var dateTime: Date
    /// The host name connected to (ASCII lowercase, no trailing dot).
    public var hostname: String
    /// The port connected to.
    public var port: Int
    /// When the host's pins stop being enforced; nil: never.
    public var effectiveExpirationDate: Date?
    /// Whether the pins that applied cover subdomains.
    public var includeSubdomains: Bool
    /// The host name of the pin set entry that applied: ``hostname`` or a parent domain.
    public var notedHostname: String
    /// The certificates the server sent, in its order, as PEM.
    public var servedCertificateChain: [String]
    /// The validated chain, leaf first, as PEM.
    public var validatedCertificateChain: [String]
    /// The pins that applied.
    public var knownPins: [KeyFingerprint]
    /// The key fingerprints of the validated chain, leaf first: what was compared with the
    /// pins.
    public var presentedPins: [KeyFingerprint]
    /// Whether the connection was refused (false: the pins are report-only).
    public var enforced: Bool
    /// Where the pin set says to send the report.
    public var reportURIs: [String]

    /// A report; ``PinSet/evaluate(host:port:validatedChain:servedChain:now:)`` makes them.
    public init(
        dateTime: Date, hostname: String, port: Int, effectiveExpirationDate: Date?, includeSubdomains: Bool, notedHostname: String,
        servedCertificateChain: [String], validatedCertificateChain: [String], knownPins: [KeyFingerprint], presentedPins: [KeyFingerprint],
        enforced: Bool, reportURIs: [String]
    ) {
        self.dateTime = dateTime
        self.hostname = hostname
        self.port = port
        self.effectiveExpirationDate = effectiveExpirationDate
        self.includeSubdomains = includeSubdomains
        self.notedHostname = notedHostname
        self.servedCertificateChain = servedCertificateChain
        self.validatedCertificateChain = validatedCertificateChain
        self.knownPins = knownPins
        self.presentedPins = presentedPins
        self.enforced = enforced
        self.reportURIs = reportURIs
    }

    /// The error an enforced failure ends the connection with: the host, the fingerprints of
    /// the validated chain and the pins, each as `sha256/<base64>`.
    public var error: X509Error {
        .pinMismatch(host: hostname, presented: presentedPins.map(\.description), expected: knownPins.map(\.description))
    }

    /// The report as the JSON body to POST to each of ``reportURIs`` (`application/json`),
    /// on one line. Dates are written like `2026-03-01T12:00:00Z`.
    public func json() -> [UInt8] {
        JSONValue.object([
            .init("date-time", .string(PinDate.format(dateTime))),
            .init("hostname", .string(hostname)),
            .init("port", .number(String(port))),
            .init("effective-expiration-date", effectiveExpirationDate.map { JSONValue.string(PinDate.format($0)) } ?? JSONValue.null),
            .init("include-subdomains", .bool(includeSubdomains)),
            .init("noted-hostname", .string(notedHostname)),
            .init("served-certificate-chain", .array(servedCertificateChain.map { JSONValue.string($0) })),
            .init("validated-certificate-chain", .array(validatedCertificateChain.map { JSONValue.string($0) })),
            .init("known-pins", .array(knownPins.map { JSONValue.string("pin-sha256=\"\(Base64.encode($0.bytes))\"") })),
            .init("enforced", .bool(enforced)),
        ]).bytes(pretty: false)
    }
}

/// Sends pin failure reports (to the pin set's report URIs, a log, a metrics system …).
///
/// A connection does not wait on a report it cannot afford to: implementations should bound
/// the time they take and swallow their own failures.
public protocol PinFailureReporter: Sendable {
    /// Delivers one report; called for enforced and report-only failures alike.
    func report(_ report: PinFailureReport) async
}
