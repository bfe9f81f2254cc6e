import Foundation
import SignetTestSupport
import Testing

/// `signet cert` against openssl, both ways: what signet writes openssl reads and verifies,
/// and what openssl writes signet reads, issues and verifies.
@Suite("signet cert: certificates and CSRs against openssl")
struct CertCLITests {
    static let signatureAlgorithms = [
        "rsa2048": "sha256WithRSAEncryption", "p256": "ecdsa-with-SHA256", "p384": "ecdsa-with-SHA384", "ed25519": "ED25519",
    ]

    @Test("self-signed: openssl reads the subject, SANs, CA:TRUE, validity and pin, and verifies the CA; DER too", arguments: KeyTypes.all)
    func selfSigned(type: String) throws {
        let box = try Sandbox()
        try box.certKey("k.pem", type: type)
        let made = try box.signet(
            "cert", "self-signed", "--key", "k.pem", "--subject", "CN=api.test,O=Signet Tests", "--san", "DNS:api.test,IP:127.0.0.1",
            "--days", "30", "--ca", "-o", "c.pem")
        #expect(made.status == 0, "\(made)")
        #expect(made.out.isEmpty)
        let text = try box.opensslOK(["x509", "-in", "c.pem", "-noout", "-text", "-nameopt", "RFC2253"]).out
        for fragment in [
            "Subject: CN=api.test,O=Signet Tests", "Issuer: CN=api.test,O=Signet Tests", "DNS:api.test, IP Address:127.0.0.1", "CA:TRUE",
            "Certificate Sign", "Signature Algorithm: \(Self.signatureAlgorithms[type] ?? "?")",
        ] {
            #expect(text.contains(fragment), "\(type): no \"\(fragment)\" in \(text)")
        }
        let verified = try box.opensslOK(["verify", "-CAfile", "c.pem", "c.pem"])
        #expect(verified.out.contains("c.pem: OK"))
        // --days 30: still valid in 29 days, no longer in 31.
        #expect(try box.tool("openssl", "x509", "-in", "c.pem", "-noout", "-checkend", String(29 * 86_400)).status == 0)
        #expect(try box.tool("openssl", "x509", "-in", "c.pem", "-noout", "-checkend", String(31 * 86_400)).status == 1)
        let pin = try #require(CertCLI.printedPin(made.stderr), "no pin on stderr: \(made)")
        let recipePin = try box.opensslPin(certificate: "c.pem")
        #expect(pin == recipePin)

        // A leaf (no --ca), written as DER.
        let der = try box.signet(
            "cert", "self-signed", "--key", "k.pem", "--subject", "CN=leaf.test", "--san", "DNS:leaf.test", "--days", "1",
            "--format", "der", "-o", "c.der")
        #expect(der.status == 0, "\(der)")
        #expect(try box.read("c.der").first == 0x30)
        let leaf = try box.opensslOK(["x509", "-inform", "DER", "-in", "c.der", "-noout", "-text", "-nameopt", "RFC2253"]).out
        for fragment in ["Subject: CN=leaf.test", "DNS:leaf.test", "CA:FALSE", "TLS Web Server Authentication"] {
            #expect(leaf.contains(fragment), "\(type): no \"\(fragment)\" in \(leaf)")
        }
        #expect(CertCLI.printedPin(der.stderr) == pin, "the same key has the same pin")
    }

