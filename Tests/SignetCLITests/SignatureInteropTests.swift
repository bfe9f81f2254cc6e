import Foundation
import SignetTestSupport
import Testing

/// File signatures, byte-compatible with openssl in both directions.
@Suite("signet sign / verify: interop with openssl")
struct SignatureInteropTests {
    /// Every non-HMAC algorithm, with a key type it fits and openssl's matching commands.
    struct Case: CustomTestStringConvertible, Sendable {
        var algorithm: String
        var keyType: String
        var digest: String?
        var pss = false
        var testDescription: String { algorithm }

        /// openssl's extra arguments for this padding.
        var sigopts: [String] {
            pss ? ["-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:digest"] : []
        }
    }

    static let cases: [Case] = [
        Case(algorithm: "rsa-v1_5-sha256", keyType: "rsa2048", digest: "sha256"),
        Case(algorithm: "rsa-v1_5-sha512", keyType: "rsa2048", digest: "sha512"),
        Case(algorithm: "rsa-pss-sha256", keyType: "rsa2048", digest: "sha256", pss: true),
        Case(algorithm: "rsa-pss-sha512", keyType: "rsa2048", digest: "sha512", pss: true),
        Case(algorithm: "ecdsa-p256-sha256", keyType: "p256", digest: "sha256"),
        Case(algorithm: "ecdsa-p384-sha384", keyType: "p384", digest: "sha384"),
        Case(algorithm: "ed25519", keyType: "ed25519", digest: nil),
    ]

    /// A key pair made by openssl, and a 3 MiB file to sign.
    static func prepare(_ box: Sandbox, keyType: String) throws {
        try KeyInteropTests.opensslGenerate(box, type: keyType, to: "key.pem")
        try box.must("openssl", "pkey", "-in", "key.pem", "-pubout", "-out", "pub.pem")
        try box.write("file", Data((0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }))
    }

    func opensslVerify(_ box: Sandbox, _ test: Case, signature: String) throws -> RunResult {
        if let digest = test.digest {
            return try box.run(try #require(ProcessRunner.which("openssl")),
                               ["dgst", "-\(digest)", "-verify", "pub.pem", "-signature", signature] + test.sigopts + ["file"], stdin: nil)
        }
        return try box.run(try #require(ProcessRunner.which("openssl")),
                           ["pkeyutl", "-verify", "-rawin", "-pubin", "-inkey", "pub.pem", "-sigfile", signature, "-in", "file"], stdin: nil)
    }

