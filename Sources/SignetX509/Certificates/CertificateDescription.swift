import Crypto
import SignetCore
import SwiftASN1
import X509

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What `cert show` prints about a certificate or CSR: as ordered `name: value` lines, or as
/// a JSON object with the same facts.
public struct CertificateDescription: Sendable {
    /// The facts in display order; values are strings, booleans, integers or string lists.
    public let fields: [(name: String, value: Value)]

    /// One fact's value.
    public enum Value: Sendable, Equatable {
        case text(String)
        case flag(Bool)
        case number(Int)
        case list([String])
    }

    /// The facts of a certificate.
    public init(_ certificate: Certificate) {
        var fields: [(String, Value)] = [("type", .text("certificate"))]
        fields.append(("subject", .text(certificate.subject.description)))
        fields.append(("issuer", .text(certificate.issuer.description)))
        fields.append(("serial", .text(Hex.encode(Array(certificate.serialNumber.bytes)))))
        fields.append(("notBefore", .text(Self.iso8601(certificate.notValidBefore))))
        fields.append(("notAfter", .text(Self.iso8601(certificate.notValidAfter))))
        fields += Self.keyFields(certificate.publicKey)
        fields.append(("signatureAlgorithm", .text(certificate.signatureAlgorithm.description)))
        let extensions = certificate.extensions
        let constraints = try? extensions.basicConstraints
        if case .isCertificateAuthority(let length) = constraints {
            fields.append(("ca", .flag(true)))
            if let length { fields.append(("pathLength", .number(length))) }
        } else {
            fields.append(("ca", .flag(false)))
        }
        fields.append(("selfSigned", .flag(certificate.issuer == certificate.subject
            && certificate.publicKey.isValidSignature(certificate.signature, for: certificate))))
        if let sans = try? extensions.subjectAlternativeNames { fields.append(("alternativeNames", .list(sans.map(Self.describe)))) }
        if let usage = try? extensions.keyUsage { fields.append(("keyUsage", .list(Self.describe(usage)))) }
        if let usage = try? extensions.extendedKeyUsage { fields.append(("extendedKeyUsage", .list(usage.map { "\($0)" }))) }
        if let ski = try? extensions.subjectKeyIdentifier { fields.append(("subjectKeyIdentifier", .text(Hex.encode(Array(ski.keyIdentifier))))) }
        if let aki = try? extensions.authorityKeyIdentifier, let id = aki.keyIdentifier {
            fields.append(("authorityKeyIdentifier", .text(Hex.encode(Array(id)))))
        }
        if let der = try? X509Files.derBytes(of: certificate) {
            fields.append(("sha256", .text(Hex.encode(Array(SHA256.hash(data: der))))))
        }
        self.fields = fields
    }

    /// The facts of a CSR, including whether its signature verifies.
    public init(_ csr: CertificateSigningRequest) {
        var fields: [(String, Value)] = [("type", .text("csr"))]
        fields.append(("subject", .text(csr.subject.description)))
        fields += Self.keyFields(csr.publicKey)
        fields.append(("signatureAlgorithm", .text(csr.signatureAlgorithm.description)))
        fields.append(("signatureValid", .flag(csr.publicKey.isValidSignature(csr.signature, for: csr))))
        if let names = try? CertificateFactory.requestedAlternativeNames(csr, source: "request"), !names.isEmpty {
            fields.append(("alternativeNames", .list(names.map(Self.describe))))
        }
        self.fields = fields
    }

    /// `name: value` lines, every value escaped (`PrintableText.terminalSafe`): a subject or a
    /// name from the certificate cannot drive a terminal or forge a line.
    public var text: String {
        fields.map { field -> String in
            switch field.value {
            case .text(let text): return "\(field.name): \(PrintableText.terminalSafe(text))\n"
            case .flag(let flag): return "\(field.name): \(flag ? "yes" : "no")\n"
            case .number(let number): return "\(field.name): \(number)\n"
            case .list(let items): return "\(field.name): \(PrintableText.terminalSafe(items.joined(separator: ", ")))\n"
            }
        }.joined()
    }

    /// The facts as one JSON object (keys in display order), with a trailing newline.
    public var json: String {
        "{" + fields.map { field -> String in
            let value: String
            switch field.value {
            case .text(let text): value = Self.jsonString(text)
            case .flag(let flag): value = flag ? "true" : "false"
            case .number(let number): value = String(number)
            case .list(let items): value = "[" + items.map(Self.jsonString).joined(separator: ",") + "]"
            }
            return Self.jsonString(field.name) + ":" + value
        }.joined(separator: ",") + "}\n"
    }

    static func keyFields(_ key: Certificate.PublicKey) -> [(String, Value)] {
        let spki = key.spkiDER
        let kind = (try? KeyDecoder.decode(spki, source: "certificate", policy: KeyPolicy(allowWeakRSA: true)))
            .flatMap { decoded -> String? in
                if case .publicKey(let key) = decoded { return key.kind.description }
                return nil
            } ?? "unknown"
        return [("publicKey", .text(kind)), ("pin", .text(KeyFingerprint(spkiDER: spki).description))]
    }

    static func describe(_ name: GeneralName) -> String {
        switch name {
        case .dnsName(let dns): return "DNS:\(dns)"
        case .ipAddress(let bytes): return "IP:\(ipString(Array(bytes.bytes)))"
        case .rfc822Name(let mail): return "email:\(mail)"
        case .uniformResourceIdentifier(let uri): return "URI:\(uri)"
        default: return "\(name)"
        }
    }

    static func describe(_ usage: KeyUsage) -> [String] {
        var names: [String] = []
        if usage.digitalSignature { names.append("digitalSignature") }
        if usage.nonRepudiation { names.append("nonRepudiation") }
        if usage.keyEncipherment { names.append("keyEncipherment") }
        if usage.dataEncipherment { names.append("dataEncipherment") }
        if usage.keyAgreement { names.append("keyAgreement") }
        if usage.keyCertSign { names.append("keyCertSign") }
        if usage.cRLSign { names.append("cRLSign") }
        return names
    }

    /// An IP address's text form.
    static func ipString(_ bytes: [UInt8]) -> String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        if bytes.count == 16 {
            return stride(from: 0, to: 16, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
                .joined(separator: ":")
        }
        return Hex.encode(bytes)
    }

    static func iso8601(_ date: Date) -> String { date.formatted(.iso8601) }

    /// A JSON string whose control, bidirectional and separator characters are all `\\u`
    /// escapes (JSON itself lets DEL, C1 and the rest through raw), so it is safe on a terminal.
    static func jsonString(_ text: String) -> String {
        var out: [UInt8] = []
        StrictJSON.appendString(text, to: &out, lineFeedAsN: true)
        var result = ""
        for scalar in String(decoding: out, as: UTF8.self).unicodeScalars {
            if PrintableText.mustEscape(scalar) {
                result += String(format: "\\u%04x", scalar.value)
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