    @Test("cert csr passes openssl req -verify; cert issue's server, client and CA certificates pass openssl verify", arguments: KeyTypes.all)
    func csrAndIssue(type: String) throws {
        let box = try Sandbox()
        try box.certCA("ca", type: type)
        try box.certKey("leaf.key", type: type)
        let csr = try box.signet(
            "cert", "csr", "--key", "leaf.key", "--subject", "CN=x.test,O=Signet Tests", "--san", "DNS:x.test,IP:127.0.0.1", "-o", "req.pem")
        #expect(csr.status == 0, "\(csr)")
        #expect(try box.readText("req.pem").hasPrefix("-----BEGIN CERTIFICATE REQUEST-----"))
        let checked = try box.opensslOK(["req", "-verify", "-noout", "-in", "req.pem"])
        #expect(checked.stderr.contains("verify OK"), "\(checked)")
        let request = try box.opensslOK(["req", "-in", "req.pem", "-noout", "-text", "-nameopt", "RFC2253"]).out
        #expect(request.contains("Subject: CN=x.test,O=Signet Tests"), "\(request)")
        #expect(request.contains("DNS:x.test, IP Address:127.0.0.1"), "\(request)")
        let keyPin = try box.opensslPin(key: "leaf.key")

        for (flag, file, purpose, marker) in [
            ("--server", "server.pem", "sslserver", "TLS Web Server Authentication"),
            ("--client", "client.pem", "sslclient", "TLS Web Client Authentication"),
            ("--ca", "intermediate.pem", "any", "CA:TRUE"),
        ] {
            let issued = try box.signet("cert", "issue", "--ca-cert", "ca.pem", "--ca-key", "ca.key", "req.pem", flag, "--days", "2", "-o", file)
            #expect(issued.status == 0, "\(flag): \(issued)")
            let verified = try box.opensslOK(["verify", "-CAfile", "ca.pem", "-purpose", purpose, file])
            #expect(verified.out.contains("\(file): OK"), "\(verified)")
            let text = try box.opensslOK(["x509", "-in", file, "-noout", "-text", "-nameopt", "RFC2253"]).out
            for fragment in ["Subject: CN=x.test,O=Signet Tests", "Issuer: CN=Signet Test CA,O=Signet Tests", marker] {
                #expect(text.contains(fragment), "\(flag): no \"\(fragment)\" in \(text)")
            }
            let issuedPin = try box.opensslPin(certificate: file)
            #expect(issuedPin == keyPin)
        }
        // The profiles differ: a server certificate is not a client certificate.
        #expect(try box.tool("openssl", "verify", "-CAfile", "ca.pem", "-purpose", "sslclient", "server.pem").status != 0)
    }

    @Test("an openssl CSR issued by a Signet CA verifies with openssl and with cert verify --hostname")
    func opensslRequestSignetCA() throws {
        let box = try Sandbox()
        try box.certCA("ca")
        try box.opensslOK([
            "req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", "x.key", "-subj", "/CN=x.test", "-addext", "subjectAltName=DNS:x.test",
            "-out", "x.csr",
        ])
        let shown = try box.signet("cert", "show", "x.csr", "--json")
        let request = try #require(try JSONSerialization.jsonObject(with: shown.stdout) as? [String: Any], "\(shown)")
        #expect(request["signatureValid"] as? Bool == true)
        #expect(request["alternativeNames"] as? [String] == ["DNS:x.test"])

        let issued = try box.signet("cert", "issue", "--ca-cert", "ca.pem", "--ca-key", "ca.key", "x.csr", "-o", "x.pem")
        #expect(issued.status == 0, "\(issued)")
        #expect(try box.opensslOK(["verify", "-CAfile", "ca.pem", "-purpose", "sslserver", "x.pem"]).out.contains("x.pem: OK"))
        let certificatePin = try box.opensslPin(certificate: "x.pem")
        let keyPin = try box.opensslPin(key: "x.key")
        #expect(certificatePin == keyPin)

        let verified = try box.signet("cert", "verify", "x.pem", "--roots", "ca.pem", "--hostname", "x.test")
        #expect(verified.status == 0, "\(verified)")
        #expect(verified.out.hasPrefix("x.pem: OK\n"), "\(verified)")
        let wrong = try box.signet("cert", "verify", "x.pem", "--roots", "ca.pem", "--hostname", "wrong.test")
        CertCLI.expectRefused(wrong, status: 1, mentioning: ["wrong.test", "DNS:x.test"])
        #expect(wrong.out.isEmpty)
    }

