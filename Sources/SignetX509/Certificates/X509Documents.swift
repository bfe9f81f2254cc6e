import SignetCore
import SwiftASN1
import X509

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How certificates and CSRs are written: PEM text (the default) or binary DER.
public enum X509Encoding: String, CaseIterable, Sendable {
    /// `-----BEGIN CERTIFICATE-----` / `-----BEGIN CERTIFICATE REQUEST-----` text.
    case pem
    /// Binary DER, as `openssl x509 -outform der` writes.
    case der
}

/// What a certificate-related file holds, detected from its content.
public enum X509Document: Sendable {
    /// One or more certificates (a chain or a bundle of roots), in file order.
    case certificates([Certificate])
    /// A PKCS#10 certificate signing request.
    case csr(CertificateSigningRequest)
}

/// Reads and writes certificates and CSRs in PEM or DER, detected on input.
public enum X509Files {
    /// The largest file read: a bundle of every public root is about 250 KiB.
    public static let maximumSize = 8 << 20
    /// The most certificates one file may hold.
    public static let maximumCertificates = 1000

    /// Reads the file at `path` (`-` for standard input).
    public static func read(path: String) throws -> X509Document {
        try decode(readBytes(path: path), source: displayName(path))
    }

    /// The certificates in the file at `path`; a CSR there is refused by name.
    public static func readCertificates(path: String) throws -> [Certificate] {
        switch try read(path: path) {
        case .certificates(let certificates): return certificates
        case .csr: throw X509Error.malformed(source: displayName(path), detail: "a certificate signing request, not a certificate")
        }
    }

    /// The CSR in the file at `path`.
    public static func readCSR(path: String) throws -> CertificateSigningRequest {
        switch try read(path: path) {
        case .csr(let csr): return csr
        case .certificates: throw X509Error.malformed(source: displayName(path), detail: "a certificate, not a certificate signing request")
        }
    }

    /// Decodes PEM (any number of `CERTIFICATE` blocks, or one `CERTIFICATE REQUEST`) or DER
    /// (one certificate or one CSR).
    public static func decode(_ bytes: [UInt8], source: String) throws -> X509Document {
        guard !bytes.isEmpty else { throw X509Error.malformed(source: source, detail: "the file is empty") }
        guard bytes.count <= maximumSize else {
            throw X509Error.malformed(source: source, detail: "larger than \(maximumSize >> 20) MiB")
        }
        if bytes.first == 0x30 { return try decodeDER(bytes, source: source) }
        let text = String(decoding: bytes, as: UTF8.self)
        guard PEM.looksLikePEM(text) else {
            throw X509Error.malformed(source: source, detail: "neither PEM nor DER (no -----BEGIN line, and not a DER SEQUENCE)")
        }
        let blocks: [PEMBlock]
        do { blocks = try PEM.decode(text, source: source) } catch { throw X509Error.malformed(source: source, detail: pemDetail(error)) }
        var certificates: [Certificate] = []
        for block in blocks {
            switch block.label {
            case "CERTIFICATE", "TRUSTED CERTIFICATE", "X509 CERTIFICATE":
                guard certificates.count < maximumCertificates else {
                    throw X509Error.malformed(source: source, detail: "more than \(maximumCertificates) certificates")
                }
                certificates.append(try certificate(block.der, source: "\(source) (line \(block.line))"))
            case "CERTIFICATE REQUEST", "NEW CERTIFICATE REQUEST":
                guard blocks.count == 1 else {
                    throw X509Error.malformed(source: source, detail: "a certificate request must be alone in its file")
                }
                return .csr(try csr(block.der, source: "\(source) (line \(block.line))"))
            default:
                // Keys and parameters may sit beside certificates (a combined PEM); skip them.
                continue
            }
        }
        guard !certificates.isEmpty else {
            throw X509Error.malformed(source: source, detail: "no CERTIFICATE or CERTIFICATE REQUEST block")
        }
        return .certificates(certificates)
    }

