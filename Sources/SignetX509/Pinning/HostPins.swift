#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SignetCore

/// The pins of one host (or of a domain and its subdomains): the SPKI fingerprints of which at
/// least one must be in the validated certificate chain (`docs/formats/pins.md`).
///
/// A value on its own is not checked; ``PinSet/init(hosts:source:)`` checks it (at least two
/// distinct pins, a valid host name, usable report URIs) and normalises it.
public struct HostPins: Sendable, Equatable {
    /// The host name: ASCII lowercase without a trailing dot once in a ``PinSet``;
    /// internationalised names in their `xn--` A-label form, as certificates carry them.
    public var host: String
    /// The SHA-256 fingerprints of the pinned `SubjectPublicKeyInfo`s: at least two, distinct
    /// (one key in use and at least one backup key that is not).
    public var pins: [KeyFingerprint]
    /// Whether the pins also hold for every name under ``host`` (`a.b.example.com` under
    /// `example.com`).
    public var includeSubdomains: Bool
    /// After this instant the pins are not enforced (TrustKit's `kTSKExpirationDate`): chain
    /// and host name validation still are. Nil: they never expire. Whole seconds in a
    /// ``PinSet``.
    public var expires: Date?
    /// Whether a pin failure is only reported and the connection goes on (TrustKit's
    /// `kTSKEnforcePinning` = false).
    public var reportOnly: Bool
    /// Where failure reports are sent (TrustKit's `kTSKReportUris`): `https://` or `http://`
    /// URLs.
    public var reportURIs: [String]

    /// The pins of `host`; see each property for its meaning.
    public init(
        host: String, pins: [KeyFingerprint], includeSubdomains: Bool = false, expires: Date? = nil, reportOnly: Bool = false,
        reportURIs: [String] = []
    ) {
        self.host = host
        self.pins = pins
        self.includeSubdomains = includeSubdomains
        self.expires = expires
        self.reportOnly = reportOnly
        self.reportURIs = reportURIs
    }

    /// Whether the pins have expired at `now`: strictly after ``expires``.
    public func isExpired(at now: Date) -> Bool {
        guard let expires else { return false }
        return now > expires
    }

    /// Whether a failure closes the connection: not ``reportOnly``.
    public var isEnforced: Bool { !reportOnly }

    /// How host names are compared: ASCII letters lowercased, one trailing dot dropped.
    static func normalize(_ host: String) -> String {
        var bytes: [UInt8] = host.utf8.map { byte in byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte }
        if bytes.count > 1, bytes.last == UInt8(ascii: ".") { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// This entry normalised and checked, or the reason it is refused (without the source).
    func validated() throws(PinSetProblem) -> HostPins {
        var entry = self
        entry.host = Self.normalize(host)
        if let problem = Self.hostNameProblem(entry.host) {
            throw PinSetProblem("\"\(X509Error.printable(host))\" is not a valid host name: \(problem)")
        }
        let name = entry.host
        var seen = Set<KeyFingerprint>()
        for pin in pins where !seen.insert(pin).inserted {
            throw PinSetProblem("\(name): the pin \(pin) is listed twice; the pins must differ (one is the key in use, the others backups)")
        }
        guard pins.count >= 2 else {
            let count = pins.isEmpty ? "no pins" : "only one pin"
            throw PinSetProblem(
                "\(name): \(count); at least two are needed: the key in use and a backup key that is not in use yet (RFC 7469 §4.3), so the host can move to the backup without locking its clients out")
        }
        if entry.includeSubdomains {
            let labels = name.split(separator: ".", omittingEmptySubsequences: false)
            if labels.count == 1 {
                throw PinSetProblem("\(name): includeSubdomains on a top-level name would pin every host under it")
            }
            if let last = labels.last, last.utf8.allSatisfy({ byte in byte >= 0x30 && byte <= 0x39 }) {
                throw PinSetProblem("\(name): includeSubdomains on an IP address has no meaning")
            }
        }
        if let expires = entry.expires {
            guard PinDate.isRepresentable(expires) else {
                throw PinSetProblem("\(name): expires lies outside the years 1 to 9999")
            }
            entry.expires = PinDate.wholeSeconds(expires)
        }
        for uri in reportURIs {
            if let problem = Self.reportURIProblem(uri) {
                throw PinSetProblem("\(name): the report URI \"\(X509Error.printable(uri))\" \(problem)")
            }
        }
        return entry
    }

    /// Why `name` (already normalised) is not a host name Signet pins; nil when it is.
    static func hostNameProblem(_ name: String) -> String? {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty else { return "it is empty" }
        guard bytes.count <= 253 else { return "it is longer than 253 bytes" }
        if bytes.contains(UInt8(ascii: "*")) {
            return "a wildcard is not a host name; pin the parent domain with includeSubdomains instead"
        }
        for label in bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false) {
            guard !label.isEmpty else { return "it has an empty label (two dots in a row, or a dot at the start)" }
            guard label.count <= 63 else { return "a label is longer than 63 bytes" }
            let allowed = label.allSatisfy { byte in
                (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == UInt8(ascii: "-")
            }
            guard allowed else {
                return "it may hold only the letters a–z, digits, hyphens and dots (write an internationalised name as its ASCII A-label, as certificates hold it)"
            }
            guard label.first != UInt8(ascii: "-"), label.last != UInt8(ascii: "-") else {
                return "a label starts or ends with a hyphen"
            }
        }
        return nil
    }

    /// Why `uri` cannot receive reports; nil when it can.
    static func reportURIProblem(_ uri: String) -> String? {
        guard uri.utf8.count <= 2048 else { return "is longer than 2048 bytes" }
        let lowered = normalize(uri)
        let rest: Substring
        if lowered.hasPrefix("https://") {
            rest = uri.dropFirst(8)
        } else if lowered.hasPrefix("http://") {
            rest = uri.dropFirst(7)
        } else {
            return "is not an https:// or http:// URL"
        }
        guard let first = rest.first, first != "/", first != "?", first != "#" else { return "has no host" }
        guard uri.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }) else {
            return "holds white space or a control character"
        }
        return nil
    }
}

/// Why a pin set is refused, before the source is known.
struct PinSetProblem: Error {
    let detail: String

    init(_ detail: String) { self.detail = detail }
}