    @Test("a Signet CSR issued by an openssl CA verifies with cert verify --hostname; cert show reads openssl's certificates")
    func signetRequestOpenSSLCA() throws {
        let box = try Sandbox()
        try box.opensslOK([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
            "-subj", "/CN=OpenSSL CA", "-days", "30", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        ])
        try box.certKey("leaf.key", type: "p384")
        try box.certOK(["cert", "csr", "--key", "leaf.key", "--subject", "CN=x.test", "--san", "DNS:x.test", "-o", "req.pem"])
        try box.opensslOK([
            "x509", "-req", "-in", "req.pem", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "leaf.pem", "-days", "2",
            "-copy_extensions", "copy",
        ])
        let verified = try box.signet("cert", "verify", "leaf.pem", "--roots", "ca.pem", "--hostname", "x.test")
        #expect(verified.status == 0, "\(verified)")
        #expect(verified.out == "leaf.pem: OK\n  0 CN=x.test\n  1 CN=OpenSSL CA\n", "\(verified)")
        let wrong = try box.signet("cert", "verify", "leaf.pem", "--roots", "ca.pem", "--hostname", "wrong.test")
        CertCLI.expectRefused(wrong, status: 1, mentioning: ["wrong.test"])

        let shown = try box.signet("cert", "show", "leaf.pem", "--json")
        let list = try #require(try JSONSerialization.jsonObject(with: shown.stdout) as? [[String: Any]], "\(shown)")
        try #require(list.count == 1)
        let leaf = list[0]
        #expect(leaf["type"] as? String == "certificate")
        #expect(leaf["subject"] as? String == "CN=x.test")
        #expect(leaf["issuer"] as? String == "CN=OpenSSL CA")
        #expect(leaf["ca"] as? Bool == false)
        #expect(leaf["alternativeNames"] as? [String] == ["DNS:x.test"])
        let leafPin = try box.opensslPin(certificate: "leaf.pem")
        #expect(leaf["pin"] as? String == leafPin)
        let serial = CertCLI.opensslValue(try box.opensslOK(["x509", "-in", "leaf.pem", "-noout", "-serial"]).out)
        #expect(CertCLI.normalizedHex(leaf["serial"] as? String) == CertCLI.normalizedHex(serial))
        let digest = CertCLI.opensslValue(try box.opensslOK(["x509", "-in", "leaf.pem", "-noout", "-fingerprint", "-sha256"]).out)
        #expect(CertCLI.normalizedHex(leaf["sha256"] as? String) == CertCLI.normalizedHex(digest))

        let ca = try box.signet("cert", "show", "ca.pem")
        #expect(ca.status == 0, "\(ca)")
        for line in ["type: certificate", "subject: CN=OpenSSL CA", "ca: yes", "selfSigned: yes"] {
            #expect(ca.out.contains(line + "\n"), "no \"\(line)\" in \(ca.out)")
        }
    }

