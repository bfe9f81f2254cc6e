import Foundation
import SignetCore
import SignetTestSupport
import SignetX509
import SignetX509TestSupport
import Testing
import X509

/// Certificates, chains and CSRs that are truncated, garbage, oversized or nested without end
/// are refused with `malformed`, naming the input — never a crash.
@Suite("SignetX509: hostile certificate and CSR input")
struct X509HostileInputTests {
    static func validDER() async throws -> [UInt8] {
        let pki = try await TestPKI.make()
        return try X509Files.encode(pki.intermediate, as: .der)
    }

    @Test("every truncation of a DER certificate is refused as malformed")
    func truncated() async throws {
        let der = try await Self.validDER()
        for length in stride(from: 0, to: der.count, by: 7) {
            let error = try thrown(X509Error.self) { try X509Files.decode(Array(der.prefix(length)), source: "cut.der") }
            #expect(error.code == "malformed", "\(length): \(error)")
            #expect(error.description.hasPrefix("cut.der"))
        }
    }

    @Test("trailing bytes after a DER certificate, garbage, and text that is neither PEM nor DER are refused")
    func garbage() async throws {
        let der = try await Self.validDER()
        let cases: [([UInt8], String)] = [
            (der + [0x00], "cert.der"), ([0x30, 0x03, 0x02, 0x01, 0x01], "tiny.der"),
            (Array(repeating: 0xFF, count: 300), "ff.bin"), (Array("hello, world\n".utf8), "hello.txt"),
            (Array("-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n".utf8), "badbase64.pem"),
            (Array("-----BEGIN CERTIFICATE-----\nMAMCAQE=\n-----END CERTIFICATE-----\n".utf8), "notacert.pem"),
            (Array("-----BEGIN PRIVATE KEY-----\nMAMCAQE=\n-----END PRIVATE KEY-----\n".utf8), "onlykey.pem"),
        ]
        for (bytes, name) in cases {
            let error = try thrown(X509Error.self) { try X509Files.decode(bytes, source: name) }
            expectError(error, is: "malformed", mentioning: [name])
        }
    }

    @Test("a structure nested thousands of levels deep is refused, not recursed into")
    func deeplyNested() throws {
        // 5,000 nested SEQUENCEs, each with a long-form length.
        var der: [UInt8] = []
        for level in 0..<5000 {
            let inner = (5000 - level - 1) * 4
            der += [0x30, 0x82, UInt8((inner >> 8) & 0xFF), UInt8(inner & 0xFF)]
        }
        let error = try thrown(X509Error.self) { try X509Files.decode(der, source: "deep.der") }
        expectError(error, is: "malformed", mentioning: ["deep.der"])
    }

    @Test("a file over the size limit is refused before it is parsed")
    func oversized() throws {
        let folder = try TemporaryFolder(prefix: "signet-x509-big")
        let path = try folder.write("big.pem", [UInt8](repeating: UInt8(ascii: "A"), count: X509Files.maximumSize + 1))
        let error = try thrown(X509Error.self) { try X509Files.read(path: path) }
        expectError(error, is: "malformed", mentioning: ["big.pem", "limit"])
        let missing = try thrown(X509Error.self) { try X509Files.read(path: folder.file("absent.pem")) }
        expectError(missing, is: "io", mentioning: ["absent.pem"])
        #expect(missing.category == .environment)
    }

    @Test("a CSR where a certificate is needed, and a certificate where a CSR is needed, are named")
    func wrongType() async throws {
        let folder = try TemporaryFolder(prefix: "signet-x509-type")
        let pki = try await TestPKI.make()
        let signer = try SoftwareSigner(key: try PrivateKey.generate(.p256))
        let csr = try await CertificateFactory.csr(signer: signer, subject: try SubjectParsing.distinguishedName("CN=x"))
        let csrPath = try folder.write("req.pem", try X509Files.encode(csr, as: .pem))
        let certPath = try folder.write("cert.pem", try X509Files.encode(pki.root, as: .pem))
        expectError(try thrown(X509Error.self) { try X509Files.readCertificates(path: csrPath) }, is: "malformed", mentioning: ["req.pem", "signing request"])
        expectError(try thrown(X509Error.self) { try X509Files.readCSR(path: certPath) }, is: "malformed", mentioning: ["cert.pem", "not a certificate signing request"])
    }

    @Test("X509Error codes are stable, one per case, and no message names a flag")
    func stableCodes() {
        expectStableCodes([
            (X509Error.malformed(source: "s", detail: "d"), "malformed"), (.unsupported(source: "s", detail: "d"), "unsupported"),
            (.invalidArgument(detail: "d"), "invalidArgument"), (.signatureInvalid(source: "s", detail: "d"), "signatureInvalid"),
            (.chainInvalid(subject: "s", detail: "d"), "chainInvalid"), (.hostnameMismatch(hostname: "h", detail: "d"), "hostnameMismatch"),
            (.pinMismatch(host: "h", presented: ["a"], expected: ["b"]), "pinMismatch"), (.pinSetInvalid(source: "s", detail: "d"), "pinSetInvalid"),
            (.macMismatch(source: "s"), "macMismatch"), (.keyMismatch(detail: "d"), "keyMismatch"),
            (.io(path: "p", detail: "d"), "io"),
        ], domain: "x509")
    }
}
