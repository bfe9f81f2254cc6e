import SignetCore
import SwiftASN1
import X509

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a certificate is for, which decides its basic constraints, key usage and extended key
/// usage.
public enum CertificateProfile: String, CaseIterable, Sendable {
    /// A TLS server: not a CA; digital signature (and key encipherment for RSA); serverAuth.
    case server
    /// A TLS client: not a CA; digital signature; clientAuth.
    case client
    /// A certificate authority: CA; certificate and CRL signing.
    case ca
}

/// Makes self-signed certificates, CSRs, and certificates issued by a CA, every signature
/// through a ``Signer``, so a key on a token serves as well as one in a file.
public enum CertificateFactory {
    /// The most days a certificate may be valid for (100 years).
    public static let maximumDays = 36_500

    /// A self-signed certificate for `signer`'s key: a CA with `profile` `.ca`, else a leaf
    /// valid for both server and client authentication.
    public static func selfSigned(
        signer: any Signer, subject: DistinguishedName, alternativeNames: [GeneralName] = [],
        days: Int = 365, profile: CertificateProfile = .server, now: Date = Date()
    ) async throws -> Certificate {
        let key = try SignerPrivateKey(signer)
        let (notBefore, notAfter) = try validity(days: days, now: now)
        let publicKey = key.publicKey
        let extensions = try makeExtensions(
            profile: profile, selfSignedLeaf: true, subjectKey: publicKey, issuerKey: publicKey,
            alternativeNames: alternativeNames, keyKind: signer.publicKey.kind)
        return try await sign {
            try await Certificate(
                version: .v3, serialNumber: randomSerial(), publicKey: publicKey,
                notValidBefore: notBefore, notValidAfter: notAfter, issuer: subject, subject: subject,
                signatureAlgorithm: key.defaultSignatureAlgorithm, extensions: extensions,
                issuerAsyncPrivateKey: Certificate.PrivateKey(key))
        }
    }

    /// A PKCS#10 request for `signer`'s key, carrying the SANs as an extension request.
    public static func csr(
        signer: any Signer, subject: DistinguishedName, alternativeNames: [GeneralName] = []
    ) async throws -> CertificateSigningRequest {
        let key = try SignerPrivateKey(signer)
        var attributes = CertificateSigningRequest.Attributes()
        if !alternativeNames.isEmpty {
            do {
                let extensions = try Certificate.Extensions { SubjectAlternativeNames(alternativeNames) }
                attributes.insert(try .init(ExtensionRequest(extensions: extensions)))
            } catch {
                throw X509Error.invalidArgument(detail: "the subject alternative names cannot be encoded: \(error)")
            }
        }
        return try await sign {
            try await CertificateSigningRequest(
                version: .v1, subject: subject, asyncPrivateKey: Certificate.PrivateKey(key),
                attributes: attributes, signatureAlgorithm: key.defaultSignatureAlgorithm)
        }
    }

