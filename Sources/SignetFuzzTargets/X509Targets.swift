import SignetCore
import SignetX509
import X509

/// Certificates, chains and CSRs (PEM or DER), pin set files and PKCS#12 files.
enum X509Targets {
    /// The passphrase of the PKCS#12 seeds.
    static let passphrase = "signet-test"

    static let all: TargetList = [
        ("x509-document", { X509Targets.document($0) }),
        ("pin-set", { X509Targets.pinSet($0) }),
        ("pkcs12", { X509Targets.pkcs12($0) }),
    ]

    /// `X509Files.decode`. Invariant: every certificate and CSR re-encodes to DER that decodes
    /// to an equal value, and a DER input re-encodes to exactly its bytes.
    static func document(_ bytes: [UInt8]) {
        guard let document = try? X509Files.decode(bytes, source: "fuzz input") else { return }
        switch document {
        case .certificates(let certificates):
            for certificate in certificates {
                let der = try? X509Files.encode(certificate, as: .der)
                Fuzz.require(der != nil, "x509-document", "a parsed certificate does not re-encode")
                guard let der else { continue }
                Fuzz.require((try? X509Files.certificate(der, source: "re-encoded")) == certificate, "x509-document", "re-encoded certificate differs")
                if bytes.first == 0x30 { Fuzz.require(der == bytes, "x509-document", "DER input does not re-encode to itself") }
                _ = CertificateDescription(certificate).json
            }
        case .csr(let csr):
            let der = try? X509Files.encode(csr, as: .der)
            Fuzz.require(der.flatMap { try? X509Files.csr($0, source: "re-encoded") } == csr, "x509-document", "re-encoded CSR differs")
            _ = CertificateDescription(csr).json
        }
    }

    /// `PinSet.decode`. Invariant: what it writes decodes to the same pin set.
    static func pinSet(_ bytes: [UInt8]) {
        guard let set = try? PinSet.decode(bytes, source: "fuzz input") else { return }
        Fuzz.require((try? PinSet.decode(set.encoded(), source: "re-encoded")) == set, "pin-set", "encoded() does not decode to the same pin set")
    }

    /// `PKCS12.decode` with the seeds' passphrase (a wrong one exercises the MAC refusal).
    /// Invariant: whatever decodes holds certificates that re-encode.
    static func pkcs12(_ bytes: [UInt8]) {
        guard let contents = try? PKCS12.decode(bytes, passphrase: SecretBytes(Array(passphrase.utf8)), source: "fuzz input") else { return }
        for certificate in contents.certificates {
            Fuzz.require((try? X509Files.encode(certificate, as: .der)) != nil, "pkcs12", "a certificate from the file does not re-encode")
        }
    }
}
