import Foundation
import Testing

@Suite("signet hmac")
struct HMACCommandTests {
    @Test("matches openssl for binary keys", arguments: [("hmac-sha256", "sha256"), ("hmac-sha512", "sha512")])
    func matchesOpenSSL(algorithm: String, digest: String) throws {
        let box = try Sandbox()
        let key = Data((0..<77).map { UInt8(($0 * 37 + 11) % 256) })  // includes NUL and newline bytes
        try box.write("key", key)
        try box.write("message", Data((0..<300_000).map { UInt8($0 % 256) }))
        let ours = try box.signet("hmac", "-a", algorithm, "--key-file", "key", "message")
        #expect(ours.status == 0, "\(ours)")
        let hexKey = key.map { String(format: "%02x", $0) }.joined()
        let theirs = try box.must("openssl", "dgst", "-\(digest)", "-mac", "HMAC", "-macopt", "hexkey:\(hexKey)", "-r", "message")
        let expected = String(theirs.out.split(separator: " ")[0])
        #expect(ours.out == expected + "\n")
    }

    @Test("takes the key from SIGNET_HMAC_KEY and prints base64")
    func environmentKey() throws {
        let box = try Sandbox()
        try box.write("m", "The quick brown fox jumps over the lazy dog")
        let result = try box.signet("hmac", "--base64", "m", environment: ["SIGNET_HMAC_KEY": "key"])
        // Wikipedia's published HMAC-SHA256 example, in base64.
        #expect(result.out == "97yD9DBThCSxMpjmqm+xQ+9NWaFJRhdZl0edvC0aPNg=\n")
    }

    @Test("--verify accepts hex or base64 and exits 1 on a mismatch")
    func verify() throws {
        let box = try Sandbox()
        try box.write("m", "The quick brown fox jumps over the lazy dog")
        try box.write("k", "key")
        let hex = "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"
        #expect(try box.signet("hmac", "--key-file", "k", "--verify", hex, "m").status == 0)
        #expect(try box.signet("hmac", "--key-file", "k", "--verify", hex.uppercased(), "m").status == 0)
        #expect(try box.signet("hmac", "--key-file", "k", "--verify", "97yD9DBThCSxMpjmqm+xQ+9NWaFJRhdZl0edvC0aPNg=", "m").status == 0)
        let wrong = try box.signet("hmac", "--key-file", "k", "--verify", String(hex.dropLast()) + "9", "m")
        #expect(wrong.status == 1)
        #expect(wrong.stderr.contains("m: HMAC does not match"))
        let malformed = try box.signet("hmac", "--key-file", "k", "--verify", "abc", "m")
        #expect(malformed.status == 2)
        #expect(malformed.stderr.contains("64 hex digits"))
    }

    @Test("refuses missing, empty and unreadable keys")
    func keyErrors() throws {
        let box = try Sandbox()
        try box.write("m", "x")
        try box.write("empty", "")
        let none = try box.signet("hmac", "m")
        #expect(none.status == 2)
        #expect(none.stderr.contains("no HMAC key"))
        let empty = try box.signet("hmac", "--key-file", "empty", "m")
        #expect(empty.status == 2)
        #expect(empty.stderr.contains("empty: the HMAC key file is empty"))
        let missing = try box.signet("hmac", "--key-file", "nokey", "m")
        #expect(missing.status == 4)
        #expect(missing.stderr.contains("nokey: no such file or directory"))
        let badAlgorithm = try box.signet("hmac", "-a", "hmac-md5", "--key-file", "m", "m")
        #expect(badAlgorithm.status == 2)
        #expect(badAlgorithm.stderr.contains("The value 'hmac-md5' is invalid for '-a <ALG>'"))
    }
}
