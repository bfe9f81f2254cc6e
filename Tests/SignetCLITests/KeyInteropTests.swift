import Foundation
import SignetTestSupport
import Testing

/// Keys written by signet are read by openssl and ssh-keygen, and theirs by signet.
@Suite("signet key: interop with openssl and ssh-keygen")
struct KeyInteropTests {
    /// openssl's fingerprint recipe from the issue: SHA-256 over the DER SPKI, base64.
    static func opensslFingerprint(_ box: Sandbox, publicPEM: String) throws -> String {
        let result = try box.shell("openssl pkey -pubin -in '\(publicPEM)' -outform der | openssl dgst -sha256 -binary | base64")
        return "sha256/" + result.out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func opensslGenerate(_ box: Sandbox, type: String, to name: String) throws {
        switch type {
        case "rsa2048": try box.must("openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", name)
        case "p256": try box.must("openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", name)
        case "p384": try box.must("openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384", "-out", name)
        default: try box.must("openssl", "genpkey", "-algorithm", "ED25519", "-out", name)
        }
    }

    @Test("signet's generated keys are read by openssl; public keys and fingerprints agree", arguments: KeyTypes.all)
    func generatedKeysReadByOpenSSL(type: String) throws {
        let box = try Sandbox()
        let generated = try box.signet("key", "generate", "-t", type, "-o", "key.pem")
        #expect(generated.status == 0, "\(generated)")
        #expect(try box.mode("key.pem") == 0o600)
        let opensslPublic = try box.must("openssl", "pkey", "-in", "key.pem", "-pubout").out
        let ourPublic = try box.signet("key", "public", "key.pem")
        #expect(ourPublic.out == opensslPublic)
        try box.write("pub.pem", ourPublic.out)
        let fingerprint = try box.signet("key", "fingerprint", "key.pem").out.trimmingCharacters(in: .newlines)
        #expect(fingerprint == (try Self.opensslFingerprint(box, publicPEM: "pub.pem")))
        #expect(generated.stderr.contains(fingerprint))
        #expect(try box.signet("key", "fingerprint", "pub.pem").out == fingerprint + "\n")
    }

    @Test("every private format signet writes is read by openssl", arguments: [
        ("rsa2048", "pem", ["pkey", "-in"]), ("rsa2048", "der", ["pkey", "-inform", "DER", "-in"]),
        ("rsa2048", "pkcs1", ["rsa", "-in"]), ("rsa2048", "pkcs1-der", ["rsa", "-inform", "DER", "-in"]),
        ("p256", "sec1", ["ec", "-in"]), ("p384", "sec1-der", ["ec", "-inform", "DER", "-in"]),
        ("p256", "der", ["pkey", "-inform", "DER", "-in"]), ("ed25519", "der", ["pkey", "-inform", "DER", "-in"]),
    ])
    func privateFormatsForOpenSSL(type: String, format: String, reader: [String]) throws {
        let box = try Sandbox()
        try #require(try box.signet("key", "generate", "-t", type, "-o", "key.pem").status == 0)
        let converted = try box.signet("key", "convert", "key.pem", "-o", "out", "--format", format)
        #expect(converted.status == 0, "\(converted)")
        #expect(try box.mode("out") == 0o600)
        let theirs = try box.run(try #require(ProcessRunner.which("openssl")), reader + ["out", "-pubout"], stdin: nil)
        #expect(theirs.status == 0, "\(theirs)")
        #expect(theirs.out == (try box.signet("key", "public", "key.pem").out))
        // And signet reads its own output back, detecting the format.
        #expect(try box.signet("key", "public", "out").out == theirs.out)
    }

    @Test("keys written by openssl in every format are read by signet", arguments: KeyTypes.all)
    func opensslKeysReadBySignet(type: String) throws {
        let box = try Sandbox()
        try Self.opensslGenerate(box, type: type, to: "key.pem")
        try box.must("openssl", "pkey", "-in", "key.pem", "-pubout", "-out", "pub.pem")
        let expected = try Self.opensslFingerprint(box, publicPEM: "pub.pem") + "\n"
        try box.must("openssl", "pkey", "-in", "key.pem", "-outform", "DER", "-out", "key.der")
        try box.must("openssl", "pkey", "-pubin", "-in", "pub.pem", "-outform", "DER", "-out", "pub.der")
        var files = ["key.pem", "key.der", "pub.pem", "pub.der"]
        if type != "ed25519" {
            try box.must("openssl", "pkey", "-in", "key.pem", "-traditional", "-out", "traditional.pem")
            files.append("traditional.pem")
            let tool = type == "rsa2048" ? "rsa" : "ec"
            try box.must("openssl", tool, "-in", "key.pem", "-outform", "DER", "-out", "traditional.der")
            files.append("traditional.der")
        }
        if type == "rsa2048" {
            try box.must("openssl", "rsa", "-pubin", "-in", "pub.pem", "-RSAPublicKey_out", "-out", "pkcs1pub.pem")
            try box.must("openssl", "rsa", "-pubin", "-in", "pub.pem", "-RSAPublicKey_out", "-outform", "DER", "-out", "pkcs1pub.der")
            files += ["pkcs1pub.pem", "pkcs1pub.der"]
        }
        for file in files {
            let result = try box.signet("key", "fingerprint", file)
            #expect(result.status == 0, "\(file): \(result)")
            #expect(result.out == expected, "\(file)")
        }
    }

    @Test("encrypted PKCS#8 as openssl pkcs8 -topk8 -v2 aes-256-cbc writes it, both ways", arguments: KeyTypes.all)
    func encryptedPKCS8(type: String) throws {
        let box = try Sandbox()
        try box.write("pass", "correct horse battery staple\n")
        try Self.opensslGenerate(box, type: type, to: "key.pem")
        try box.must("openssl", "pkcs8", "-topk8", "-v2", "aes-256-cbc", "-in", "key.pem", "-out", "enc.pem", "-passout", "file:pass")
        let publicKey = try box.must("openssl", "pkey", "-in", "key.pem", "-pubout").out

        let read = try box.signet("key", "public", "enc.pem", "--passphrase-file", "pass")
        #expect(read.status == 0, "\(read)")
        #expect(read.out == publicKey)
        let fromEnvironment = try box.signet("key", "public", "enc.pem", environment: ["SIGNET_PASSPHRASE": "correct horse battery staple"])
        #expect(fromEnvironment.out == publicKey)
        let wrong = try box.signet("key", "public", "enc.pem", environment: ["SIGNET_PASSPHRASE": "wrong"])
        #expect(wrong.status == 1)
        #expect(wrong.stderr.contains("enc.pem: wrong passphrase"))
        let noPassphrase = try box.signet("key", "public", "enc.pem")
        #expect(noPassphrase.status == 4)
        #expect(noPassphrase.stderr.contains("--passphrase-file"))

        // signet writes encrypted keys that openssl decrypts.
        let written = try box.signet("key", "convert", "key.pem", "-o", "ours.pem", "--encrypt", "--new-passphrase-file", "pass")
        #expect(written.status == 0, "\(written)")
        #expect(try box.readText("ours.pem").hasPrefix("-----BEGIN ENCRYPTED PRIVATE KEY-----"))
        let parameters = try box.must("openssl", "asn1parse", "-in", "ours.pem").out
        #expect(parameters.contains("PBES2") && parameters.contains("aes-256-cbc") && parameters.contains("hmacWithSHA256"))
        #expect(try box.must("openssl", "pkey", "-in", "ours.pem", "-passin", "file:pass", "-pubout").out == publicKey)
        try box.must("openssl", "pkey", "-in", "ours.pem", "-passin", "file:pass", "-outform", "DER", "-out", "ours.der")
        #expect(try box.signet("key", "generate", "-t", type, "-o", "gen.der", "--format", "der", "--encrypt", "--passphrase-file", "pass").status == 0)
        #expect(try box.tool("openssl", "pkey", "-inform", "DER", "-in", "gen.der", "-passin", "file:pass", "-noout").status == 0)
    }

    @Test("public key formats agree with openssl", arguments: KeyTypes.all)
    func publicFormats(type: String) throws {
        let box = try Sandbox()
        try Self.opensslGenerate(box, type: type, to: "key.pem")
        try box.must("openssl", "pkey", "-in", "key.pem", "-pubout", "-outform", "DER", "-out", "spki.der")
        let der = try box.signet("key", "public", "key.pem", "--format", "der")
        #expect(der.stdout == (try box.read("spki.der")))
        let spki = try box.read("spki.der")
        let ios = try box.signet("key", "public", "key.pem", "--format", "ios").out.trimmingCharacters(in: .newlines)
        switch type {
        case "rsa2048":
            try box.must("openssl", "rsa", "-in", "key.pem", "-RSAPublicKey_out", "-outform", "DER", "-out", "pkcs1.der")
            #expect(Data(base64Encoded: ios) == (try box.read("pkcs1.der")))
            #expect(try box.signet("key", "public", "key.pem", "--format", "pkcs1-der").stdout == (try box.read("pkcs1.der")))
        case "ed25519":
            #expect(Data(base64Encoded: ios) == spki.suffix(32))
        default:
            // The X9.63 point is the tail of the SPKI.
            let pointLength = type == "p256" ? 65 : 97
            #expect(Data(base64Encoded: ios) == spki.suffix(pointLength))
        }
        // The iOS form reads back as the same key.
        try box.write("ios.txt", ios + "\n")
        #expect(try box.signet("key", "public", "ios.txt", "--format", "der").stdout == spki)
        // JWK reads back too, and names the fingerprint as kid.
        let jwk = try box.signet("key", "public", "key.pem", "--format", "jwk")
        let object = try #require(try JSONSerialization.jsonObject(with: jwk.stdout) as? [String: Any])
        #expect(object["kid"] as? String == (try box.signet("key", "fingerprint", "key.pem").out.trimmingCharacters(in: .newlines)))
        #expect(object["d"] == nil, "a public JWK must not hold the private part")
        try box.write("key.jwk", jwk.stdout)
        #expect(try box.signet("key", "public", "key.jwk", "--format", "der").stdout == spki)
    }

    @Test("OpenSSH public keys both ways with ssh-keygen", arguments: KeyTypes.all)
    func openSSH(type: String) throws {
        let box = try Sandbox()
        try Self.opensslGenerate(box, type: type, to: "key.pem")
        let line = try box.signet("key", "public", "key.pem", "--format", "openssh", "--comment", "me@host")
        #expect(line.status == 0)
        try box.write("key.pub", line.stdout)
        #expect(line.out.hasSuffix(" me@host\n"))
        // ssh-keygen accepts the line and computes the same OpenSSH fingerprint as from the PEM.
        let listed = try box.must("ssh-keygen", "-l", "-f", "key.pub").out
        #expect(listed.contains("me@host"))
        if type == "ed25519" {
            // ssh-keygen (OpenSSH 9) reads no Ed25519 PEM, so the key blob is checked against
            // RFC 8709's layout built from openssl's raw public key (the SPKI's last 32 bytes);
            // sshKeygenEd25519Line compares with ssh-keygen's own line for one key.
            try box.must("openssl", "pkey", "-in", "key.pem", "-pubout", "-outform", "DER", "-out", "spki.der")
            let spki = try box.read("spki.der")
            try #require(spki.count == 44, "an Ed25519 SPKI is 44 bytes")
            var blob = Data([0, 0, 0, 11])
            blob.append(contentsOf: Array("ssh-ed25519".utf8))
            blob.append(contentsOf: [0, 0, 0, 32])
            blob.append(contentsOf: spki.suffix(32))
            let fields = line.out.split(whereSeparator: \.isWhitespace).map(String.init)
            #expect(fields == ["ssh-ed25519", blob.base64EncodedString(), "me@host"], "\(line.out)")
        } else {
            // ssh-keygen converts our line to PKCS#8/SPKI PEM that equals openssl's.
            let exported = try box.must("ssh-keygen", "-e", "-m", "PKCS8", "-f", "key.pub").out
            #expect(exported == (try box.must("openssl", "pkey", "-in", "key.pem", "-pubout").out))
            // And ssh-keygen -i turns the PEM into the line signet writes.
            try box.must("openssl", "pkey", "-in", "key.pem", "-pubout", "-out", "pub.pem")
            let imported = try box.must("ssh-keygen", "-i", "-m", "PKCS8", "-f", "pub.pem").out
            #expect(imported.split(whereSeparator: \.isWhitespace).prefix(2) == line.out.split(whereSeparator: \.isWhitespace).prefix(2))
        }
    }

    @Test("an Ed25519 key made by ssh-keygen: signet's OpenSSH line carries the key ssh-keygen -y prints")
    func sshKeygenEd25519Line() throws {
        let box = try Sandbox()
        try box.must("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "test", "-f", "id")
        // ssh-keygen writes Ed25519 private keys only in its own format (which signet refuses);
        // python's cryptography re-encodes the same key as PKCS#8 PEM.
        let pem = try box.must(
            "python3", "-c",
            """
            import sys
            from cryptography.hazmat.primitives import serialization as s
            key = s.load_ssh_private_key(open(sys.argv[1], 'rb').read(), None)
            sys.stdout.write(key.private_bytes(s.Encoding.PEM, s.PrivateFormat.PKCS8, s.NoEncryption()).decode())
            """,
            "id")
        try box.write("key.pem", pem.stdout)
        let ours = try box.signet("key", "public", "key.pem", "--format", "openssh", "--comment", "me@host")
        #expect(ours.status == 0, "\(ours)")
        let theirs = try box.must("ssh-keygen", "-y", "-f", "id").out
        let ourFields = ours.out.split(whereSeparator: \.isWhitespace).map(String.init)
        let theirFields = theirs.split(whereSeparator: \.isWhitespace).map(String.init)
        try #require(ourFields.count == 3 && theirFields.count >= 2, "ours: \(ours.out) theirs: \(theirs)")
        #expect(ourFields[0] == "ssh-ed25519")
        #expect(ourFields[1] == theirFields[1], "the key blob differs from ssh-keygen -y's")
        #expect(ourFields[2] == "me@host")
        // The blob is also the one in the .pub file ssh-keygen wrote.
        #expect(try box.readText("id.pub").split(whereSeparator: \.isWhitespace).map(String.init).prefix(2) == ourFields.prefix(2))
    }

    @Test("keys made by ssh-keygen are read by signet", arguments: [("rsa", "2048"), ("ecdsa", "256"), ("ecdsa", "384"), ("ed25519", "256")])
    func sshKeygenKeys(type: String, bits: String) throws {
        let box = try Sandbox()
        try box.must("ssh-keygen", "-q", "-t", type, "-b", bits, "-N", "", "-C", "test", "-f", "id")
        let ours = try box.signet("key", "public", "id.pub", "--format", "openssh")
        #expect(ours.status == 0, "\(ours)")
        let theirs = try box.readText("id.pub")
        #expect(ours.out.split(whereSeparator: \.isWhitespace).prefix(2) == theirs.split(whereSeparator: \.isWhitespace).prefix(2))
        // Their OpenSSH-format private key (openssh-key-v1, no passphrase) reads as the same key,
        // and signs: ssh-keygen verifies what signet signs with it.
        let privateKey = try box.signet("key", "public", "id", "--format", "openssh")
        #expect(privateKey.status == 0, "\(privateKey)")
        #expect(privateKey.out.split(whereSeparator: \.isWhitespace).prefix(2) == theirs.split(whereSeparator: \.isWhitespace).prefix(2))
        // With a passphrase it is refused with a way forward.
        try box.must("ssh-keygen", "-q", "-t", type, "-b", bits, "-N", "secret", "-C", "test", "-f", "locked")
        let locked = try box.signet("key", "public", "locked")
        #expect(locked.status == 3)
        #expect(locked.stderr.contains("passphrase-protected OpenSSH private keys") && locked.stderr.contains("ssh-keygen -p"), "\(locked)")
        if type != "ed25519" {
            try box.must("ssh-keygen", "-q", "-p", "-m", "PKCS8", "-N", "", "-f", "id")
            #expect(try box.signet("key", "public", "id", "--format", "openssh").out.split(whereSeparator: \.isWhitespace).prefix(2)
                == theirs.split(whereSeparator: \.isWhitespace).prefix(2))
        }
    }

    @Test("RSA under 2048 bits only with --allow-weak, on generation and import")
    func weakRSA() throws {
        let box = try Sandbox()
        let refused = try box.signet("key", "generate", "-t", "rsa1024", "-o", "weak.pem")
        #expect(refused.status == 3)
        #expect(refused.stderr.contains("below the 2048-bit minimum"))
        #expect(!box.exists("weak.pem"))
        #expect(try box.signet("key", "generate", "-t", "rsa1024", "-o", "weak.pem", "--allow-weak").status == 0)
        try box.must("openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024", "-out", "theirs.pem")
        let imported = try box.signet("key", "fingerprint", "theirs.pem")
        #expect(imported.status == 3)
        #expect(imported.stderr.contains("theirs.pem: RSA key of 1024 bits is below the 2048-bit minimum (pass --allow-weak"))
        #expect(try box.signet("key", "fingerprint", "theirs.pem", "--allow-weak").status == 0)
        try box.must("openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:512", "-out", "tiny.pem")
        let tiny = try box.signet("key", "fingerprint", "tiny.pem", "--allow-weak")
        #expect(tiny.status == 3, "512-bit keys are never accepted")
    }

    @Test("outputs are never overwritten without --force, and private outputs are 0600")
    func overwriteProtection() throws {
        let box = try Sandbox()
        try box.write("key.pem", "precious")
        let refused = try box.signet("key", "generate", "-t", "p256", "-o", "key.pem")
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("key.pem: already exists (use --force to overwrite it)"))
        #expect(try box.readText("key.pem") == "precious")
        #expect(try box.signet("key", "generate", "-t", "p256", "-o", "key.pem", "--force").status == 0)
        #expect(try box.mode("key.pem") == 0o600)
        #expect(try box.signet("key", "public", "key.pem", "-o", "pub.pem").status == 0)
        #expect(try box.mode("pub.pem") == 0o644)
        #expect(try box.signet("key", "public", "key.pem", "-o", "pub.pem").status == 2)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: box.folder.path).filter { $0.contains("signet-") }
        #expect(leftovers.isEmpty, "temporary files left behind: \(leftovers)")
    }
}
