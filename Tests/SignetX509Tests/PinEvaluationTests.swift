import Crypto
import Foundation
import SignetCore
import SignetTestSupport
import SignetX509
import SwiftASN1
import Testing
import X509

/// Checking validated chains against a pin set: subdomains, expiry, report-only, which key of
/// the chain matches, and the RFC 7469 failure report.
@Suite("Pin evaluation")
struct PinEvaluationTests {
    /// A chain certificate with `pin` as its key's fingerprint and stand-in DER.
    private func certificate(_ pin: KeyFingerprint) -> ChainCertificate {
        ChainCertificate(fingerprint: pin, der: [0x30, 0x03, 0x02, 0x01, 0x01])
    }

    @Test("a host takes its own entry, else the nearest parent with includeSubdomains")
    func subdomains() throws {
        let a = try PinFixtures.newPin(), b = try PinFixtures.newPin(), c = try PinFixtures.newPin()
        let set = try PinSet(hosts: [
            HostPins(host: "example.com", pins: [a, b], includeSubdomains: true),
            HostPins(host: "api.example.com", pins: [b, c]),
            HostPins(host: "b.example.com", pins: [c, a], includeSubdomains: true),
        ])
        #expect(set.policy(for: "example.com")?.host == "example.com")
        #expect(set.policy(for: "www.example.com")?.host == "example.com")
        #expect(set.policy(for: "x.y.example.com")?.host == "example.com")
        #expect(set.policy(for: "b.example.com")?.host == "b.example.com")
        #expect(set.policy(for: "a.b.example.com")?.host == "b.example.com", "the longest parent wins")
        #expect(set.policy(for: "API.Example.COM.")?.host == "api.example.com", "exact match, any case, trailing dot")
        #expect(set.policy(for: "v2.api.example.com")?.host == "example.com", "api.example.com does not cover its subdomains")
        #expect(set.policy(for: "notexample.com") == nil)
        #expect(set.policy(for: "example.com.evil.net") == nil)
        #expect(set.policy(for: "com") == nil)

        let exactOnly = try PinSet(hosts: [HostPins(host: "example.com", pins: [a, b])])
        #expect(exactOnly.policy(for: "www.example.com") == nil)
        let verdict = exactOnly.evaluate(
            host: "www.example.com", port: 443, validatedChain: [certificate(c)], servedChain: [], now: PinFixtures.march2026)
        #expect(verdict == .notPinned)
        #expect(verdict.allowsConnection)
    }

    @Test("pins are enforced up to and at their expiry, and not after it")
    func expiry() throws {
        let a = try PinFixtures.newPin(), b = try PinFixtures.newPin(), other = try PinFixtures.newPin()
        let expires = PinFixtures.june2027
        let set = try PinSet(hosts: [HostPins(host: "api.example.com", pins: [a, b], expires: expires)])
        func verdict(_ pin: KeyFingerprint, at now: Date) -> PinVerdict {
            set.evaluate(host: "api.example.com", port: 443, validatedChain: [certificate(pin)], servedChain: [], now: now)
        }
        for now in [expires.addingTimeInterval(-86_400), expires.addingTimeInterval(-1), expires] {
            let before = verdict(other, at: now)
            guard case .failed(let report) = before else {
                Issue.record("at \(now): \(before)")
                continue
            }
            #expect(!before.allowsConnection)
            #expect(report.effectiveExpirationDate == expires)
            #expect(verdict(a, at: now) == .matched(a))
        }
        for now in [expires.addingTimeInterval(1), expires.addingTimeInterval(86_400 * 365)] {
            #expect(verdict(other, at: now) == .expired)
            #expect(verdict(a, at: now) == .expired)
            #expect(verdict(other, at: now).allowsConnection)
        }
        #expect(set.hosts[0].isExpired(at: expires) == false)
        #expect(set.hosts[0].isExpired(at: expires.addingTimeInterval(1)))
    }

