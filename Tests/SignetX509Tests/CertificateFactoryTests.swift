import Foundation
import SignetCore
import SignetTestSupport
import SignetX509
import SignetX509TestSupport
import SwiftASN1
import Testing
import X509

/// Certificates and CSRs Signet makes are read and verified by openssl, and openssl's by Signet.
@Suite("SignetX509: certificates and CSRs, both ways with openssl")
struct CertificateFactoryTests {
    static let keyTypes: [KeyGenerationType] = [.p256, .p384, .ed25519, .rsa2048]

    @Test("a self-signed CA of every key type is read and verified by openssl", arguments: keyTypes)
    func selfSignedCA(type: KeyGenerationType) async throws {
        let box = try OpenSSLBox()
        let signer = try box.signer(type)
        let certificate = try await CertificateFactory.selfSigned(
            signer: signer, subject: try SubjectParsing.distinguishedName("CN=Signet Test CA,O=Example\\, Inc.,C=gb"),
            days: 30, profile: .ca)
        try box.write("ca.pem", try X509Files.encode(certificate, as: .pem))
        try box.write("ca.der", try X509Files.encode(certificate, as: .der))
        let text = try box.openssl("x509", "-in", "ca.pem", "-noout", "-text", "-nameopt", "RFC2253").out
        #expect(text.contains("Subject: CN=Signet Test CA,O=Example\\, Inc.,C=GB"), "\(text)")
        #expect(text.contains("CA:TRUE"))
        #expect(text.contains("Certificate Sign, CRL Sign"))
        #expect(text.contains("X509v3 Subject Key Identifier"))
        try box.openssl("verify", "-CAfile", "ca.pem", "ca.pem")
        try box.openssl("x509", "-in", "ca.der", "-inform", "DER", "-noout")
        // The serial is 16 bytes and positive.
        let serial = try box.openssl("x509", "-in", "ca.pem", "-noout", "-serial").out
        let hex = serial.split(separator: "=")[1].trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(hex.count == 32 && !"89ABCDEF".contains(hex.first!), "\(hex)")
        // The pin openssl computes is the one Signet reports.
        let pin = try ProcessRunner.run("/bin/sh", ["-c", "openssl x509 -in ca.pem -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64"], in: box.folder.url).out
        #expect("sha256/" + pin.trimmingCharacters(in: .whitespacesAndNewlines) == certificate.publicKey.fingerprint.description)
        #expect(certificate.publicKey.fingerprint == signer.publicKey.fingerprint)
    }

    @Test("a CSR verifies with openssl req -verify; issued server and client certificates verify with openssl verify", arguments: keyTypes)
    func csrAndIssue(type: KeyGenerationType) async throws {
        let box = try OpenSSLBox()
        let pki = try await TestPKI.make()
        let signer = try box.signer(type)
        let csr = try await CertificateFactory.csr(
            signer: signer, subject: try SubjectParsing.distinguishedName("CN=api.example.com"),
            alternativeNames: try SubjectParsing.alternativeNames("DNS:api.example.com,IP:127.0.0.1,IP:::1"))
        try box.write("req.pem", try X509Files.encode(csr, as: .pem))
        let verified = try box.openssl("req", "-in", "req.pem", "-verify", "-noout")
        #expect(verified.stderr.contains("verify OK") || verified.out.contains("verify OK"), "\(verified)")
        try box.write("root.pem", try X509Files.encode(pki.root, as: .pem))
        try box.write("intermediate.pem", try X509Files.encode(pki.intermediate, as: .pem))
        for profile in [CertificateProfile.server, .client] {
            let certificate = try await CertificateFactory.issue(
                csr: csr, csrSource: "req.pem", caCertificate: pki.intermediate, caSigner: pki.intermediateSigner, profile: profile, days: 10)
            try box.write("leaf.pem", try X509Files.encode(certificate, as: .pem))
            let purpose = profile == .server ? "sslserver" : "sslclient"
            try box.openssl("verify", "-CAfile", "root.pem", "-untrusted", "intermediate.pem", "-purpose", purpose, "leaf.pem")
            let text = try box.openssl("x509", "-in", "leaf.pem", "-noout", "-text").out
            #expect(text.contains("CA:FALSE"))
            #expect(text.contains(profile == .server ? "TLS Web Server Authentication" : "TLS Web Client Authentication"))
            #expect(text.contains("DNS:api.example.com, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1"), "\(text)")
            #expect(text.contains("X509v3 Authority Key Identifier"))
            let wrongPurpose = try box.opensslStatus(
                "verify", "-CAfile", "root.pem", "-untrusted", "intermediate.pem", "-purpose", profile == .server ? "sslclient" : "sslserver", "leaf.pem")
            #expect(wrongPurpose.status != 0, "the extended key usage fits the profile only")
        }
    }

