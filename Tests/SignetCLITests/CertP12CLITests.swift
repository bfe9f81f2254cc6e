import Foundation
import SignetTestSupport
import Testing

/// `signet cert p12` against `openssl pkcs12` both ways, and malformed certificate input.
@Suite("signet cert p12: against openssl pkcs12; malformed input")
struct CertP12CLITests {
    static let passphrase = "correct horse battery staple"

    /// A CA (ca.key, ca.pem), a leaf it issued (leaf.key, leaf.csr, leaf.pem) and pw.txt.
    static func setUp(_ box: Sandbox, type: String) throws {
        try box.certCA("ca")
        try box.certIssued("leaf", by: "ca", type: type, subject: "CN=x.test,O=Signet Tests", san: "DNS:x.test")
        try box.write("pw.txt", passphrase + "\n")
    }

    /// openssl pkcs12 -export of leaf.key, leaf.pem and ca.pem into `output`, with pw.txt.
    static func opensslExport(_ box: Sandbox, to output: String, legacy: Bool = false) throws {
        try box.opensslOK(
            ["pkcs12", "-export", "-inkey", "leaf.key", "-in", "leaf.pem", "-certfile", "ca.pem", "-name", "friendly", "-out", output,
             "-passout", "file:pw.txt"] + (legacy ? ["-legacy"] : []))
    }

    @Test("cert p12 export: openssl reads PBES2, AES-256-CBC and an HMAC-SHA256 MAC, and gets the same key and certificates",
          arguments: KeyTypes.all)
    func export(type: String) throws {
        let box = try Sandbox()
        try Self.setUp(box, type: type)
        let exported = try box.signet(
            "cert", "p12", "export", "--key", "leaf.key", "--cert", "leaf.pem", "--chain", "ca.pem", "--name", "friendly", "-o", "out.p12",
            "--new-passphrase-file", "pw.txt")
        #expect(exported.status == 0, "\(exported)")
        #expect(try box.mode("out.p12") == 0o600)

        // openssl pkcs12 -info reports the structure on standard error.
        let info = try box.tool("openssl", "pkcs12", "-in", "out.p12", "-info", "-noout", "-passin", "file:pw.txt")
        #expect(info.status == 0, "\(info)")
        let report = info.out + info.stderr
        for fragment in ["PBES2", "AES-256-CBC", "MAC: sha256"] {
            #expect(report.contains(fragment), "\(type): no \"\(fragment)\" in \(report)")
        }
        #expect(!report.contains("TripleDES") && !report.contains("RC2"), "\(report)")

        let dumped = try box.opensslOK(["pkcs12", "-in", "out.p12", "-nodes", "-passin", "file:pw.txt"])
        #expect(dumped.out.contains("friendlyName: friendly"), "\(dumped)")
        let certificates = CertCLI.pemCertificates(dumped.out)
        let leafDER = try box.certDER("leaf.pem")
        let caDER = try box.certDER("ca.pem")
        #expect(certificates.count == 2)
        #expect(Set(certificates) == Set([leafDER, caDER]))
        try box.opensslOK(["pkcs12", "-in", "out.p12", "-nodes", "-nocerts", "-passin", "file:pw.txt", "-out", "key2.pem"])
        let original = try box.publicKeyPEM("leaf.key")
        let extracted = try box.publicKeyPEM("key2.pem")
        #expect(extracted == original)
    }

    @Test("cert p12 import reads openssl pkcs12 -export output, the default form and -legacy", arguments: [false, true], ["rsa2048", "p256", "ed25519"])
    func importFromOpenSSL(legacy: Bool, type: String) throws {
        let box = try Sandbox()
        try Self.setUp(box, type: type)
        try Self.opensslExport(box, to: "in.p12", legacy: legacy)
        let imported = try box.signet(
            "cert", "p12", "import", "in.p12", "--passphrase-file", "pw.txt", "--key-out", "k2.pem", "--cert-out", "c2.pem",
            "--chain-out", "chain.pem")
        #expect(imported.status == 0, "\(imported)")
        #expect(try box.mode("k2.pem") == 0o600)
        #expect(try box.readText("k2.pem").hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let original = try box.publicKeyPEM("leaf.key")
        let extracted = try box.publicKeyPEM("k2.pem")
        #expect(extracted == original)
        let leafDER = try box.certDER("leaf.pem")
        let importedLeaf = try box.certDER("c2.pem")
        #expect(importedLeaf == leafDER)
        let caDER = try box.certDER("ca.pem")
        let chain = CertCLI.pemCertificates(try box.readText("chain.pem"))
        #expect(chain == [caDER])
    }

