import Foundation
import Testing

/// Private keys in the vault, used as `--key vault:SERVICE/ACCOUNT` and checked by openssl.
@Suite("signet vault keys")
struct VaultKeyCLITests {
    static let env = VaultCLITests.env

    @Test("an openssl key imported into the vault signs what openssl verifies; export gives it back")
    func importSignExport() throws {
        let (sandbox, vault) = try VaultCLITests.sandboxWithVault()
        try sandbox.must("openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", sandbox.path("key.pem"))
        try sandbox.must("openssl", "pkey", "-in", sandbox.path("key.pem"), "-pubout", "-out", sandbox.path("pub.pem"))
        try sandbox.write("file", "signed through the vault\n")
        let imported = try sandbox.signet("vault", "import", "keys", "ci", "key.pem", "--vault", vault, environment: Self.env)
        #expect(imported.status == 0, "\(imported)")
        #expect(imported.stderr.contains("vault:keys/ci"))
        #expect(try sandbox.signet("vault", "import", "keys", "ci", "key.pem", "--vault", vault, environment: Self.env).status == 1)
        #expect(try sandbox.signet("vault", "import", "keys", "ci", "key.pem", "--replace", "--vault", vault, environment: Self.env).status == 0)

        let signed = try sandbox.signet("sign", "--key", "vault:keys/ci", "--vault", vault, "file", "-o", "sig", environment: Self.env)
        #expect(signed.status == 0, "\(signed)")
        #expect(try sandbox.must("openssl", "dgst", "-sha256", "-verify", sandbox.path("pub.pem"), "-signature", sandbox.path("sig"), sandbox.path("file")).status == 0)
        let verified = try sandbox.signet("verify", "--key", "vault:keys/ci", "--vault", vault, "--signature", "sig", "file", environment: Self.env)
        #expect(verified.status == 0, "\(verified)")
        let ours = try sandbox.signet("key", "fingerprint", "vault:keys/ci", "--vault", vault, environment: Self.env)
        let theirs = try sandbox.signet("key", "fingerprint", "pub.pem")
        #expect(ours.status == 0 && ours.out == theirs.out, "\(ours) vs \(theirs)")

        let exported = try sandbox.signet("vault", "export", "keys", "ci", "-o", "out.pem", "--vault", vault, environment: Self.env)
        #expect(exported.status == 0, "\(exported)")
        #expect(try sandbox.mode("out.pem") == 0o600)
        let outPub = try sandbox.must("openssl", "pkey", "-in", sandbox.path("out.pem"), "-pubout")
        #expect(outPub.out == (try sandbox.readText("pub.pem")))
        #expect(try sandbox.signet("vault", "export", "keys", "ci", "-o", "out.pem", "--vault", vault, environment: Self.env).status == 2)
        let publicOnly = try sandbox.signet("vault", "export", "keys", "ci", "--public", "--vault", vault, environment: Self.env)
        #expect(publicOnly.out == (try sandbox.readText("pub.pem")))
        // A key item is not printed by get.
        #expect(try sandbox.signet("vault", "get", "keys", "ci", "--vault", vault, environment: Self.env).status == 2)
    }

    @Test("a key generated in the vault signs Ed25519 messages that openssl verifies")
    func generateEd25519() throws {
        let (sandbox, vault) = try VaultCLITests.sandboxWithVault()
        #expect(try sandbox.signet("vault", "generate", "keys", "release", "-t", "ed25519", "--vault", vault, environment: Self.env).status == 0)
        let pub = try sandbox.signet("key", "public", "vault:keys/release", "--vault", vault, "-o", "pub.pem", environment: Self.env)
        #expect(pub.status == 0, "\(pub)")
        try sandbox.write("file", "release notes")
        #expect(try sandbox.signet("sign", "--key", "vault:keys/release", "--vault", vault, "file", "-o", "sig", environment: Self.env).status == 0)
        #expect(try sandbox.must(
            "openssl", "pkeyutl", "-verify", "-rawin", "-pubin", "-inkey", sandbox.path("pub.pem"), "-sigfile", sandbox.path("sig"),
            "-in", sandbox.path("file")).status == 0)
        #expect(try sandbox.signet("vault", "generate", "keys", "weak", "-t", "rsa1024", "--vault", vault, environment: Self.env).status == 2)
    }

    @Test("an encrypted PKCS#8 key is imported with its own passphrase")
    func encryptedImport() throws {
        let (sandbox, vault) = try VaultCLITests.sandboxWithVault()
        try sandbox.write("keypass", "key file passphrase\n")
        try sandbox.must(
            "openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-aes-256-cbc",
            "-pass", "file:\(sandbox.path("keypass"))", "-out", sandbox.path("enc.pem"))
        let imported = try sandbox.signet(
            "vault", "import", "keys", "rsa", "enc.pem", "--key-passphrase-file", "keypass", "--vault", vault, environment: Self.env)
        #expect(imported.status == 0, "\(imported)")
        let wrongPass = try sandbox.write("wrong", "nope\n")
        #expect(try sandbox.signet(
            "vault", "import", "keys", "rsa2", "enc.pem", "--key-passphrase-file", wrongPass, "--vault", vault, environment: Self.env).status == 1)
    }

    @Test("bad vault references: precise errors")
    func badReferences() throws {
        let (sandbox, vault) = try VaultCLITests.sandboxWithVault()
        try sandbox.write("file", "x")
        let missing = try sandbox.signet("sign", "--key", "vault:keys/missing", "--vault", vault, "file", "-o", "sig", environment: Self.env)
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("no item"))
        let malformed = try sandbox.signet("sign", "--key", "vault:nothing", "--vault", vault, "file", "-o", "sig", environment: Self.env)
        #expect(malformed.status == 2)
        #expect(malformed.stderr.contains("vault:SERVICE/ACCOUNT"))
        #expect(try sandbox.signet("vault", "set", "pw", "a", "--vault", vault, stdin: Data("x".utf8), environment: Self.env).status == 0)
        let notKey = try sandbox.signet("sign", "--key", "vault:pw/a", "--vault", vault, "file", "-o", "sig", environment: Self.env)
        #expect(notKey.status == 3)
        #expect(notKey.stderr.contains("not a private key"))
    }
}
