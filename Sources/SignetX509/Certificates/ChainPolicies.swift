import SignetCore
import SwiftASN1
import X509

// The checks Signet adds to swift-certificates' RFC 5280 policy, so that a chain passes only
// what `openssl verify -purpose` passes (docs/certificates.md; docs/dependencies.md names what
// upstream leaves out). Each runs on a complete candidate path, leaf first, anchor last.

/// The extended and plain key usages a ``CertificatePurpose`` needs (see its description).
struct PurposePolicy: VerifierPolicy {
    let purpose: CertificatePurpose
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [.X509ExtensionID.keyUsage, .X509ExtensionID.extendedKeyUsage]

    mutating func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        let purpose = self.purpose
        guard let wanted = purpose.usage else { return .meetsPolicy }
        for (depth, certificate) in chain.enumerated() {
            let usage: ExtendedKeyUsage?
            do {
                usage = try certificate.extensions.extendedKeyUsage
            } catch {
                return .failsToMeetPolicy(reason: "\(Self.who(depth, certificate)) has an extended key usage that cannot be read: \(error)")
            }
            if let usage, !usage.contains(wanted) {
                return .failsToMeetPolicy(reason: "\(Self.who(depth, certificate)) does not allow \(purpose.phrase) (its extended key usage is \(usage.map { "\($0)" }.joined(separator: ", ")))")
            }
        }
        let leaf = chain.leaf
        let keyUsage: KeyUsage?
        do {
            keyUsage = try leaf.extensions.keyUsage
        } catch {
            return .failsToMeetPolicy(reason: "the certificate has a key usage that cannot be read: \(error)")
        }
        if let keyUsage {
            let allowed = keyUsage.digitalSignature || keyUsage.keyAgreement || (purpose == .server && keyUsage.keyEncipherment)
            if !allowed {
                return .failsToMeetPolicy(reason: "its key usage does not allow \(purpose.phrase) (\(purpose == .server ? "digital signature, key encipherment or key agreement" : "digital signature or key agreement") needed)")
            }
        }
        return .meetsPolicy
    }

    static func who(_ depth: Int, _ certificate: Certificate) -> String {
        depth == 0 ? "the certificate" : "its issuer \(PrintableText.escaped(certificate.subject.description))"
    }
}

/// RFC 5280 §6.1.4(n): every issuer of the path, the trust anchor included, whose key usage is
/// stated must allow certificate signing (`keyCertSign`). swift-certificates marks the
/// extension handled without checking it.
struct IssuerKeyUsagePolicy: VerifierPolicy {
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [.X509ExtensionID.keyUsage]

    mutating func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        // RFC 5280 §6.1.4(k): an intermediate must be a v3 certificate that says it is a CA
        // (basicConstraints cA); a v1 certificate is not one, whatever it signed (openssl: error
        // 79, invalid CA certificate). The trust anchor is trusted as given.
        for certificate in chain.dropFirst().dropLast() {
            let constraints = try? certificate.extensions.basicConstraints
            guard certificate.version == .v3, case .isCertificateAuthority(_)? = constraints else {
                return .failsToMeetPolicy(reason: "issuer \(PrintableText.escaped(certificate.subject.description)) is not a CA certificate (an intermediate must be version 3 with basicConstraints CA:TRUE)")
            }
        }
        for certificate in chain.dropFirst() {
            let usage: KeyUsage?
            do {
                usage = try certificate.extensions.keyUsage
            } catch {
                return .failsToMeetPolicy(reason: "issuer \(PrintableText.escaped(certificate.subject.description)) has a key usage that cannot be read: \(error)")
            }
            if let usage, !usage.keyCertSign {
                return .failsToMeetPolicy(reason: "issuer \(PrintableText.escaped(certificate.subject.description)) may not sign certificates (its key usage lacks keyCertSign)")
            }
        }
        return .meetsPolicy
    }
}