    /// A certificate for the key and subject of `csr`, issued by the CA whose certificate is
    /// `caCertificate` and whose key `caSigner` holds.
    ///
    /// The CSR's signature is checked first; its SANs are copied; the CA certificate must be a
    /// CA allowed to sign certificates, valid now, and belong to `caSigner`. The new
    /// certificate never outlives the CA's: `days` beyond the CA's expiry are refused, and
    /// with `days` nil the certificate is valid for 365 days or until the CA expires, whichever
    /// comes first.
    public static func issue(
        csr: CertificateSigningRequest, csrSource: String, caCertificate: Certificate, caSigner: any Signer,
        profile: CertificateProfile = .server, days: Int? = nil, now: Date = Date()
    ) async throws -> Certificate {
        guard csr.publicKey.isValidSignature(csr.signature, for: csr) else {
            throw X509Error.signatureInvalid(source: csrSource, detail: "the request was not signed by the key it carries, or was altered")
        }
        let key = try SignerPrivateKey(caSigner)
        try requireUsableCA(caCertificate, key: key, now: now)
        let requested = try requestedAlternativeNames(csr, source: csrSource)
        try requireIssuable(profile: profile, names: requested, by: caCertificate)
        if profile == .server, requested.isEmpty {
            throw X509Error.invalidArgument(
                detail: "\(csrSource): a server certificate needs subject alternative names (DNS or IP), and the request has none")
        }
        var (notBefore, notAfter) = try validity(days: days ?? 365, now: now)
        if notAfter > caCertificate.notValidAfter {
            if let days {
                throw X509Error.invalidArgument(
                    detail: "the CA certificate expires \(caCertificate.notValidAfter.formatted(.iso8601)), before the \(days) days asked for; ask for fewer")
            }
            notAfter = caCertificate.notValidAfter
        }
        notBefore = max(notBefore, caCertificate.notValidBefore)
        let kind: KeyKind
        do {
            kind = try KeyDecoder.decode(csr.publicKey.spkiDER, source: csrSource).publicKindForProfile()
        } catch {
            throw X509Error.unsupported(source: csrSource, detail: "its public key: \(error)")
        }
        let extensions = try makeExtensions(
            profile: profile, selfSignedLeaf: false, subjectKey: csr.publicKey, issuerKey: caCertificate.publicKey,
            issuerKeyIdentifier: (try? caCertificate.extensions.subjectKeyIdentifier)??.keyIdentifier,
            alternativeNames: requested, keyKind: kind)
        let subject = csr.subject
        return try await sign {
            try await Certificate(
                version: .v3, serialNumber: randomSerial(), publicKey: csr.publicKey,
                notValidBefore: notBefore, notValidAfter: notAfter, issuer: caCertificate.subject, subject: subject,
                signatureAlgorithm: key.defaultSignatureAlgorithm, extensions: extensions,
                issuerAsyncPrivateKey: Certificate.PrivateKey(key))
        }
    }

    /// The SANs a CSR asks for in its extension request.
    public static func requestedAlternativeNames(_ csr: CertificateSigningRequest, source: String) throws -> [GeneralName] {
        do {
            guard let request = try csr.attributes.extensionRequest,
                let names = try request.extensions.subjectAlternativeNames
            else { return [] }
            for case .dnsName(let name) in names {
                if let problem = DNSNameRules.problemIssuing(name) {
                    throw X509Error.invalidArgument(detail: "\(source): it asks for DNS:\(PrintableText.escaped(problem))")
                }
            }
            return Array(names)
        } catch let error as X509Error {
            throw error
        } catch {
            throw X509Error.malformed(source: source, detail: "its extension request cannot be read (\(error))")
        }
    }

    /// A random positive 16-byte serial number (RFC 5280 §4.1.2.2: at most 20 octets, positive).
    public static func randomSerial() -> Certificate.SerialNumber {
        var bytes = RandomBytes.make(16)
        bytes[0] = (bytes[0] & 0x7F) | 0x01  // positive, and 16 bytes long once DER-encoded
        return Certificate.SerialNumber(bytes: bytes)
    }

    static func validity(days: Int, now: Date) throws -> (Date, Date) {
        guard (1...maximumDays).contains(days) else {
            throw X509Error.invalidArgument(detail: "validity of \(days) days is out of range (1 to \(maximumDays))")
        }
        // Whole seconds, as the encoding keeps them.
        let start = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        return (start, start.addingTimeInterval(Double(days) * 86_400))
    }

    static func requireUsableCA(_ ca: Certificate, key: SignerPrivateKey, now: Date) throws {
        let name = ca.subject.description
        guard ca.publicKey == key.publicKey else {
            throw X509Error.keyMismatch(detail: "the CA key does not belong to the CA certificate \(name)")
        }
        let constraints = try? ca.extensions.basicConstraints
        guard case .isCertificateAuthority = constraints else {
            throw X509Error.chainInvalid(subject: name, detail: "it is not a CA certificate (basic constraints do not say CA:TRUE)")
        }
        if let usage = try? ca.extensions.keyUsage, !usage.keyCertSign {
            throw X509Error.chainInvalid(subject: name, detail: "its key usage does not allow signing certificates")
        }
        guard ca.notValidBefore <= now, now <= ca.notValidAfter else {
            throw X509Error.chainInvalid(subject: name, detail: "the CA certificate is not valid now (valid \(ca.notValidBefore.formatted(.iso8601)) to \(ca.notValidAfter.formatted(.iso8601)))")
        }
    }

