import Foundation
import SignetTestSupport
import Testing

/// Signet's RFC 9421 request signatures with RSA and ECDSA keys, verified by an independent
/// implementation: python's `cryptography`, over a signature base python rebuilds itself
/// (``RequestCLITests/crossCheck``; Ed25519 and HMAC are cross-checked in RequestCLITests).
@Suite("signet request sign: RSA and ECDSA signatures checked by python cryptography")
struct RequestCLICrossCheckTests {
    @Test(
        "python cryptography verifies signet's RSA-PSS, RSA PKCS#1 v1.5 and ECDSA request signatures",
        arguments: [
            ("rsa2048", "rsa-pss-sha512"), ("rsa2048", "rsa-v1_5-sha256"), ("p256", "ecdsa-p256-sha256"), ("p384", "ecdsa-p384-sha384"),
        ])
    func crossChecked(type: String, algorithm: String) throws {
        let box = try Sandbox()
        try box.makeKey("key", type: type)
        try box.write("body", "{\"order\": 42, \"note\": \"ünïcode ✓\"}\n")
        // rsa-pss-sha512 is the default for RSA keys (and the curves' own for EC keys); v1.5 is asked for.
        let explicit = algorithm == "rsa-v1_5-sha256" ? ["-a", algorithm] : []
        let url = RequestCLITests.url
        let fields = try RequestCLITests.sign(box, ["-X", "POST", "--url", url, "--body", "body", "--key", "key"] + explicit)
        try #require(fields.count == 3, "\(fields)")
        #expect(fields[1].contains(";alg=\"\(algorithm)\""), "\(fields)")
        try box.write("signed.txt", fields.joined(separator: "\n") + "\n")

        // python: PSS with SHA-512, MGF1-SHA-512 and a 64-byte salt; ECDSA as raw r‖s turned
        // into DER with encode_dss_signature.
        let checked = try box.python(RequestCLITests.crossCheck, algorithm, "key.pub", "", "POST", url, "body", "signed.txt")
        #expect(checked.out == "OK\n", "\(checked)")

        // Signet's own verifier agrees.
        let ours = try RequestCLITests.verify(box, ["-X", "POST", "--url", url, "--body", "body", "--key", "key.pub"] + explicit, fields: fields)
        #expect(ours.status == 0, "\(ours)")
        #expect(ours.stderr.contains("signature sig1 valid (\(algorithm),"), "\(ours)")

        // The python check is not vacuous: over another URL the same signature fails it.
        let python = try Python.executable()
        let mismatch = try box.run(
            python, ["-c", RequestCLITests.crossCheck, algorithm, "key.pub", "", "POST", url + "&extra=1", "body", "signed.txt"], stdin: nil)
        #expect(mismatch.status != 0, "\(mismatch)")
        #expect(mismatch.stderr.contains("AssertionError: the signature does not verify over the rebuilt base"), "\(mismatch)")
    }
}