    @Test("cert p12 round trip: what signet exports, signet imports")
    func roundTrip() throws {
        let box = try Sandbox()
        try Self.setUp(box, type: "p384")
        try box.certOK([
            "cert", "p12", "export", "--key", "leaf.key", "--cert", "leaf.pem", "--chain", "ca.pem", "-o", "out.p12", "--new-passphrase-file", "pw.txt",
        ])
        try box.certOK(["cert", "p12", "import", "out.p12", "--passphrase-file", "pw.txt", "--key-out", "k2.pem", "--cert-out", "c2.pem", "--chain-out", "chain.pem"])
        #expect(try box.read("c2.pem") == box.read("leaf.pem"))
        #expect(try box.read("chain.pem") == box.read("ca.pem"))
        let original = try box.publicKeyPEM("leaf.key")
        let extracted = try box.publicKeyPEM("k2.pem")
        #expect(extracted == original)
    }

    @Test("cert p12 passphrases: SIGNET_PASSPHRASE opens a .p12 but never becomes a new one; a wrong one writes nothing")
    func passphrases() throws {
        let box = try Sandbox()
        try Self.setUp(box, type: "p256")
        try Self.opensslExport(box, to: "in.p12")

        let fromEnvironment = try box.signet(
            "cert", "p12", "import", "in.p12", "--key-out", "k1.pem", "--cert-out", "c1.pem", environment: ["SIGNET_PASSPHRASE": Self.passphrase])
        #expect(fromEnvironment.status == 0, "\(fromEnvironment)")

        try box.write("wrong.txt", "not the passphrase\n")
        let wrong = try box.signet(
            "cert", "p12", "import", "in.p12", "--passphrase-file", "wrong.txt", "--key-out", "k2.pem", "--cert-out", "c2.pem",
            "--chain-out", "chain2.pem")
        CertCLI.expectRefused(wrong, status: 1, mentioning: ["in.p12", "wrong passphrase"])
        #expect(!box.exists("k2.pem") && !box.exists("c2.pem") && !box.exists("chain2.pem"))
        let wrongEnvironment = try box.signet(
            "cert", "p12", "import", "in.p12", "--key-out", "k2.pem", "--cert-out", "c2.pem", environment: ["SIGNET_PASSPHRASE": "nope"])
        CertCLI.expectRefused(wrongEnvironment, status: 1, mentioning: ["in.p12", "wrong passphrase"])
        #expect(!box.exists("k2.pem") && !box.exists("c2.pem"))

        // The new passphrase of an export comes from --new-passphrase-file or a terminal, not the environment.
        let noNewPassphrase = try box.signet(
            "cert", "p12", "export", "--key", "leaf.key", "--cert", "leaf.pem", "-o", "out.p12", environment: ["SIGNET_PASSPHRASE": Self.passphrase])
        CertCLI.expectRefused(noNewPassphrase, status: 4, mentioning: ["--new-passphrase-file"])
        #expect(!box.exists("out.p12"))

        // Existing outputs are kept without --force, and nothing else is written.
        try box.write("out.p12", "keep me\n")
        let exportExists = try box.signet(
            "cert", "p12", "export", "--key", "leaf.key", "--cert", "leaf.pem", "-o", "out.p12", "--new-passphrase-file", "pw.txt")
        CertCLI.expectRefused(exportExists, status: 2, mentioning: ["out.p12", "already exists"])
        #expect(try box.readText("out.p12") == "keep me\n")
        try box.write("k3.pem", "keep me\n")
        let importExists = try box.signet(
            "cert", "p12", "import", "in.p12", "--passphrase-file", "pw.txt", "--key-out", "k3.pem", "--cert-out", "c3.pem")
        CertCLI.expectRefused(importExists, status: 2, mentioning: ["k3.pem", "already exists"])
        #expect(try box.readText("k3.pem") == "keep me\n")
        #expect(!box.exists("c3.pem"))
    }

