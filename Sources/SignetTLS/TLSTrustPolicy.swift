import SignetCore
import SignetX509
import X509

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How a TLS client decides to trust a server: full chain validation to trust anchors,
/// hostname verification, and the pins of a ``PinSet`` checked on the *validated* chain — or,
/// explicitly, a pinned self-signed server, where the pin replaces the chain and the hostname
/// and validity period are still checked.
///
/// Pinning alone is never enough: a client that only compares pins skips chain validation, and
/// one that skips hostname checks accepts any certificate carrying a pinned key. This policy
/// always does both.
public struct TLSTrustPolicy: Sendable {
    /// What the pins are checked against.
    public enum Mode: Sendable {
        /// Validate the presented chain to these anchors (RFC 5280) and the leaf against the
        /// host (RFC 6125); then, when the host is pinned, require a pinned key in the
        /// validated chain.
        case validatedChain(TrustAnchors)
        /// Trust a self-signed leaf whose key is pinned: no chain, but the pin, the hostname
        /// and the validity period are checked. Pins are required for the host.
        case pinnedSelfSigned
    }

    /// Chain validation or a pinned self-signed server.
    public var mode: Mode
    /// The pins; nil checks chain and hostname only.
    public var pins: PinSet?
    /// Called with every pin failure, enforced or report-only.
    public var reporter: (any PinFailureReporter)?
    /// The time certificates and pin sets are checked at; nil is the moment of the handshake.
    public var validationTime: Date?

    /// A policy; see ``Mode``.
    public init(mode: Mode = .validatedChain(.system), pins: PinSet? = nil, reporter: (any PinFailureReporter)? = nil, validationTime: Date? = nil) {
        self.mode = mode
        self.pins = pins
        self.reporter = reporter
        self.validationTime = validationTime
    }

    /// Decides whether the certificates a server presented (leaf first) are to be trusted for
    /// `host`; returns the validated chain (leaf first). Throws ``X509Error/chainInvalid(subject:detail:)``,
    /// ``X509Error/hostnameMismatch(hostname:detail:)`` or ``X509Error/pinMismatch(host:presented:expected:)``.
    public func evaluate(presented: [Certificate], host: String, port: Int) async throws -> [Certificate] {
        guard let leaf = presented.first else {
            throw X509Error.chainInvalid(subject: host, detail: "the server presented no certificate")
        }
        let now = validationTime ?? Date()
        switch mode {
        case .validatedChain(let anchors):
            let chain = try await ChainVerifier(anchors: anchors, validationTime: validationTime)
                .verify(leaf: leaf, intermediates: Array(presented.dropFirst()), hostname: host)
            try await checkPins(host: host, port: port, chain: chain, presented: presented, now: now, selfSigned: false)
            return chain
        case .pinnedSelfSigned:
            // The pin first: a leaf whose key is not pinned is refused whatever else it is.
            try await checkPins(host: host, port: port, chain: [leaf], presented: presented, now: now, selfSigned: true)
            try await ChainVerifier(anchors: .certificates([leaf]), validationTime: validationTime)
                .verifyPinnedLeaf(leaf, hostname: host)
            return [leaf]
        }
    }

    private func checkPins(host: String, port: Int, chain: [Certificate], presented: [Certificate], now: Date, selfSigned: Bool) async throws {
        guard let pins else {
            if selfSigned { throw X509Error.pinSetInvalid(source: host, detail: "a pinned self-signed server needs pins for \(host), and none were given") }
            return
        }
        // Only now, with pins to check, are the certificates serialised (for the report).
        let validated = chain.compactMap { try? ChainCertificate($0) }
        let served = presented.compactMap { try? X509Files.derBytes(of: $0) }
        switch pins.evaluate(host: host, port: port, validatedChain: validated, servedChain: served, now: now) {
        case .matched:
            return
        case .notPinned:
            if selfSigned { throw X509Error.pinSetInvalid(source: host, detail: "a pinned self-signed server needs pins for \(host), and the pin set has none") }
        case .expired:
            if selfSigned {
                throw X509Error.pinSetInvalid(source: host, detail: "the pins for \(host) have expired, and a self-signed server can be trusted only by its pin")
            }
        case .failedReportOnly(let report):
            await reporter?.report(report)
            if selfSigned { throw report.error }
        case .failed(let report):
            await reporter?.report(report)
            throw report.error
        }
    }
}