    @Test("openssl's certificates and CSRs are read, and an openssl CSR is issued by a Signet CA")
    func readsOpenSSL() async throws {
        let box = try OpenSSLBox()
        try box.openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key",
                        "-subj", "/CN=OpenSSL CA", "-days", "5", "-out", "ca.pem",
                        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
        try box.openssl("req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", "leaf.key", "-subj", "/CN=leaf",
                        "-addext", "subjectAltName=DNS:leaf.test", "-out", "leaf.csr")
        try box.openssl("req", "-in", "leaf.csr", "-outform", "DER", "-out", "leaf.csr.der")
        let caCertificates = try X509Files.readCertificates(path: box.path("ca.pem"))
        #expect(caCertificates.count == 1)
        let csr = try X509Files.readCSR(path: box.path("leaf.csr.der"))
        #expect(try CertificateFactory.requestedAlternativeNames(csr, source: "leaf.csr") == [.dnsName("leaf.test")])
        let caKey = try KeySourceResolver().privateKey(path: box.path("ca.key"))
        let issued = try await CertificateFactory.issue(
            csr: csr, csrSource: "leaf.csr", caCertificate: caCertificates[0], caSigner: try SoftwareSigner(key: caKey), days: 2)
        try box.write("leaf.pem", try X509Files.encode(issued, as: .pem))
        try box.openssl("verify", "-CAfile", "ca.pem", "leaf.pem")
        let chain = try await ChainVerifier(anchors: .certificates(caCertificates)).verify(leaf: issued, hostname: "leaf.test")
        #expect(chain.count == 2)
    }