    /// One DER certificate.
    public static func certificate(_ der: [UInt8], source: String) throws -> Certificate {
        do {
            return try Certificate(derEncoded: der)
        } catch {
            throw X509Error.malformed(source: source, detail: "not an X.509 certificate (\(asn1Detail(error)))")
        }
    }

    /// One DER CSR.
    public static func csr(_ der: [UInt8], source: String) throws -> CertificateSigningRequest {
        do {
            return try CertificateSigningRequest(derEncoded: der)
        } catch {
            throw X509Error.malformed(source: source, detail: "not a PKCS#10 certificate signing request (\(asn1Detail(error)))")
        }
    }

    private static func decodeDER(_ bytes: [UInt8], source: String) throws -> X509Document {
        // A CSR's first element holds an INTEGER version first; a certificate's holds [0] or an
        // INTEGER serial then an AlgorithmIdentifier. Try the certificate first, as openssl does.
        if let certificate = try? Certificate(derEncoded: bytes) { return .certificates([certificate]) }
        if let request = try? CertificateSigningRequest(derEncoded: bytes) { return .csr(request) }
        _ = try certificate(bytes, source: source)
        throw X509Error.malformed(source: source, detail: "not a certificate or certificate request")
    }

    /// The certificate encoded as asked.
    public static func encode(_ certificate: Certificate, as encoding: X509Encoding) throws -> [UInt8] {
        let der = try derBytes(of: certificate)
        switch encoding {
        case .der: return der
        case .pem: return Array(PEM.encode(label: "CERTIFICATE", der: der).utf8)
        }
    }

    /// Several certificates as concatenated PEM blocks (DER holds only one).
    public static func encodePEM(_ certificates: [Certificate]) throws -> [UInt8] {
        var out: [UInt8] = []
        for certificate in certificates { out += try encode(certificate, as: .pem) }
        return out
    }

    /// The CSR encoded as asked.
    public static func encode(_ csr: CertificateSigningRequest, as encoding: X509Encoding) throws -> [UInt8] {
        let der: [UInt8]
        do {
            var serializer = DER.Serializer()
            try serializer.serialize(csr)
            der = serializer.serializedBytes
        } catch {
            throw X509Error.malformed(source: "certificate request", detail: "cannot be encoded: \(error)")
        }
        switch encoding {
        case .der: return der
        case .pem: return Array(PEM.encode(label: "CERTIFICATE REQUEST", der: der).utf8)
        }
    }

    /// The DER of a certificate.
    public static func derBytes(of certificate: Certificate) throws -> [UInt8] {
        do {
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            return serializer.serializedBytes
        } catch {
            throw X509Error.malformed(source: "certificate", detail: "cannot be encoded: \(error)")
        }
    }

    /// The name of an input in messages.
    public static func displayName(_ path: String) -> String { path == "-" ? "standard input" : path }

    static func readBytes(path: String, limit: Int = maximumSize) throws -> [UInt8] {
        do {
            return try FileInput.readAll(path: path, limit: limit)
        } catch {
            throw X509Error(reading: error, source: displayName(path))
        }
    }

    static func pemDetail(_ error: any Error) -> String {
        if case SignetCoreError.malformed(_, let detail) = error { return detail }
        return String(describing: error)
    }

    static func asn1Detail(_ error: any Error) -> String {
        if let error = error as? ASN1Error { return "\(error.code)" }
        return "\(error)"
    }
}

extension Certificate.PublicKey {
    /// The DER `SubjectPublicKeyInfo` of this key (swift-certificates'
    /// `subjectPublicKeyInfoBytes` is only the key bits inside it).
    public var spkiDER: [UInt8] {
        var serializer = DER.Serializer()
        // Serialising a key swift-certificates parsed or made cannot fail.
        try? serializer.serialize(self)
        return serializer.serializedBytes
    }

    /// The SPKI fingerprint of this key: the value of its pin, `sha256/<base64>`.
    public var fingerprint: KeyFingerprint { KeyFingerprint(spkiDER: spkiDER) }
}
