import Foundation
import SignetCore
import SignetTestSupport
import SignetWebAuthn
import Testing

@Suite("otpauth:// URIs and base32")
struct OTPAuthURITests {
    @Test("base32: RFC 4648 §10's vectors, both cases, padding optional; non-canonical and foreign text refused")
    func base32() {
        let vectors = ["": "", "f": "MY======", "fo": "MZXQ====", "foo": "MZXW6===", "foob": "MZXW6YQ=", "fooba": "MZXW6YTB", "foobar": "MZXW6YTBOI======"]
        for (plain, encoded) in vectors {
            #expect(Base32.encode(Array(plain.utf8), padded: true) == encoded)
            #expect(Base32.decode(encoded) == Array(plain.utf8))
            let bare = encoded.replacingOccurrences(of: "=", with: "")
            #expect(Base32.encode(Array(plain.utf8)) == bare)
            #expect(Base32.decode(bare.lowercased()) == Array(plain.utf8))
        }
        // One meaning per text: leftover bits set, impossible lengths, wrong padding, other characters.
        for bad in ["MZ", "MY=", "M", "MZX", "MZXW6Y", "MY======MY", "MY=====", "MZXW 6YQ", "MZXW1YQ", "MZXW8YQ", "MZXW6YQ==", "ÉÉ"] {
            #expect(Base32.decode(bad) == nil, "\(bad)")
        }
        for count in 0..<40 {
            let bytes = RandomBytes.make(count)
            #expect(Base32.decode(Base32.encode(bytes)) == bytes)
        }
    }

    @Test("a URI written is read back with every field; Google's documented example reads")
    func roundTrip() throws {
        let totp = try TOTP(secret: TOTP.makeSecret(), algorithm: .sha256, digits: 8, period: .seconds(60))
        let uri = OTPAuthURI(totp: totp, account: "ada+otp@example.com", issuer: "Signet & Co: test")
        #expect(uri.uri.hasPrefix("otpauth://totp/Signet%20%26%20Co%3A%20test:ada%2Botp@example.com?secret="), "\(uri.uri)")
        let read = try OTPAuthURI(parsing: uri.uri)
        #expect(read.account == "ada+otp@example.com" && read.issuer == "Signet & Co: test")
        #expect(read.totp.secret.bytes == totp.secret.bytes && read.totp.algorithm == .sha256 && read.totp.digits == 8 && read.totp.period == .seconds(60))
        let google = try OTPAuthURI(parsing: "otpauth://totp/Example:alice@google.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=Example")
        #expect(google.issuer == "Example" && google.account == "alice@google.com" && google.totp.algorithm == .sha1)
        #expect(google.totp.digits == 6 && google.totp.period == .seconds(30))
        let noIssuer = try OTPAuthURI(parsing: "OTPAUTH://TOTP/bob?secret=jbswy3dpehpk3pxpjbswy3dpehpk3pxp&image=https%3A%2F%2Fx")
        #expect(noIssuer.issuer == nil && noIssuer.account == "bob")
    }

    @Test("hostile and wrong URIs are refused, each naming what is wrong")
    func refusals() throws {
        let secret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
        let cases: [(String, String)] = [
            ("https://totp/a?secret=\(secret)", "does not start with otpauth://"),
            ("otpauth://hotp/a?secret=\(secret)&counter=1", "HOTP"),
            ("otpauth://totp", "no label"),
            ("otpauth://totp/?secret=\(secret)", "no account"),
            ("otpauth://totp/Issuer:?secret=\(secret)", "no account"),
            ("otpauth://totp/a", "no secret"),
            ("otpauth://totp/a?secret=", "no secret"),
            ("otpauth://totp/a?secret=12345678", "not base32"),
            ("otpauth://totp/a?secret=\(secret)&secret=\(secret)", "given twice"),
            ("otpauth://totp/a?secret=\(secret)&algorithm=MD5", "not SHA1, SHA256 or SHA512"),
            ("otpauth://totp/a?secret=\(secret)&digits=x", "digits is not a number"),
            ("otpauth://totp/a?secret=\(secret)&period=99999999999999999999", "period is not a number"),
            ("otpauth://totp/A:b?secret=\(secret)&issuer=B", "is not the label's"),
            ("otpauth://totp/a%ZZ?secret=\(secret)", "not valid percent-encoding"),
            ("otpauth://totp/a%0Ab?secret=\(secret)", "control character"),
            ("otpauth://totp/" + String(repeating: "a", count: 300) + "?secret=\(secret)", "over 256 bytes"),
            ("otpauth://totp/a?secret=" + String(repeating: "A", count: 5000), "over 4096 bytes"),
        ]
        for (text, expected) in cases {
            let error = try thrown(WebAuthnError.self) { try OTPAuthURI(parsing: text) }
            #expect(error.description.contains(expected), "\(text.prefix(80)): \(error)")
            #expect(error.category == .malformedInput, "\(text.prefix(80))")
        }
        for (text, expected) in [("otpauth://totp/a?secret=JBSWY3DP", "16 to 128 bytes"), ("otpauth://totp/a?secret=\(secret)&digits=7", "6 or 8 digits"),
                                 ("otpauth://totp/a?secret=\(secret)&period=0", "1 to 3600")] {
            let error = try thrown(WebAuthnError.self) { try OTPAuthURI(parsing: text) }
            #expect(error.description.contains(expected) && error.category == .usage, "\(text): \(error)")
        }
    }

    @Test("pyotp, an independent implementation, agrees both ways: its URIs and codes here, ours there")
    func pyotpAgrees() throws {
        let check = try Python.run("import pyotp")
        try #require(check.status == 0, "python needs pyotp (Scripts/test installs it): \(check)")
        let totp = try TOTP(secret: TOTP.makeSecret())
        let ours = OTPAuthURI(totp: totp, account: "ada@example.com", issuer: "Signet")
        let times: [Int64] = [59, 1_111_111_109, 1_765_152_000, 2_000_000_000]
        // pyotp reads our URI and computes codes; we check them.
        let theirs = try Python.runOK("""
            import sys, pyotp
            t = pyotp.parse_uri(sys.argv[1])
            assert t.name == "ada@example.com" and t.issuer == "Signet", (t.name, t.issuer)
            print(" ".join(t.at(int(x)) for x in sys.argv[2:]))
            """, [ours.uri] + times.map(String.init))
        let codes = String(decoding: theirs.stdout, as: UTF8.self).split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        #expect(codes == times.map { totp.code(at: Date(timeIntervalSince1970: TimeInterval($0))) })
        // pyotp makes a secret and a URI (SHA-256, 8 digits, 60 s); we read it and agree on its codes.
        let made = try Python.runOK("""
            import pyotp, hashlib
            t = pyotp.TOTP(pyotp.random_base32(32), digest=hashlib.sha256, digits=8, interval=60)
            print(t.provisioning_uri(name="bo b@example.com", issuer_name="Acme Inc"))
            print(" ".join(t.at(x) for x in (0, 59, 60, 1765152000)))
            """)
        let lines = String(decoding: made.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
        try #require(lines.count == 2, "\(made)")
        let read = try OTPAuthURI(parsing: lines[0])
        #expect(read.account == "bo b@example.com" && read.issuer == "Acme Inc" && read.totp.algorithm == .sha256 && read.totp.digits == 8)
        #expect(lines[1].split(separator: " ").map(String.init) == [0, 59, 60, 1_765_152_000].map { read.totp.code(at: Date(timeIntervalSince1970: TimeInterval($0))) })
    }
}