    @Test("a truncated .p12, or a certificate given as one, is malformed input (exit 3) and writes nothing")
    func truncatedP12() throws {
        let box = try Sandbox()
        try Self.setUp(box, type: "p256")
        try Self.opensslExport(box, to: "in.p12")
        let whole = try box.read("in.p12")
        try box.write("cut.p12", whole.prefix(whole.count / 2))
        let cut = try box.signet("cert", "p12", "import", "cut.p12", "--passphrase-file", "pw.txt", "--key-out", "k2.pem", "--cert-out", "c2.pem")
        CertCLI.expectRefused(cut, status: 3, mentioning: ["cut.p12"])
        #expect(!box.exists("k2.pem") && !box.exists("c2.pem"))

        let certificate = try box.signet("cert", "p12", "import", "leaf.pem", "--passphrase-file", "pw.txt", "--key-out", "k2.pem", "--cert-out", "c2.pem")
        CertCLI.expectRefused(certificate, status: 3, mentioning: ["leaf.pem"])
        #expect(!box.exists("k2.pem") && !box.exists("c2.pem"))
    }

    @Test("garbage, an empty file, a cut PEM and a certificate given as a CSR are malformed input (exit 3), naming the file")
    func malformedCertificates() throws {
        let box = try Sandbox()
        try box.write("garbage.pem", "this is not a certificate\n")
        let garbage = try box.signet("cert", "show", "garbage.pem")
        CertCLI.expectRefused(garbage, status: 3, mentioning: ["garbage.pem"])
        #expect(garbage.out.isEmpty)

        try box.write("empty.pem", "")
        let empty = try box.signet("cert", "show", "empty.pem")
        CertCLI.expectRefused(empty, status: 3, mentioning: ["empty.pem", "empty"])
        #expect(empty.out.isEmpty)

        try box.write("der.bin", Data([0x30, 0x03, 0x02, 0x01, 0x05]))
        CertCLI.expectRefused(try box.signet("cert", "show", "der.bin"), status: 3, mentioning: ["der.bin"])

        try box.certCA("ca")
        let pem = try box.readText("ca.pem")
        try box.write("cut.pem", String(pem.prefix(pem.count / 2)))
        CertCLI.expectRefused(try box.signet("cert", "show", "cut.pem"), status: 3, mentioning: ["cut.pem"])
        CertCLI.expectRefused(try box.signet("cert", "verify", "garbage.pem", "--roots", "ca.pem"), status: 3, mentioning: ["garbage.pem"])
        CertCLI.expectRefused(try box.signet("cert", "verify", "ca.pem", "--roots", "empty.pem"), status: 3, mentioning: ["empty.pem"])

        let notCSR = try box.signet("cert", "issue", "--ca-cert", "ca.pem", "--ca-key", "ca.key", "ca.pem", "-o", "leaf.pem")
        CertCLI.expectRefused(notCSR, status: 3, mentioning: ["ca.pem", "not a certificate signing request"])
        #expect(!box.exists("leaf.pem"))
    }

    @Test("cert p12 import with --allow-weak never writes another certificate (the CA's) as the weak key's own")
    func weakLeafIsNotReplacedByTheCA() throws {
        let box = try Sandbox()
        try box.must("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-subj", "/CN=CA", "-days", "30", "-out", "ca.pem")
        try box.must("openssl", "req", "-newkey", "rsa:1024", "-nodes", "-keyout", "leaf.key", "-subj", "/CN=leaf", "-out", "leaf.csr")
        try box.must(
            "openssl", "x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "10", "-out", "leaf.pem")
        try box.must(
            "openssl", "pkcs12", "-export", "-inkey", "leaf.key", "-in", "leaf.pem", "-certfile", "ca.pem", "-passout", "pass:secret",
            "-out", "weak.p12")
        try box.write("pw", "secret\n")
        let result = try box.signet(
            "cert", "p12", "import", "weak.p12", "--allow-weak", "--passphrase-file", "pw", "--key-out", "k.pem", "--cert-out", "c.pem")
        #expect(result.status == 3, "\(result)")
        #expect(result.stderr.contains("the key's certificate has an RSA key under 2048 bits"), "\(result)")
        #expect(!box.exists("k.pem") && !box.exists("c.pem"))
    }
}
