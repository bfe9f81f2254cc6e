import Foundation
import Testing

/// Private keys in the vault (`vault import/generate/export`, `--key vault:SERVICE/ACCOUNT`),
/// cross-checked with openssl.
@Suite("signet vault key items")
struct VaultCommandKeyTests {
    /// A vault at `v.db`, an openssl P-256 key (`key.pem`, `pub.pem`), a `file` to sign, and the
    /// key imported as vault:S/A.
    static func sandboxWithImportedKey() throws -> (Sandbox, String) {
        let (sandbox, vault) = try VaultCommandTests.sandboxWithVault()
        try sandbox.must("openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "key.pem")
        try sandbox.must("openssl", "pkey", "-in", "key.pem", "-pubout", "-out", "pub.pem")
        try sandbox.write("file", "signed with a key that lives in the vault\n")
        let imported = try sandbox.vaultVerb(vault, "import", "S", "A", "key.pem")
        try #require(imported.status == 0, "\(imported)")
        #expect(imported.stderr.contains("vault:S/A"))
        return (sandbox, vault)
    }

    @Test("an imported openssl key signs what openssl verifies and has the key file's fingerprint")
    func importSignFingerprint() throws {
        let (sandbox, vault) = try Self.sandboxWithImportedKey()
        let signed = try sandbox.signet("sign", "--key", "vault:S/A", "--vault", vault, "file", "-o", "sig", environment: VaultCommandTests.env)
        #expect(signed.status == 0, "\(signed)")
        try sandbox.must("openssl", "dgst", "-sha256", "-verify", "pub.pem", "-signature", "sig", "file")
        let ours = try sandbox.signet("key", "fingerprint", "vault:S/A", "--vault", vault, environment: VaultCommandTests.env)
        let fromFile = try sandbox.signet("key", "fingerprint", "key.pem")
        #expect(ours.status == 0, "\(ours)")
        #expect(fromFile.status == 0, "\(fromFile)")
        #expect(!ours.out.isEmpty && ours.out == fromFile.out)
    }

    @Test("export writes the private key 0600 for openssl; --public writes openssl's public key")
    func export() throws {
        let (sandbox, vault) = try Self.sandboxWithImportedKey()
        let exported = try sandbox.vaultVerb(vault, "export", "S", "A", "-o", "out.pem")
        #expect(exported.status == 0, "\(exported)")
        #expect(exported.stdout.isEmpty)
        #expect(try sandbox.mode("out.pem") == 0o600)
        try sandbox.must("openssl", "pkey", "-in", "out.pem", "-noout")
        let outPublic = try sandbox.must("openssl", "pkey", "-in", "out.pem", "-pubout")
        let opensslPublic = try sandbox.readText("pub.pem")
        #expect(outPublic.out == opensslPublic)

        let publicOut = try sandbox.vaultVerb(vault, "export", "S", "A", "--public")
        #expect(publicOut.status == 0, "\(publicOut)")
        #expect(publicOut.out == opensslPublic)
        #expect(try sandbox.vaultVerb(vault, "export", "S", "A", "--public", "-o", "exported-pub.pem").status == 0)
        #expect(try sandbox.readText("exported-pub.pem") == opensslPublic)
    }

    @Test("a key generated in the vault signs Ed25519 that openssl verifies")
    func generateEd25519() throws {
        let (sandbox, vault) = try VaultCommandTests.sandboxWithVault()
        let generated = try sandbox.vaultVerb(vault, "generate", "S2", "A2", "-t", "ed25519")
        #expect(generated.status == 0, "\(generated)")
        #expect(generated.stderr.contains("vault:S2/A2"))
        #expect(try sandbox.vaultVerb(vault, "export", "S2", "A2", "--public", "-o", "pub.pem").status == 0)
        try sandbox.write("file", "release notes\n")
        let signed = try sandbox.signet("sign", "--key", "vault:S2/A2", "--vault", vault, "file", "-o", "sig", environment: VaultCommandTests.env)
        #expect(signed.status == 0, "\(signed)")
        #expect(try sandbox.read("sig").count == 64)
        try sandbox.must("openssl", "pkeyutl", "-verify", "-rawin", "-pubin", "-inkey", "pub.pem", "-sigfile", "sig", "-in", "file")
        let listed = try VaultCommandTests.listed(sandbox, vault)
        #expect(listed.first?["kind"] as? String == "private-key")
    }

    @Test("get refuses a key item (exit 2) and prints nothing")
    func getKeyItem() throws {
        let (sandbox, vault) = try Self.sandboxWithImportedKey()
        let got = try sandbox.vaultVerb(vault, "get", "S", "A")
        #expect(got.status == 2, "\(got)")
        #expect(got.stdout.isEmpty)
        #expect(got.stderr.contains("vault export"))
    }

    @Test("an encrypted PKCS#8 key is imported with --key-passphrase-file")
    func encryptedImport() throws {
        let (sandbox, vault) = try VaultCommandTests.sandboxWithVault()
        try sandbox.write("keypass", "the key file's own passphrase\n")
        try sandbox.must(
            "openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-aes-256-cbc",
            "-pass", "file:keypass", "-out", "enc.pem")
        #expect(try sandbox.readText("enc.pem").hasPrefix("-----BEGIN ENCRYPTED PRIVATE KEY-----"))
        try sandbox.must("openssl", "pkey", "-in", "enc.pem", "-passin", "file:keypass", "-pubout", "-out", "pub.pem")
        let imported = try sandbox.vaultVerb(vault, "import", "E", "A", "enc.pem", "--key-passphrase-file", "keypass")
        #expect(imported.status == 0, "\(imported)")
        let opensslPublic = try sandbox.readText("pub.pem")
        #expect(try sandbox.vaultVerb(vault, "export", "E", "A", "--public").out == opensslPublic)
        try sandbox.write("file", "x")
        #expect(try sandbox.signet("sign", "--key", "vault:E/A", "--vault", vault, "file", "-o", "sig", environment: VaultCommandTests.env).status == 0)
        try sandbox.must("openssl", "dgst", "-sha256", "-verify", "pub.pem", "-signature", "sig", "file")
        // Without --key-passphrase-file the key's passphrase is taken from SIGNET_PASSPHRASE, which
        // holds the vault's: wrong for the key, so nothing is stored.
        let wrong = try sandbox.vaultVerb(vault, "import", "E", "B", "enc.pem")
        #expect(wrong.status == 1, "\(wrong)")
        #expect(try sandbox.vaultVerb(vault, "show", "E", "B").status == 1)
    }

    @Test("import of an existing item exits 1; --replace replaces it")
    func importTwice() throws {
        let (sandbox, vault) = try Self.sandboxWithImportedKey()
        let again = try sandbox.vaultVerb(vault, "import", "S", "A", "key.pem")
        #expect(again.status == 1, "\(again)")
        try sandbox.must("openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "key2.pem")
        #expect(try sandbox.vaultVerb(vault, "import", "S", "A", "key2.pem").status == 1)
        let firstKey = try sandbox.signet("key", "fingerprint", "key.pem").out
        let secondKey = try sandbox.signet("key", "fingerprint", "key2.pem").out
        #expect(!firstKey.isEmpty && firstKey != secondKey)
        let before = try sandbox.signet("key", "fingerprint", "vault:S/A", "--vault", vault, environment: VaultCommandTests.env)
        #expect(before.out == firstKey, "\(before)")
        let replaced = try sandbox.vaultVerb(vault, "import", "S", "A", "key2.pem", "--replace")
        #expect(replaced.status == 0, "\(replaced)")
        let after = try sandbox.signet("key", "fingerprint", "vault:S/A", "--vault", vault, environment: VaultCommandTests.env)
        #expect(after.status == 0, "\(after)")
        #expect(after.out == secondKey)
    }

    @Test("--key vault:S/missing exits 1, vault:bad exits 2, and --vault on sign selects the vault")
    func references() throws {
        let (sandbox, vault) = try Self.sandboxWithImportedKey()
        let missing = try sandbox.signet("sign", "--key", "vault:S/missing", "--vault", vault, "file", "-o", "sig", environment: VaultCommandTests.env)
        #expect(missing.status == 1, "\(missing)")
        #expect(missing.stderr.contains("no item"))
        let malformed = try sandbox.signet("sign", "--key", "vault:bad", "--vault", vault, "file", "-o", "sig", environment: VaultCommandTests.env)
        #expect(malformed.status == 2, "\(malformed)")
        #expect(malformed.stderr.contains("vault:SERVICE/ACCOUNT"))
        #expect(!sandbox.exists("sig"))

        // Another vault without the key, and no default vault at all.
        let other = sandbox.path("other.db")
        #expect(try sandbox.vaultVerb(other, "init", "--scrypt-log-n", "10").status == 0)
        #expect(try sandbox.signet("sign", "--key", "vault:S/A", "--vault", other, "file", "-o", "sig", environment: VaultCommandTests.env).status == 1)
        let noDefault = try sandbox.signet("sign", "--key", "vault:S/A", "file", "-o", "sig", environment: VaultCommandTests.env)
        #expect(noDefault.status == 4, "\(noDefault)")
        #expect(noDefault.stderr.contains("no vault there"))
        let chosen = try sandbox.signet("sign", "--key", "vault:S/A", "--vault", vault, "file", "-o", "sig", environment: VaultCommandTests.env)
        #expect(chosen.status == 0, "\(chosen)")
        try sandbox.must("openssl", "dgst", "-sha256", "-verify", "pub.pem", "-signature", "sig", "file")
        var viaEnvironment = VaultCommandTests.env
        viaEnvironment["SIGNET_VAULT"] = vault
        #expect(try sandbox.signet("sign", "--key", "vault:S/A", "file", "-o", "sig2", environment: viaEnvironment).status == 0)
    }
}