/// The DNS names swift-certificates' name-constraint check does not see, held to the DNS
/// subtrees each issuer permits and excludes:
///
/// - OpenSSL's `NAME_CONSTRAINTS_check_CN`: a leaf with no DNS name among its alternative names
///   has every CN that looks like a DNS name (``DNSNameRules/commonNameIsDNSName(_:)``) checked
///   — or a CA limited to `example.com` could issue `CN=victim.test` and a client that falls
///   back to the CN would take it. A CN in a string type that cannot be read (BMPString,
///   UniversalString, T61String) cannot be checked, and is refused when there are DNS subtrees.
/// - a DNS name with a trailing dot (`a.evil.com.`), which matches the host without it, is
///   checked without it, or `excluded: evil.com` would not hold it.
struct CommonNameConstraintsPolicy: VerifierPolicy {
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = []

    mutating func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        let leaf = chain.leaf
        let dnsNames = ChainNames.dnsNames(of: leaf)
        let constrained = chain.dropFirst().contains { issuer in
            guard let constraints = try? issuer.extensions.nameConstraints else { return false }
            return !(constraints.permittedSubtrees + constraints.excludedSubtrees).compactMap(ChainNames.dnsBase).isEmpty
        }
        // Under DNS name constraints, a name with an empty label (`a..evil.com`) is no DNS name
        // that a subtree could be checked against (openssl: excluded subtree violation).
        if constrained, let malformed = dnsNames.first(where: { DNSNameRules.hasEmptyLabel($0.hasSuffix(".") ? String($0.dropLast()) : $0) }) {
            return .failsToMeetPolicy(reason: "its name \(PrintableText.escaped(malformed)) is not a DNS name (an empty label)")
        }
        var names = dnsNames.filter { $0.hasSuffix(".") }.map { String($0.dropLast()) }
        if !ChainNames.hasDNSName(leaf) {
            names += ChainNames.commonNames(of: leaf).filter(DNSNameRules.commonNameIsDNSName)
            let unreadable = leaf.subject.flatMap { $0 }.contains { $0.type == .RDNAttributeType.commonName && ChainNames.text(of: $0.value) == nil }
            if unreadable, constrained {
                return .failsToMeetPolicy(reason: "its common name is in a string type whose name cannot be checked against the DNS name constraints of its issuers")
            }
        }
        guard !names.isEmpty else { return .meetsPolicy }
        for issuer in chain.dropFirst() {
            guard let constraints = try? issuer.extensions.nameConstraints else { continue }
            let permitted = constraints.permittedSubtrees.compactMap(ChainNames.dnsBase)
            let excluded = constraints.excludedSubtrees.compactMap(ChainNames.dnsBase)
            for name in names {
                if !permitted.isEmpty, !permitted.contains(where: { DNSNameRules.constraint($0, holds: name) }) {
                    return .failsToMeetPolicy(reason: "its name \(PrintableText.escaped(name)) is outside what issuer \(PrintableText.escaped(issuer.subject.description)) may certify (permitted: \(permitted.joined(separator: ", ")))")
                }
                if let base = excluded.first(where: { DNSNameRules.constraint($0, holds: name) }) {
                    return .failsToMeetPolicy(reason: "its name \(PrintableText.escaped(name)) is excluded by issuer \(PrintableText.escaped(issuer.subject.description)) (\(base))")
                }
            }
        }
        return .meetsPolicy
    }
}

/// The server identity check (RFC 6125, RFC 9525) with the rules of ``DNSNameRules``: an IP
/// address against the IP addresses among the alternative names only; a DNS name against the
/// DNS names — and, only when allowed and the leaf has no DNS name and no certificate of the
/// path carries name constraints, against its CNs (browsers never fall back to the CN).
struct HostnamePolicy: VerifierPolicy {
    let hostname: String
    let allowCommonNameFallback: Bool
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [.X509ExtensionID.subjectAlternativeName]

    /// The reason text of a failure of this policy (the chain itself was fine).
    static let reasonPrefix = "name mismatch: "