    @Test("cert issue refuses an altered CSR, a CA key that is not the CA's, a server certificate without SANs, an existing output")
    func issueRefusals() throws {
        let box = try Sandbox()
        try box.certCA("ca")
        try box.certKey("leaf.key", type: "ed25519")
        try box.certOK(["cert", "csr", "--key", "leaf.key", "--subject", "CN=x.test", "--san", "DNS:x.test", "--format", "der", "-o", "req.der"])
        let request = Array(try box.read("req.der"))
        try box.write("bad.der", Data(TestBytes.flipped(request, at: request.count - 1)))
        // openssl 3.0 reports the failure but exits 0.
        let opensslCheck = try box.tool("openssl", "req", "-verify", "-noout", "-inform", "DER", "-in", "bad.der")
        #expect((opensslCheck.out + opensslCheck.stderr).contains("verify failure"), "\(opensslCheck)")
        let shownBad = try box.signet("cert", "show", "bad.der", "--json")
        let badObject = try #require(try JSONSerialization.jsonObject(with: shownBad.stdout) as? [String: Any], "\(shownBad)")
        #expect(badObject["signatureValid"] as? Bool == false)

        let altered = try box.signet("cert", "issue", "--ca-cert", "ca.pem", "--ca-key", "ca.key", "bad.der", "-o", "leaf.pem")
        CertCLI.expectRefused(altered, status: 1, mentioning: ["bad.der", "signature"])
        #expect(!box.exists("leaf.pem"))

        try box.certKey("other.key", type: "p256")
        let mismatch = try box.signet("cert", "issue", "--ca-cert", "ca.pem", "--ca-key", "other.key", "req.der", "-o", "leaf.pem")
        CertCLI.expectRefused(mismatch, status: 1, mentioning: ["CA key does not belong", "CN=Signet Test CA"])
        #expect(!box.exists("leaf.pem"))

        try box.certOK(["cert", "csr", "--key", "leaf.key", "--subject", "CN=no-names", "-o", "nosan.pem"])
        let noNames = try box.signet("cert", "issue", "--ca-cert", "ca.pem", "--ca-key", "ca.key", "nosan.pem", "--server", "-o", "leaf.pem")
        CertCLI.expectRefused(noNames, status: 2, mentioning: ["nosan.pem", "subject alternative names"])
        #expect(!box.exists("leaf.pem"))
        // A client certificate needs no SANs.
        #expect(try box.signet("cert", "issue", "--ca-cert", "ca.pem", "--ca-key", "ca.key", "nosan.pem", "--client", "-o", "client.pem").status == 0)

        try box.write("leaf.pem", "keep me\n")
        let exists = try box.signet("cert", "issue", "--ca-cert", "ca.pem", "--ca-key", "ca.key", "req.der", "-o", "leaf.pem")
        CertCLI.expectRefused(exists, status: 2, mentioning: ["leaf.pem", "already exists", "--force"])
        #expect(try box.readText("leaf.pem") == "keep me\n")
        let selfSigned = try box.signet("cert", "self-signed", "--key", "leaf.key", "--subject", "CN=x", "-o", "leaf.pem")
        CertCLI.expectRefused(selfSigned, status: 2, mentioning: ["leaf.pem", "already exists"])
        #expect(try box.readText("leaf.pem") == "keep me\n")
        let forced = try box.signet("cert", "issue", "--ca-cert", "ca.pem", "--ca-key", "ca.key", "req.der", "-o", "leaf.pem", "--force")
        #expect(forced.status == 0, "\(forced)")
        #expect(try box.readText("leaf.pem").hasPrefix("-----BEGIN CERTIFICATE-----"))
    }

    @Test("cert issue refuses an openssl CSR asking for DNS:*.co.uk. or DNS:*..co.uk: a wildcard over a public suffix, spelled to slip past the check")
    func issueRefusesDisguisedWildcards() throws {
        let box = try Sandbox()
        try box.certCA("ca")
        for (file, name) in [("dot.csr", "*.co.uk."), ("empty-label.csr", "*..co.uk")] {
            try box.must(
                "openssl", "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "leaf.key", "-subj", "/CN=bank",
                "-addext", "subjectAltName=DNS:\(name)", "-out", file)
            let issued = try box.signet("cert", "issue", "--ca-cert", "ca.pem", "--ca-key", "ca.key", file, "--server", "-o", "leaf.pem")
            CertCLI.expectRefused(issued, status: 2, mentioning: [file])
            #expect(!box.exists("leaf.pem"), "\(name) was issued")
        }
    }