    @Test("signet's signatures verify with openssl", arguments: cases)
    func oursVerifyWithOpenSSL(test: Case) throws {
        let box = try Sandbox()
        try Self.prepare(box, keyType: test.keyType)
        let signed = try box.signet("sign", "--key", "key.pem", "-a", test.algorithm, "file", "-o", "sig")
        #expect(signed.status == 0, "\(signed)")
        let verified = try opensslVerify(box, test, signature: "sig")
        #expect(verified.status == 0, "\(verified)")
        // Our own verifier agrees, and a tampered file fails it with exit 1.
        #expect(try box.signet("verify", "--key", "pub.pem", "-a", test.algorithm, "--signature", "sig", "file").status == 0)
        var tampered = try box.read("file")
        tampered[tampered.count / 2] ^= 0x01
        try box.write("file", tampered)
        let refused = try box.signet("verify", "--key", "pub.pem", "-a", test.algorithm, "--signature", "sig", "file")
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("signature"))
        #expect(try opensslVerify(box, test, signature: "sig").status != 0)
    }

    @Test("openssl's signatures verify with signet", arguments: cases)
    func theirsVerifyWithSignet(test: Case) throws {
        let box = try Sandbox()
        try Self.prepare(box, keyType: test.keyType)
        if let digest = test.digest {
            let signed = try box.run(try #require(ProcessRunner.which("openssl")),
                                     ["dgst", "-\(digest)", "-sign", "key.pem", "-out", "sig"] + test.sigopts + ["file"], stdin: nil)
            try #require(signed.status == 0, "\(signed)")
        } else {
            try box.must("openssl", "pkeyutl", "-sign", "-rawin", "-inkey", "key.pem", "-in", "file", "-out", "sig")
        }
        let verified = try box.signet("verify", "--key", "pub.pem", "-a", test.algorithm, "--signature", "sig", "file")
        #expect(verified.status == 0, "\(verified)")
        #expect(verified.stderr.contains("file: signature OK (\(test.algorithm)"))
        // The private key verifies too, and the wrong key fails.
        #expect(try box.signet("verify", "--key", "key.pem", "-a", test.algorithm, "--signature", "sig", "file").status == 0)
        try KeyInteropTests.opensslGenerate(box, type: test.keyType, to: "other.pem")
        let wrongKey = try box.signet("verify", "--key", "other.pem", "-a", test.algorithm, "--signature", "sig", "file")
        #expect(wrongKey.status == 1, "\(wrongKey)")
    }

    @Test("the key's default algorithm is used without -a", arguments: [
        ("rsa2048", "sha256"), ("p256", "sha256"), ("p384", "sha384"),
    ])
    func defaults(keyType: String, digest: String) throws {
        let box = try Sandbox()
        try Self.prepare(box, keyType: keyType)
        #expect(try box.signet("sign", "--key", "key.pem", "file", "-o", "sig").status == 0)
        #expect(try box.must("openssl", "dgst", "-\(digest)", "-verify", "pub.pem", "-signature", "sig", "file").out == "Verified OK\n")
    }

    @Test("openssl's default maximum-salt PSS signatures are refused with the way to make a compatible one")
    func maximumSaltPSS() throws {
        let box = try Sandbox()
        try Self.prepare(box, keyType: "rsa2048")
        try box.must("openssl", "dgst", "-sha256", "-sign", "key.pem", "-sigopt", "rsa_padding_mode:pss", "-out", "sig", "file")
        let result = try box.signet("verify", "--key", "pub.pem", "-a", "rsa-pss-sha256", "--signature", "sig", "file")
        #expect(result.status == 1)
        #expect(result.stderr.contains("rsa_pss_saltlen:digest"), "\(result)")
    }

    @Test("--base64 signatures, and base64 signature files detected on verify")
    func base64Signatures() throws {
        let box = try Sandbox()
        try Self.prepare(box, keyType: "p256")
        let signed = try box.signet("sign", "--key", "key.pem", "--base64", "file")
        #expect(signed.status == 0)
        let text = signed.out.trimmingCharacters(in: .newlines)
        let raw = try #require(Data(base64Encoded: text))
        try box.write("sig.raw", raw)
        try box.write("sig.b64", signed.stdout)
        #expect(try box.must("openssl", "dgst", "-sha256", "-verify", "pub.pem", "-signature", "sig.raw", "file").status == 0)
        #expect(try box.signet("verify", "--key", "pub.pem", "--signature", "sig.b64", "file").status == 0)
        #expect(try box.signet("verify", "--key", "pub.pem", "--signature", "sig.raw", "file").status == 0)
        #expect(try box.signet("verify", "--key", "pub.pem", "--signature", "-", "file", stdin: signed.stdout).status == 0)
    }

    @Test("signs standard input and writes to standard output")
    func pipes() throws {
        let box = try Sandbox()
        try Self.prepare(box, keyType: "ed25519")
        let signed = try box.signet("sign", "--key", "key.pem", "-", stdin: try box.read("file"))
        #expect(signed.status == 0, "\(signed)")
        try box.write("sig", signed.stdout)
        #expect(try box.signet("verify", "--key", "pub.pem", "--signature", "sig", "file").status == 0)
    }

    @Test("Ed25519 signs messages of 64 MiB and refuses, clearly, past its in-memory bound")
    func ed25519Bounds() throws {
        let box = try Sandbox()
        try KeyInteropTests.opensslGenerate(box, type: "ed25519", to: "key.pem")
        try box.must("openssl", "pkey", "-in", "key.pem", "-pubout", "-out", "pub.pem")
        try box.must("truncate", "-s", "64M", "big")
        #expect(try box.signet("sign", "--key", "key.pem", "big", "-o", "sig").status == 0)
        #expect(try box.must("openssl", "pkeyutl", "-verify", "-rawin", "-pubin", "-inkey", "pub.pem", "-sigfile", "sig", "-in", "big").status == 0)
        try box.must("truncate", "-s", "129M", "huge")
        let refused = try box.signet("sign", "--key", "key.pem", "huge", "-o", "sig2")
        #expect(refused.status == 3)
        #expect(refused.stderr.contains("huge"))
        #expect(refused.stderr.contains("128 MiB"))
        #expect(refused.stderr.contains("ecdsa-p256-sha256"))
        #expect(!box.exists("sig2"))
    }

    @Test("a signature algorithm that does not fit the key is a usage error")
    func mismatchedAlgorithm() throws {
        let box = try Sandbox()
        try Self.prepare(box, keyType: "p256")
        let result = try box.signet("sign", "--key", "key.pem", "-a", "rsa-pss-sha256", "file")
        #expect(result.status == 2)
        #expect(result.stderr.contains("rsa-pss-sha256 cannot be used with a P-256 key"))
        let mac = try box.signet("sign", "--key", "key.pem", "-a", "hmac-sha256", "file")
        #expect(mac.status == 2)
        #expect(mac.stderr.contains("signet hmac"))
        let unknown = try box.signet("sign", "--key", "key.pem", "-a", "dsa", "file")
        #expect(unknown.status == 2)
    }
}