    @Test("an openssl CSR asking for a wildcard over a public suffix is refused before anything is issued")
    func wildcardOverPublicSuffix() async throws {
        let box = try OpenSSLBox()
        let pki = try await TestPKI.make()
        try box.openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "leaf.key",
                        "-subj", "/CN=bank", "-addext", "subjectAltName=DNS:*.co.uk", "-out", "leaf.csr")
        let csr = try X509Files.readCSR(path: box.path("leaf.csr"))
        let error = try await thrownAsync(X509Error.self) {
            try await CertificateFactory.issue(csr: csr, csrSource: "leaf.csr", caCertificate: pki.intermediate, caSigner: pki.intermediateSigner, profile: .server)
        }
        expectError(error, is: "invalidArgument", mentioning: ["leaf.csr", "co.uk is a public suffix"])
    }

    @Test(
        "an openssl CSR asking for a wildcard over a public suffix with a trailing dot, or with an empty label, is refused before anything is issued",
        arguments: ["*.co.uk.", "*..co.uk", "*..example.com"])
    func wildcardSpelledToSlipThrough(name: String) async throws {
        let box = try OpenSSLBox()
        let pki = try await TestPKI.make()
        try box.openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "leaf.key",
                        "-subj", "/CN=bank", "-addext", "subjectAltName=DNS:\(name)", "-out", "leaf.csr")
        let csr = try X509Files.readCSR(path: box.path("leaf.csr"))
        let text = try box.openssl("req", "-in", "leaf.csr", "-noout", "-text").out
        #expect(text.contains("DNS:\(name)"), "the CSR must carry DNS:\(name): \(text)")
        let error = try await thrownAsync(X509Error.self) {
            try await CertificateFactory.issue(csr: csr, csrSource: "leaf.csr", caCertificate: pki.intermediate, caSigner: pki.intermediateSigner, profile: .server)
        }
        expectError(error, is: "invalidArgument", mentioning: ["leaf.csr"])
    }

    @Test("a CA restricted to clientAuth issues no server, and a name-constrained CA no name outside its subtree")
    func issuingFollowsTheCA() async throws {
        let box = try OpenSSLBox()
        try box.openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key",
                        "-subj", "/CN=Constrained CA", "-days", "5", "-out", "ca.pem",
                        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
                        "-addext", "extendedKeyUsage=clientAuth", "-addext", "nameConstraints=critical,permitted;DNS:example.com")
        let ca = try X509Files.readCertificates(path: box.path("ca.pem"))[0]
        let caSigner = try SoftwareSigner(key: try KeySourceResolver().privateKey(path: box.path("ca.key")))
        let signer = try SoftwareSigner(key: try PrivateKey.generate(.p256))
        func csr(_ san: String) async throws -> CertificateSigningRequest {
            try await CertificateFactory.csr(
                signer: signer, subject: try SubjectParsing.distinguishedName("CN=x"), alternativeNames: try SubjectParsing.alternativeNames(san))
        }
        let server = try await thrownAsync(X509Error.self) {
            try await CertificateFactory.issue(csr: try await csr("DNS:www.example.com"), csrSource: "r", caCertificate: ca, caSigner: caSigner, profile: .server)
        }
        expectError(server, is: "invalidArgument", mentioning: ["Constrained CA", "TLS server authentication"])
        let outside = try await thrownAsync(X509Error.self) {
            try await CertificateFactory.issue(csr: try await csr("DNS:victim.test"), csrSource: "r", caCertificate: ca, caSigner: caSigner, profile: .client)
        }
        expectError(outside, is: "invalidArgument", mentioning: ["DNS:victim.test", "outside"])
        let inside = try await CertificateFactory.issue(
            csr: try await csr("DNS:www.example.com"), csrSource: "r", caCertificate: ca, caSigner: caSigner, profile: .client)
        #expect(try await ChainVerifier(anchors: .certificates([ca])).verify(leaf: inside, purpose: .client).count == 2)
    }

    @Test("a client certificate is not a server: refused for the server purpose, accepted for client and any")
    func purposeOfAnIssuedCertificate() async throws {
        let pki = try await TestPKI.make()
        let signer = try SoftwareSigner(key: try PrivateKey.generate(.p256))
        let csr = try await CertificateFactory.csr(
            signer: signer, subject: try SubjectParsing.distinguishedName("CN=api.example.com"),
            alternativeNames: try SubjectParsing.alternativeNames("DNS:api.example.com"))
        let client = try await CertificateFactory.issue(
            csr: csr, csrSource: "req.pem", caCertificate: pki.intermediate, caSigner: pki.intermediateSigner, profile: .client, days: 10)
        let verifier = ChainVerifier(anchors: .certificates([pki.root]))
        let error = try await thrownAsync(X509Error.self) {
            try await verifier.verify(leaf: client, intermediates: [pki.intermediate], hostname: "api.example.com")
        }
        expectError(error, is: "chainInvalid", mentioning: ["TLS server authentication"])
        #expect(try await verifier.verify(leaf: client, intermediates: [pki.intermediate], purpose: .client).count == 3)
        #expect(try await verifier.verify(leaf: client, intermediates: [pki.intermediate], purpose: .any).count == 3)
    }

    @Test("a CSR whose signature does not verify is refused before anything is issued")
    func tamperedCSR() async throws {
        let pki = try await TestPKI.make()
        let signer = try SoftwareSigner(key: try PrivateKey.generate(.p256))
        let csr = try await CertificateFactory.csr(signer: signer, subject: try SubjectParsing.distinguishedName("CN=good"))
        var der = try X509Files.encode(csr, as: .der)
        // Change one letter of the subject: the signature no longer covers what is there.
        let index = try #require(der.firstIndex(of: UInt8(ascii: "g")))
        der[index] = UInt8(ascii: "b")
        let tampered = try X509Files.csr(der, source: "bad.csr")
        let error = try await thrownAsync(X509Error.self) {
            try await CertificateFactory.issue(csr: tampered, csrSource: "bad.csr", caCertificate: pki.root, caSigner: pki.rootSigner, profile: .client)
        }
        expectError(error, is: "signatureInvalid", mentioning: ["bad.csr"])
    }

    @Test("a CA that is not a CA, a key that is not the CA's, and a validity beyond the CA's are refused")
    func caChecks() async throws {
        let pki = try await TestPKI.make()
        let (leaf, leafSigner) = try await pki.leaf()
        let signer = try SoftwareSigner(key: try PrivateKey.generate(.p256))
        let csr = try await CertificateFactory.csr(signer: signer, subject: try SubjectParsing.distinguishedName("CN=x"))
        let notCA = try await thrownAsync(X509Error.self) {
            try await CertificateFactory.issue(csr: csr, csrSource: "x", caCertificate: leaf, caSigner: leafSigner, profile: .client)
        }
        expectError(notCA, is: "chainInvalid", mentioning: ["not a CA certificate"])
        let wrongKey = try await thrownAsync(X509Error.self) {
            try await CertificateFactory.issue(csr: csr, csrSource: "x", caCertificate: pki.root, caSigner: signer, profile: .client)
        }
        expectError(wrongKey, is: "keyMismatch", mentioning: ["does not belong"])
        let tooLong = try await thrownAsync(X509Error.self) {
            try await CertificateFactory.issue(csr: csr, csrSource: "x", caCertificate: pki.intermediate, caSigner: pki.intermediateSigner, profile: .client, days: 4000)
        }
        expectError(tooLong, is: "invalidArgument", mentioning: ["expires"])
        let noNames = try await thrownAsync(X509Error.self) {
            try await CertificateFactory.issue(csr: csr, csrSource: "x.csr", caCertificate: pki.root, caSigner: pki.rootSigner, profile: .server)
        }
        expectError(noNames, is: "invalidArgument", mentioning: ["x.csr", "subject alternative names"])
    }

    @Test("without days, a certificate gets 365 days or the CA's remaining life, whichever is shorter")
    func validityClampedToCA() async throws {
        let caSigner = try SoftwareSigner(key: try PrivateKey.generate(.p256))
        let ca = try await CertificateFactory.selfSigned(
            signer: caSigner, subject: try SubjectParsing.distinguishedName("CN=Short CA"), days: 10, profile: .ca)
        let signer = try SoftwareSigner(key: try PrivateKey.generate(.ed25519))
        let csr = try await CertificateFactory.csr(signer: signer, subject: try SubjectParsing.distinguishedName("CN=c"))
        let clamped = try await CertificateFactory.issue(csr: csr, csrSource: "c", caCertificate: ca, caSigner: caSigner, profile: .client)
        #expect(clamped.notValidAfter == ca.notValidAfter)
        let short = try await CertificateFactory.issue(csr: csr, csrSource: "c", caCertificate: ca, caSigner: caSigner, profile: .client, days: 2)
        #expect(short.notValidAfter.timeIntervalSince(short.notValidBefore) == 2 * 86_400)
    }

    @Test("subjects and SAN lists: escapes, refusals with the reason")
    func subjectParsing() throws {
        let name = try SubjectParsing.distinguishedName("CN=a\\,b,OU=Ops,O=Org,L=Leeds,ST=Yorks,C=GB,DC=example,emailAddress=x@example.com")
        #expect(name.description.hasPrefix("CN=a\\,b,OU=Ops,O=Org"), "\(name)")
        for (text, fragment) in [
            ("", "empty"), ("CN", "no '='"), ("XX=1", "unknown subject attribute 'XX'"), ("C=GBR", "two letters"),
            ("CN=", "empty"), ("CN=a\\", "lone backslash"), ("CN=a\\q", "unknown escape"),
        ] {
            let error = try thrown(X509Error.self) { try SubjectParsing.distinguishedName(text) }
            expectError(error, is: "invalidArgument", mentioning: [fragment])
        }
        #expect(try SubjectParsing.alternativeNames("DNS:*.Example.com, IP:10.0.0.1, email:a@b.c, URI:https://x.test/")
            == [.dnsName("*.example.com"), .ipAddress(ASN1OctetString(contentBytes: [10, 0, 0, 1])), .rfc822Name("a@b.c"),
                .uniformResourceIdentifier("https://x.test/")])
        for (text, fragment) in [
            ("example.com", "no type"), ("DNS:", "empty"), ("DNS:exa mple.com", "not a host name"), ("DNS:a..b", "not a host name"),
            ("IP:300.1.1.1", "not an IPv4 or IPv6"), ("XYZ:1", "not known"), ("DNS:a.b,DNS:a.b", "twice"), ("DNS:*.*.a", "not a host name"),
            ("DNS:*.com", "top-level domain"), ("DNS:*.co.uk", "co.uk is a public suffix"), ("DNS:*", "not a host name"),
        ] {
            let error = try thrown(X509Error.self) { try SubjectParsing.alternativeNames(text) }
            expectError(error, is: "invalidArgument", mentioning: [fragment])
        }
    }

    @Test("a validity of 0 days or more than 100 years is refused", arguments: [0, -1, 36_501])
    func validityRange(days: Int) async throws {
        let signer = try SoftwareSigner(key: try PrivateKey.generate(.ed25519))
        let error = try await thrownAsync(X509Error.self) {
            try await CertificateFactory.selfSigned(signer: signer, subject: try SubjectParsing.distinguishedName("CN=x"), days: days)
        }
        expectError(error, is: "invalidArgument", mentioning: ["\(days) days", "out of range"])
    }
}