    @Test("a report-only failure lets the connection go on and carries an unenforced report")
    func reportOnly() throws {
        let a = try PinFixtures.newPin(), b = try PinFixtures.newPin(), other = try PinFixtures.newPin()
        let set = try PinSet(hosts: [
            HostPins(host: "api.example.com", pins: [a, b], reportOnly: true, reportURIs: ["https://reports.example.com/pkp"])
        ])
        let verdict = set.evaluate(
            host: "api.example.com", port: 443, validatedChain: [certificate(other)], servedChain: [], now: PinFixtures.march2026)
        guard case .failedReportOnly(let report) = verdict else {
            Issue.record("\(verdict)")
            return
        }
        #expect(verdict.allowsConnection)
        #expect(verdict.failureReport == report)
        #expect(!report.enforced)
        #expect(report.reportURIs == ["https://reports.example.com/pkp"])
        #expect(report.error.code == "pinMismatch")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(report.json())) as? [String: Any])
        #expect(object["enforced"] as? Bool == false)
        #expect(object["effective-expiration-date"] is NSNull)
    }

    @Test("a pin matches whichever key of the validated chain it names, leaf first")
    func intermediateMatch() throws {
        let leaf = try PinFixtures.newPin(), intermediate = try PinFixtures.newPin()
        let root = try PinFixtures.newPin(), backup = try PinFixtures.newPin()
        let chain = [certificate(leaf), certificate(intermediate), certificate(root)]
        func verdict(_ pins: [KeyFingerprint]) throws -> PinVerdict {
            try PinSet(hosts: [HostPins(host: "api.example.com", pins: pins)])
                .evaluate(host: "api.example.com", port: 443, validatedChain: chain, servedChain: [], now: PinFixtures.march2026)
        }
        #expect(try verdict([intermediate, backup]) == .matched(intermediate))
        #expect(try verdict([backup, root]) == .matched(root))
        #expect(try verdict([intermediate, leaf]) == .matched(leaf))
        let unmatched = try verdict([backup, try PinFixtures.newPin()])
        #expect(unmatched.failureReport?.presentedPins == [leaf, intermediate, root])
        // A key the server sent but that is not in the validated chain does not count.
        let set = try PinSet(hosts: [HostPins(host: "api.example.com", pins: [backup, try PinFixtures.newPin()])])
        let servedOnly = set.evaluate(
            host: "api.example.com", port: 443, validatedChain: [certificate(leaf)], servedChain: [[0x30, 0x00]], now: PinFixtures.march2026)
        guard case .failed = servedOnly else {
            Issue.record("\(servedOnly)")
            return
        }
    }