    @Test("cert show: text and JSON for a certificate, each certificate of a chain, and a CSR")
    func show() throws {
        let box = try Sandbox()
        try box.certCA("root", subject: "CN=Signet Root,O=Signet Tests")
        try box.certIssued("inter", by: "root", type: "p384", subject: "CN=Signet Intermediate", san: nil, profile: "--ca", days: 20)
        try box.certIssued("leaf", by: "inter", type: "ed25519", subject: "CN=x.test,O=Signet Tests", san: "DNS:x.test,IP:127.0.0.1")
        let pin = try box.opensslPin(certificate: "leaf.pem")

        let text = try box.signet("cert", "show", "leaf.pem")
        #expect(text.status == 0, "\(text)")
        for line in [
            "type: certificate", "subject: CN=x.test,O=Signet Tests", "issuer: CN=Signet Intermediate", "ca: no", "selfSigned: no",
            "alternativeNames: DNS:x.test, IP:127.0.0.1", "pin: \(pin)",
        ] {
            #expect(text.out.contains(line + "\n"), "no \"\(line)\" in \(text.out)")
        }

        let json = try box.signet("cert", "show", "leaf.pem", "--json")
        let single = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [[String: Any]], "\(json)")
        #expect(single.count == 1)
        #expect(single.first?["pin"] as? String == pin)
        #expect(single.first?["alternativeNames"] as? [String] == ["DNS:x.test", "IP:127.0.0.1"])
        let serial = CertCLI.opensslValue(try box.opensslOK(["x509", "-in", "leaf.pem", "-noout", "-serial"]).out)
        #expect(CertCLI.normalizedHex(single.first?["serial"] as? String) == CertCLI.normalizedHex(serial))

        try box.write("chain.pem", try box.read("leaf.pem") + box.read("inter.pem"))
        let chainText = try box.signet("cert", "show", "chain.pem")
        #expect(chainText.status == 0, "\(chainText)")
        #expect(chainText.out.components(separatedBy: "type: certificate\n").count == 3, "\(chainText.out)")
        #expect(chainText.out.contains("subject: CN=Signet Intermediate\n"))
        let chainJSON = try box.signet("cert", "show", "chain.pem", "--json")
        let chain = try #require(try JSONSerialization.jsonObject(with: chainJSON.stdout) as? [[String: Any]], "\(chainJSON)")
        #expect(chain.map { $0["subject"] as? String } == ["CN=x.test,O=Signet Tests", "CN=Signet Intermediate"])
        #expect(chain.map { $0["ca"] as? Bool } == [false, true])