    /// Refuses what ``ChainVerifier`` would refuse once issued (docs/certificates.md), so
    /// Signet never makes a certificate it would not trust: a server or client certificate under
    /// a CA whose extended key usage does not allow that purpose, and a DNS name outside the
    /// CA's name constraints.
    static func requireIssuable(profile: CertificateProfile, names: [GeneralName], by ca: Certificate) throws {
        let name = PrintableText.escaped(ca.subject.description)
        let purpose: CertificatePurpose? = profile == .server ? .server : profile == .client ? .client : nil
        if let purpose, let wanted = purpose.usage, let usage = try? ca.extensions.extendedKeyUsage, !usage.contains(wanted) {
            throw X509Error.invalidArgument(detail: "the CA \(name) may not issue for \(purpose.phrase): its extended key usage does not allow it")
        }
        guard let constraints = try? ca.extensions.nameConstraints else { return }
        let permitted = constraints.permittedSubtrees.compactMap(ChainNames.dnsBase)
        let excluded = constraints.excludedSubtrees.compactMap(ChainNames.dnsBase)
        for case .dnsName(let dns) in names {
            if !permitted.isEmpty, !permitted.contains(where: { DNSNameRules.constraint($0, holds: dns) }) {
                throw X509Error.invalidArgument(detail: "DNS:\(PrintableText.escaped(dns)) is outside what the CA \(name) may certify (permitted: \(permitted.joined(separator: ", ")))")
            }
            if let base = excluded.first(where: { DNSNameRules.constraint($0, holds: dns) }) {
                throw X509Error.invalidArgument(detail: "DNS:\(PrintableText.escaped(dns)) is excluded by the CA \(name) (\(base))")
            }
        }
    }

    static func makeExtensions(
        profile: CertificateProfile, selfSignedLeaf: Bool, subjectKey: Certificate.PublicKey, issuerKey: Certificate.PublicKey,
        issuerKeyIdentifier: ArraySlice<UInt8>? = nil, alternativeNames: [GeneralName], keyKind: KeyKind
    ) throws -> Certificate.Extensions {
        let subjectIdentifier = SubjectKeyIdentifier(hash: subjectKey)
        let authorityIdentifier = issuerKeyIdentifier ?? SubjectKeyIdentifier(hash: issuerKey).keyIdentifier
        let isRSA = keyKind.family == "rsa"
        do {
            return try Certificate.Extensions {
                switch profile {
                case .ca:
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                    Critical(KeyUsage(digitalSignature: true, keyCertSign: true, cRLSign: true))
                case .server:
                    Critical(BasicConstraints.notCertificateAuthority)
                    Critical(KeyUsage(digitalSignature: true, keyEncipherment: isRSA))
                    try ExtendedKeyUsage(selfSignedLeaf ? [.serverAuth, .clientAuth] : [.serverAuth])
                case .client:
                    Critical(BasicConstraints.notCertificateAuthority)
                    Critical(KeyUsage(digitalSignature: true))
                    try ExtendedKeyUsage([.clientAuth])
                }
                subjectIdentifier
                AuthorityKeyIdentifier(keyIdentifier: authorityIdentifier)
                if !alternativeNames.isEmpty {
                    SubjectAlternativeNames(alternativeNames)
                }
            }
        } catch {
            throw X509Error.invalidArgument(detail: "the certificate extensions cannot be encoded: \(error)")
        }
    }

    /// Runs a swift-certificates signing step, passing Signet errors through and naming others.
    static func sign<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as X509Error {
            throw error
        } catch let error as any SignetError {
            throw X509Error.unsupported(source: "the signing key", detail: error.description)
        } catch {
            throw X509Error.unsupported(source: "the signing key", detail: "signing failed: \(error)")
        }
    }
}

extension DecodedKey {
    /// The kind of key, for choosing key usage bits.
    func publicKindForProfile() throws -> KeyKind {
        guard case .publicKey(let key) = self else { throw X509Error.malformed(source: "request", detail: "no public key") }
        return key.kind
    }
}