    mutating func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        let hostname = self.hostname
        let leaf = chain.leaf
        let sans: SubjectAlternativeNames?
        do {
            sans = try leaf.extensions.subjectAlternativeNames
        } catch {
            return .failsToMeetPolicy(reason: "\(Self.reasonPrefix)its alternative names cannot be read: \(error)")
        }
        if let address = SubjectParsing.ipAddressBytes(hostname) {
            let found = sans?.contains { name in
                if case .ipAddress(let bytes) = name { return Array(bytes.bytes) == address }
                return false
            } ?? false
            return found ? .meetsPolicy : .failsToMeetPolicy(reason: "\(Self.reasonPrefix)no IP address among its names is \(hostname)")
        }
        guard let host = DNSNameRules.normalised(hostname) else {
            return .failsToMeetPolicy(reason: "\(Self.reasonPrefix)\(PrintableText.escaped(hostname)) is not an ASCII host name (give its A-label form)")
        }
        let dnsNames = sans?.compactMap { name -> String? in
            if case .dnsName(let dns) = name { return dns }
            return nil
        } ?? []
        if dnsNames.contains(where: { DNSNameRules.matches(presented: $0, host: host) }) { return .meetsPolicy }
        if dnsNames.isEmpty, allowCommonNameFallback,
            !chain.contains(where: { (try? $0.extensions.nameConstraints) != nil }),
            ChainNames.commonNames(of: leaf).contains(where: { DNSNameRules.matches(presented: $0, host: host) })
        {
            return .meetsPolicy
        }
        return .failsToMeetPolicy(reason: "\(Self.reasonPrefix)none of its names is \(host)")
    }
}

/// Reading names out of certificates, for the policies.
enum ChainNames {
    /// Whether the certificate's alternative names include a DNS name.
    static func hasDNSName(_ certificate: Certificate) -> Bool {
        guard let sans = try? certificate.extensions.subjectAlternativeNames else { return false }
        return sans.contains { if case .dnsName = $0 { return true } else { return false } }
    }

    /// The DNS names among the certificate's alternative names.
    static func dnsNames(of certificate: Certificate) -> [String] {
        guard let sans = try? certificate.extensions.subjectAlternativeNames else { return [] }
        return sans.compactMap { if case .dnsName(let name) = $0 { return name } else { return nil } }
    }

    /// The values of the certificate's subject CNs, in order, in any string type that can be
    /// read (``text(of:)``).
    static func commonNames(of certificate: Certificate) -> [String] {
        certificate.subject.flatMap { $0 }.filter { $0.type == .RDNAttributeType.commonName }.compactMap { text(of: $0.value) }
    }

    /// An attribute's text: UTF8String, PrintableString, IA5String (swift-certificates reads
    /// them), and BMPString (UTF-16), UniversalString (UTF-32), T61String and VisibleString
    /// (read byte for byte, as OpenSSL does); nil for anything else.
    static func text(of value: RelativeDistinguishedName.Attribute.Value) -> String? {
        if let text = String(value) { return text }
        var serializer = DER.Serializer()
        guard (try? serializer.serialize(ASN1Any(value))) != nil, let node = try? DER.parse(serializer.serializedBytes),
              node.identifier.tagClass == .universal, case .primitive(let content) = node.content
        else { return nil }
        let bytes = Array(content)
        switch node.identifier.tagNumber {
        case 30:  // BMPString
            guard bytes.count % 2 == 0 else { return nil }
            let units = stride(from: 0, to: bytes.count, by: 2).map { UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]) }
            return String(validating: units, as: UTF16.self)
        case 28:  // UniversalString
            guard bytes.count % 4 == 0 else { return nil }
            var text = ""
            for index in stride(from: 0, to: bytes.count, by: 4) {
                let value = bytes[index..<(index + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                guard let scalar = Unicode.Scalar(value) else { return nil }
                text.unicodeScalars.append(scalar)
            }
            return text
        case 20, 26:  // T61String, VisibleString
            return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
        default:
            return nil
        }
    }

    /// The DNS name of a name-constraint subtree, nil for another kind of name.
    static func dnsBase(_ name: GeneralName) -> String? {
        if case .dnsName(let base) = name { return base }
        return nil
    }
}
