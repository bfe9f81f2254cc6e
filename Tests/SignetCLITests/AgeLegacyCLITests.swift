import Foundation
import SignetTestSupport
import Testing

/// `signet decrypt --legacy-rsa-pkcs1` on what the tutorial made: openssl encrypts 117-byte
/// chunks to a DER certificate's 1024-bit RSA key with PKCS#1 v1.5 and the result is base64;
/// the key comes from a .p12, as in the tutorial, or a PEM file.
@Suite struct AgeLegacyCLITests {
    /// A 1024-bit key, its DER certificate and a .p12 (passphrase `secret`), and `size` bytes of
    /// plaintext encrypted as the tutorial does, to `cipher.b64`.
    static func tutorial(_ box: Sandbox, size: Int) throws -> Data {
        try box.must("openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024", "-out", "key.pem")
        try box.must("openssl", "req", "-new", "-x509", "-key", "key.pem", "-subj", "/CN=backend", "-days", "30", "-outform", "DER", "-out", "cert.der")
        try box.must("openssl", "x509", "-inform", "DER", "-in", "cert.der", "-out", "cert.pem")
        try box.must("openssl", "pkcs12", "-export", "-inkey", "key.pem", "-in", "cert.pem", "-passout", "pass:secret", "-out", "key.p12")
        try box.write("pass", "secret\n")
        let plaintext = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) })
        try box.write("plain", plaintext)
        var ciphertext = Data()
        var offset = 0
        while offset < size {
            try box.write("chunk", plaintext.subdata(in: offset..<min(offset + 117, size)))
            try box.must(
                "openssl", "pkeyutl", "-encrypt", "-certin", "-inkey", "cert.pem", "-pkeyopt", "rsa_padding_mode:pkcs1", "-in", "chunk", "-out", "block")
            ciphertext += try box.read("block")
            offset += 117
        }
        try box.write("cipher.b64", ciphertext.base64EncodedString())
        return plaintext
    }

    @Test("openssl's chunks decrypt with the .p12 and with the PEM key, with a warning; -o is atomic")
    func decryptsTutorialData() throws {
        let box = try Sandbox()
        let plaintext = try Self.tutorial(box, size: 1000)
        let fromP12 = try box.signet(
            "decrypt", "--legacy-rsa-pkcs1", "-i", "key.p12", "--allow-weak", "--passphrase-file", "pass", "-o", "out", "cipher.b64")
        #expect(fromP12.status == 0, "\(fromP12)")
        #expect(try box.read("out") == plaintext)
        #expect(fromP12.stderr.contains("warning: the legacy RSA PKCS#1 v1.5 scheme is unsafe"))
        let fromPEM = try box.signet("decrypt", "--legacy-rsa-pkcs1", "-q", "-i", "key.pem", "--allow-weak", "cipher.b64")
        #expect(fromPEM.status == 0 && fromPEM.stderr.isEmpty, "\(fromPEM)")
        #expect(fromPEM.stdout == plaintext)
    }

    @Test("refusals: a weak key without --allow-weak, another key, truncated data, two keys; no output file")
    func refusals() throws {
        let box = try Sandbox()
        _ = try Self.tutorial(box, size: 300)
        let weak = try box.signet("decrypt", "--legacy-rsa-pkcs1", "-i", "key.pem", "-o", "out", "cipher.b64")
        #expect(weak.status == 3 && weak.stderr.contains("--allow-weak"), "\(weak)")
        try box.must("openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024", "-out", "other.pem")
        let other = try box.signet("decrypt", "--legacy-rsa-pkcs1", "-i", "other.pem", "--allow-weak", "-o", "out", "cipher.b64")
        #expect(other.status == 1 && other.stderr.contains("block 1 of 3 does not decrypt"), "\(other)")
        let text = try box.readText("cipher.b64")
        try box.write("cut.b64", String(text.prefix(100)))
        let cut = try box.signet("decrypt", "--legacy-rsa-pkcs1", "-i", "key.pem", "--allow-weak", "-o", "out", "cut.b64")
        #expect(cut.status == 1 && cut.stderr.contains("128-byte blocks"), "\(cut)")
        let two = try box.signet("decrypt", "--legacy-rsa-pkcs1", "-i", "key.pem", "-i", "other.pem", "cipher.b64")
        #expect(two.status == 2, "\(two)")
        #expect(!box.exists("out"))
    }
}