        let csr = try box.signet("cert", "show", "leaf.csr", "--json")
        let request = try #require(try JSONSerialization.jsonObject(with: csr.stdout) as? [String: Any], "\(csr)")
        #expect(request["type"] as? String == "csr")
        #expect(request["signatureValid"] as? Bool == true)
        #expect(request["subject"] as? String == "CN=x.test,O=Signet Tests")
        let csrPin = try box.opensslPin(csr: "leaf.csr")
        #expect(request["pin"] as? String == csrPin)
        let csrText = try box.signet("cert", "show", "leaf.csr")
        #expect(csrText.out.contains("type: csr\n") && csrText.out.contains("signatureValid: yes\n"), "\(csrText)")
    }

    @Test("cert verify: intermediates from --untrusted or the file; expired, untrusted and a malformed --at refused")
    func verify() throws {
        let box = try Sandbox()
        try box.certCA("root", subject: "CN=Signet Root,O=Signet Tests")
        try box.certIssued("inter", by: "root", subject: "CN=Signet Intermediate,O=Signet Tests", san: nil, profile: "--ca", days: 20)
        try box.certIssued("leaf", by: "inter", type: "rsa2048", subject: "CN=x.test", san: "DNS:x.test")
        try box.opensslOK(["verify", "-CAfile", "root.pem", "-untrusted", "inter.pem", "leaf.pem"])

        let untrusted = try box.signet("cert", "verify", "leaf.pem", "--roots", "root.pem", "--untrusted", "inter.pem", "--hostname", "x.test")
        #expect(untrusted.status == 0, "\(untrusted)")
        #expect(untrusted.out == "leaf.pem: OK\n  0 CN=x.test\n  1 CN=Signet Intermediate,O=Signet Tests\n  2 CN=Signet Root,O=Signet Tests\n")
        try box.write("chain.pem", try box.read("leaf.pem") + box.read("inter.pem"))
        let concatenated = try box.signet("cert", "verify", "chain.pem", "--roots", "root.pem")
        #expect(concatenated.status == 0, "\(concatenated)")
        #expect(concatenated.out.hasPrefix("chain.pem: OK\n"))

        let missing = try box.signet("cert", "verify", "leaf.pem", "--roots", "root.pem")
        CertCLI.expectRefused(missing, status: 1, mentioning: ["CN=x.test", "not trusted"])
        #expect(missing.out.isEmpty)

        let formatter = ISO8601DateFormatter()
        let tomorrow = formatter.string(from: Date().addingTimeInterval(86_400))
        #expect(try box.signet("cert", "verify", "chain.pem", "--roots", "root.pem", "--at", tomorrow).status == 0)
        let later = formatter.string(from: Date().addingTimeInterval(10 * 86_400))
        let expired = try box.signet("cert", "verify", "chain.pem", "--roots", "root.pem", "--at", later)
        CertCLI.expectRefused(expired, status: 1, mentioning: ["not trusted", "expired"])

        try box.certCA("stranger", subject: "CN=Stranger CA")
        let stranger = try box.signet("cert", "verify", "chain.pem", "--roots", "stranger.pem")
        CertCLI.expectRefused(stranger, status: 1, mentioning: ["CN=x.test", "not trusted", "no path to a trusted root"])
        let selfSigned = try box.signet("cert", "verify", "root.pem", "--roots", "stranger.pem")
        CertCLI.expectRefused(selfSigned, status: 1, mentioning: ["CN=Signet Root", "self-signed"])

        let malformed = try box.signet("cert", "verify", "chain.pem", "--roots", "root.pem", "--at", "next tuesday")
        CertCLI.expectRefused(malformed, status: 2, mentioning: ["--at", "next tuesday"])
        #expect(malformed.out.isEmpty)
    }

    @Test("cert pin of a chain, a DER certificate, a CSR, a key and a public key equals openssl's pin recipe")
    func pins() throws {
        let box = try Sandbox()
        try box.certCA("root", subject: "CN=Signet Root,O=Signet Tests")
        try box.certIssued("leaf", by: "root", type: "rsa2048", subject: "CN=x.test", san: "DNS:x.test")
        let leafPin = try box.opensslPin(certificate: "leaf.pem")
        let rootPin = try box.opensslPin(certificate: "root.pem")
        try box.write("chain.pem", try box.read("leaf.pem") + box.read("root.pem"))

        let chain = try box.signet("cert", "pin", "chain.pem")
        #expect(chain.status == 0, "\(chain)")
        #expect(chain.out == "\(leafPin)  CN=x.test\n\(rootPin)  CN=Signet Root,O=Signet Tests\n")
        try box.opensslOK(["x509", "-in", "leaf.pem", "-outform", "DER", "-out", "leaf.der"])
        #expect(try box.signet("cert", "pin", "leaf.der").out == "\(leafPin)  CN=x.test\n")

        let csrPin = try box.opensslPin(csr: "leaf.csr")
        #expect(csrPin == leafPin)
        #expect(try box.signet("cert", "pin", "leaf.csr").out == "\(csrPin)  CN=x.test\n")

        let keyPin = try box.opensslPin(key: "leaf.key")
        #expect(keyPin == leafPin)
        let key = try box.signet("cert", "pin", "leaf.key")
        #expect(key.status == 0, "\(key)")
        #expect(key.out == keyPin + "\n")
        try box.opensslOK(["pkey", "-in", "leaf.key", "-pubout", "-out", "leaf.pub"])
        #expect(try box.signet("cert", "pin", "leaf.pub").out == keyPin + "\n")
    }
}