    @Test("the failure report has RFC 7469's members, PEM chains and pin-sha256 known pins; its error names both sides")
    func failureReport() throws {
        let leafKey = P256.Signing.PrivateKey(), caKey = P256.Signing.PrivateKey()
        let caDER = try PinFixtures.certificateDER(subject: "Pin Test CA", key: caKey, issuer: "Pin Test CA", issuerKey: caKey)
        let leafDER = try PinFixtures.certificateDER(subject: "sub.example.com", key: leafKey, issuer: "Pin Test CA", issuerKey: caKey)
        let leaf = try ChainCertificate(der: leafDER, source: "leaf.der")
        let ca = try ChainCertificate(der: caDER, source: "ca.der")
        #expect(leaf.fingerprint == KeyFingerprint(spkiDER: Array(leafKey.publicKey.derRepresentation)))
        #expect(ca.fingerprint == KeyFingerprint(spkiDER: Array(caKey.publicKey.derRepresentation)))

        let pinned = [try PinFixtures.newPin(), try PinFixtures.newPin()]
        let set = try PinSet(hosts: [
            HostPins(
                host: "example.com", pins: pinned, includeSubdomains: true, expires: PinFixtures.june2027,
                reportURIs: ["https://reports.example.com/pkp"])
        ])
        let verdict = set.evaluate(
            host: "Sub.Example.com", port: 8443, validatedChain: [leaf, ca], servedChain: [leafDER, caDER], now: PinFixtures.march2026)
        guard case .failed(let report) = verdict else {
            Issue.record("\(verdict)")
            return
        }
        #expect(!verdict.allowsConnection)

        let object = try #require(try JSONSerialization.jsonObject(with: Data(report.json())) as? [String: Any])
        #expect(
            Set(object.keys) == [
                "date-time", "hostname", "port", "effective-expiration-date", "include-subdomains", "noted-hostname",
                "served-certificate-chain", "validated-certificate-chain", "known-pins", "enforced",
            ])
        #expect(object["date-time"] as? String == "2026-03-01T12:00:00Z")
        #expect(object["hostname"] as? String == "sub.example.com")
        #expect(object["port"] as? Int == 8443)
        #expect(object["effective-expiration-date"] as? String == "2027-06-01T00:00:00Z")
        #expect(object["include-subdomains"] as? Bool == true)
        #expect(object["noted-hostname"] as? String == "example.com")
        #expect(object["enforced"] as? Bool == true)
        #expect(object["known-pins"] as? [String] == pinned.map { "pin-sha256=\"\(Base64.encode($0.bytes))\"" })
        let served = try #require(object["served-certificate-chain"] as? [String])
        let validated = try #require(object["validated-certificate-chain"] as? [String])
        #expect(served.allSatisfy { $0.hasPrefix("-----BEGIN CERTIFICATE-----\n") })
        #expect(try PEM.decode(served.joined(), source: "served").map(\.der) == [leafDER, caDER])
        #expect(try PEM.decode(validated.joined(), source: "validated").map(\.der) == [leafDER, caDER])
        // The certificates are real: swift-certificates reads them back.
        #expect(try Certificate(derEncoded: leafDER).subject.description.contains("sub.example.com"))

        #expect(
            report.error
                == .pinMismatch(host: "sub.example.com", presented: [leaf.fingerprint.description, ca.fingerprint.description],
                    expected: pinned.map(\.description)))
        expectError(
            report.error, is: "pinMismatch",
            mentioning: ["sub.example.com", leaf.fingerprint.description, ca.fingerprint.description, pinned[0].description, pinned[1].description])
        #expect(report.error.category == .checkFailed)
        #expect(!report.error.description.contains("--"))
    }

    @Test("a certificate's pin is its SubjectPublicKeyInfo's, from DER or from swift-certificates; other bytes are refused")
    func chainCertificates() throws {
        let key = P256.Signing.PrivateKey()
        let certificate = try PinFixtures.certificate(subject: "leaf", key: key, issuer: "leaf", issuerKey: key)
        let der = try PinFixtures.certificateDER(subject: "leaf", key: key, issuer: "leaf", issuerKey: key)
        let fromDER = try ChainCertificate(der: der, source: "leaf.der")
        #expect(fromDER.fingerprint == KeyFingerprint(spkiDER: Array(key.publicKey.derRepresentation)))
        let fromCertificate = try ChainCertificate(certificate)
        #expect(fromCertificate.fingerprint == fromDER.fingerprint)
        // One concept, one function (a pin is the key's fingerprint): the pin `signet cert pin` prints is this one.
        #expect(certificate.publicKey.fingerprint == fromDER.fingerprint, "Certificate.PublicKey.fingerprint must hash the DER SPKI, not the bare key bits")

        for junk: [UInt8] in [[], [0x30, 0x03, 0x02, 0x01, 0x01], Array(der.dropLast()), Array(repeating: 0x41, count: 64)] {
            let error = try thrown(X509Error.self) { try ChainCertificate(der: junk, source: "junk.der") }
            expectError(error, is: "malformed", mentioning: ["junk.der", "not a DER certificate"])
        }
    }
}
