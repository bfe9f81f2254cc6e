import Foundation
import SignetTestSupport
import Testing

/// age's ssh-rsa and ssh-ed25519 recipients in `signet encrypt|decrypt|age recipient`: recipients
/// files mixing age1 keys and authorized_keys lines, keys in Signet's own formats and in the
/// vault, and what is refused (exit 1 for a wrong key or an altered file, 3 for unsupported or
/// malformed keys and stanzas), checked against age where it can take part.
@Suite("signet encrypt/decrypt/age: ssh-rsa and ssh-ed25519 keys")
struct AgeSSHCLITests {
    /// The stanza types of an age file's header, in order.
    static func stanzaTypes(_ box: Sandbox, _ name: String) throws -> [String] {
        let bytes = Array(try box.read(name))
        let end = try #require(AgeCLITests.range(of: "\n--- ", in: bytes), "no header MAC line in \(name)")
        return String(decoding: bytes[..<end.lowerBound], as: UTF8.self).split(separator: "\n")
            .filter { $0.hasPrefix("-> ") }.map { String($0.split(separator: " ")[1]) }
    }

    @Test("one -R file: an age1 key, and ssh-ed25519 and ssh-rsa authorized_keys lines with options and comments; each key opens it in signet and in age")
    func mixedRecipientsFile() throws {
        let box = try Sandbox()
        let age1 = try box.signetAgeKey("age.txt")
        let ed = try box.sshKey("id_ed25519", type: "ed25519")
        let rsa = try box.sshKey("id_rsa", type: "rsa", bits: 2048)
        try box.pkcs8Copy(of: "id_rsa", to: "id_rsa.p8")
        let data = try box.writeRandom("plain", size: 70_000)
        let list = """
            # the team: age1 keys and authorized_keys lines

            \(age1)
            no-pty,command="echo hi" \(ed)
            # the RSA key, with options, and the comment ssh-keygen gave it
            from="10.0.0.1",no-agent-forwarding \(rsa)

            """
        try box.write("team", list)

        let encrypted = try box.signet("encrypt", "-R", "team", "-o", "team.age", "plain")
        #expect(encrypted.status == 0, "\(encrypted)")
        #expect(try Self.stanzaTypes(box, "team.age") == ["X25519", "ssh-ed25519", "ssh-rsa"])
        for key in ["age.txt", "id_ed25519", "id_rsa", "id_rsa.p8"] {
            let opened = try box.signet("decrypt", "-i", key, "-o", "out-\(key)", "team.age")
            #expect(opened.status == 0, "signet -i \(key): \(opened)")
            #expect((try? box.read("out-\(key)")) == data, "signet -i \(key): wrong or no plaintext")
        }
        for key in ["age.txt", "id_ed25519", "id_rsa"] {
            let opened = try box.age("-d", "-i", key, "team.age")
            #expect(opened.status == 0, "age -i \(key): exit \(opened.status) \(opened.stderr)")
            #expect(opened.stdout == data, "age -i \(key): wrong plaintext")
        }
        // The same list from standard input, armored.
        let piped = try box.signet("encrypt", "-a", "-R", "-", "-o", "team.txt", "plain", stdin: Data(list.utf8))
        #expect(piped.status == 0, "\(piped)")
        let opened = try box.age("-d", "-i", "id_rsa", "team.txt")
        #expect(opened.status == 0 && opened.stdout == data, "age -i id_rsa team.txt: exit \(opened.status) \(opened.stderr)")
    }

    @Test("signet age recipient: the .pub line's type and key for OpenSSH Ed25519 and RSA keys and a PKCS#8 RSA key; the age1 for an age key file")
    func recipientLines() throws {
        let box = try Sandbox()
        let ed = try box.sshKey("id_ed25519", type: "ed25519")
        let rsa = try box.sshKey("id_rsa", type: "rsa", bits: 3072)
        try box.pkcs8Copy(of: "id_rsa", to: "id_rsa.p8")
        let age1 = try box.signetAgeKey("age.txt")
        for (key, expected) in [("id_ed25519", ed), ("id_rsa", rsa), ("id_rsa.p8", rsa), ("age.txt", age1)] {
            let printed = try box.signet("age", "recipient", key)
            #expect(printed.status == 0, "\(key): \(printed)")
            #expect(printed.out == Sandbox.keyFields(expected) + "\n", "\(key)")
        }
        let fromStdin = try box.signet("age", "recipient", stdin: try box.read("id_rsa.p8"))
        #expect(fromStdin.status == 0 && fromStdin.out == Sandbox.keyFields(rsa) + "\n", "\(fromStdin)")
        // What it prints is a recipient age takes, for a file signet opens with the key.
        let data = try box.writeRandom("plain", size: 1000)
        let sealed = try box.age("-r", Sandbox.keyFields(rsa), "-o", "f.age", "plain")
        try #require(sealed.status == 0, "\(sealed)")
        let opened = try box.signet("decrypt", "-i", "id_rsa.p8", "f.age")
        #expect(opened.status == 0 && opened.stdout == data, "\(opened)")
    }

    @Test(
        "signet key generate keys (PKCS#8): key public --format openssh as -r, the PEM public key as -R, age -r LINE; decrypt -i KEY",
        arguments: ["ed25519", "rsa2048"])
    func signetKeys(type: String) throws {
        let box = try Sandbox()
        #expect(try box.signet("key", "generate", "-t", type, "-o", "k.pem").status == 0)
        let publicKey = try box.signet("key", "public", "k.pem", "--format", "openssh")
        try #require(publicKey.status == 0, "\(publicKey)")
        let line = publicKey.out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(line.hasPrefix(type == "rsa2048" ? "ssh-rsa AAAA" : "ssh-ed25519 AAAA"), "\(line)")
        #expect(try box.signet("age", "recipient", "k.pem").out == Sandbox.keyFields(line) + "\n")
        #expect(try box.signet("key", "public", "k.pem", "-o", "k.pub.pem").status == 0)
        let data = try box.writeRandom("plain", size: 65537)

        #expect(try box.signet("encrypt", "-r", line, "-o", "line.age", "plain").status == 0)
        #expect(try box.signet("encrypt", "-R", "k.pub.pem", "-o", "pem.age", "plain").status == 0)
        #expect(try box.age("-r", line, "-o", "age.age", "plain").status == 0)
        #expect(try Self.stanzaTypes(box, "pem.age") == [type == "rsa2048" ? "ssh-rsa" : "ssh-ed25519"])
        for name in ["line.age", "pem.age", "age.age"] {
            let opened = try box.signet("decrypt", "-i", "k.pem", "-o", "\(name).out", name)
            #expect(opened.status == 0, "\(name): \(opened)")
            #expect((try? box.read("\(name).out")) == data, "\(name): wrong or no plaintext")
        }
        if type == "rsa2048" {
            // age reads PKCS#8 RSA keys (not Ed25519 ones): it opens signet's file with the same key.
            let opened = try box.age("-d", "-i", "k.pem", "line.age")
            #expect(opened.status == 0 && opened.stdout == data, "age -d -i k.pem: exit \(opened.status) \(opened.stderr)")
        }
    }

    @Test("an encrypted PKCS#8 Ed25519 key: the passphrase from SIGNET_PASSPHRASE or --passphrase-file; none is exit 4, a wrong one exit 1")
    func encryptedKey() throws {
        let box = try Sandbox()
        let env = ["SIGNET_PASSPHRASE": AgeCLITests.passphrase]
        try box.write("pw", AgeCLITests.passphrase + "\n")
        try box.write("wrong", "not the passphrase\n")
        #expect(try box.signet("key", "generate", "-t", "ed25519", "-o", "k.pem", "--encrypt", "--passphrase-file", "pw").status == 0)
        #expect(try box.readText("k.pem").hasPrefix("-----BEGIN ENCRYPTED PRIVATE KEY-----\n"))
        let printed = try box.signet("age", "recipient", "k.pem", environment: env)
        try #require(printed.status == 0, "\(printed)")
        let line = printed.out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(line.hasPrefix("ssh-ed25519 AAAA"), "\(line)")
        let data = try box.writeRandom("plain", size: 5000)
        #expect(try box.signet("encrypt", "-r", line, "-o", "f.age", "plain").status == 0)
        #expect(try box.age("-r", line, "-o", "age.age", "plain").status == 0)

        for name in ["f.age", "age.age"] {
            let opened = try box.signet("decrypt", "-i", "k.pem", name, environment: env)
            #expect(opened.status == 0 && opened.stdout == data, "\(name): \(opened)")
        }
        let fromFile = try box.signet("decrypt", "-i", "k.pem", "--passphrase-file", "pw", "f.age")
        #expect(fromFile.status == 0 && fromFile.stdout == data, "\(fromFile)")
        let none = try box.signet("decrypt", "-i", "k.pem", "-o", "out", "f.age")
        #expect(none.status == 4, "\(none)")
        #expect(!box.exists("out"))
        let wrong = try box.signet("decrypt", "-i", "k.pem", "--passphrase-file", "wrong", "-o", "out", "f.age")
        #expect(wrong.status == 1, "\(wrong)")
        #expect(!box.exists("out"))
        #expect(try box.temporaryLeftovers().isEmpty)
    }

    @Test("vault keys (Ed25519, RSA): -r vault:S/A and -i vault:S/A; age recipient prints key public's line; age encrypts to it")
    func vaultKeys() throws {
        let (box, vault) = try VaultCommandTests.sandboxWithVault()
        let env = VaultCommandTests.env
        let data = try box.writeRandom("plain", size: 100_000)
        for (account, type) in [("ed", "ed25519"), ("rsa", "rsa2048")] {
            let reference = "vault:S/\(account)"
            #expect(try box.vaultVerb(vault, "generate", "S", account, "-t", type).status == 0)
            let printed = try box.signet("age", "recipient", reference, "--vault", vault, environment: env)
            let publicKey = try box.signet("key", "public", reference, "--format", "openssh", "--vault", vault, environment: env)
            #expect(printed.status == 0 && publicKey.status == 0, "\(printed) \(publicKey)")
            #expect(printed.out == Sandbox.keyFields(publicKey.out.trimmingCharacters(in: .whitespacesAndNewlines)) + "\n")
            let line = printed.out.trimmingCharacters(in: .whitespacesAndNewlines)

            let encrypted = try box.signet("encrypt", "-r", reference, "--vault", vault, "-o", "\(account).age", "plain", environment: env)
            #expect(encrypted.status == 0, "\(encrypted)")
            #expect(try box.age("-r", line, "-o", "\(account)-age.age", "plain").status == 0)
            for name in ["\(account).age", "\(account)-age.age"] {
                let opened = try box.signet("decrypt", "-i", reference, "--vault", vault, "-o", "\(name).out", name, environment: env)
                #expect(opened.status == 0, "\(name): \(opened)")
                #expect((try? box.read("\(name).out")) == data, "\(name): wrong or no plaintext")
            }
            // Without the vault's passphrase: exit 4, nothing written.
            let locked = try box.signet("decrypt", "-i", reference, "--vault", vault, "-o", "locked.out", "\(account).age")
            #expect(locked.status == 4, "\(locked)")
            #expect(!box.exists("locked.out"))
        }
        // The RSA key exported as PKCS#8 opens signet's file in age.
        #expect(try box.vaultVerb(vault, "export", "S", "rsa", "-o", "rsa.pem").status == 0)
        let opened = try box.age("-d", "-i", "rsa.pem", "rsa.age")
        #expect(opened.status == 0 && opened.stdout == data, "age -d -i rsa.pem: exit \(opened.status) \(opened.stderr)")
    }

    @Test("a wrong key (Ed25519 in three formats, RSA) is exit 1, 'no identity matches', and no output file")
    func wrongKey() throws {
        let box = try Sandbox()
        let ed = try box.sshKey("id_ed25519", type: "ed25519")
        let rsa = try box.sshKey("id_rsa", type: "rsa", bits: 2048)
        _ = try box.sshKey("other_ed25519", type: "ed25519")
        _ = try box.sshKey("other_rsa", type: "rsa", bits: 2048)
        try box.pkcs8Copy(of: "other_rsa", to: "other_rsa.p8")
        #expect(try box.signet("key", "generate", "-t", "ed25519", "-o", "other.pem").status == 0)
        try box.writeRandom("plain", size: 1000)
        #expect(try box.signet("encrypt", "-r", ed, "-o", "ed.age", "plain").status == 0)
        #expect(try box.signet("encrypt", "-r", rsa, "-o", "rsa.age", "plain").status == 0)

        for (name, key) in [("ed.age", "other_ed25519"), ("ed.age", "other.pem"), ("ed.age", "other_rsa.p8"), ("rsa.age", "other_rsa"),
                            ("rsa.age", "other_rsa.p8"), ("rsa.age", "other.pem")] {
            let result = try box.signet("decrypt", "-i", key, "-o", "out", name)
            #expect(result.status == 1, "\(name) -i \(key): \(result)")
            #expect(result.stderr.contains("no identity matches"), "\(name) -i \(key): \(result)")
            #expect(result.stdout.isEmpty)
            #expect(!box.exists("out"), "\(name) -i \(key)")
        }
        for (name, key) in [("ed.age", "other_ed25519"), ("rsa.age", "other_rsa")] {
            #expect(try box.age("-d", "-i", key, name).status != 0, "age refuses \(name) -i \(key) too")
        }
        #expect(try box.temporaryLeftovers().isEmpty)
    }

    @Test("unsupported or malformed recipients (ECDSA, RSA 1024, sk-ssh-ed25519, a cut ssh-ed25519 line) by -r and -R: exit 3, no output file")
    func refusedRecipients() throws {
        let box = try Sandbox()
        let good = try box.sshKey("good", type: "ed25519")
        let ecdsa = try box.sshKey("ecdsa", type: "ecdsa", bits: 256)
        let small = try box.sshKey("rsa1024", type: "rsa", bits: 1024)
        try box.writeRandom("plain", size: 100)
        let cases = [
            (ecdsa, "not supported"), (small, "too small"), (Sandbox.securityKeyLine(), "not supported"), ("ssh-ed25519 AAAA", "ssh-ed25519"),
        ]
        for (line, fragment) in cases {
            try box.write("list", "\(good)\n\(line)\n")
            for arguments in [["-r", line], ["-r", good, "-r", line], ["-R", "list"]] {
                let result = try box.signet(arguments: ["encrypt"] + arguments + ["-o", "x.age", "plain"])
                #expect(result.status == 3, "\(arguments): \(result)")
                #expect(result.stderr.contains(fragment), "\(arguments): \(result)")
                #expect(!box.exists("x.age"), "\(arguments)")
            }
        }
        // The private halves as identities: exit 3 too. An ECDSA key is no age identity at all;
        // a 1024-bit RSA key is refused unless --allow-weak (which decrypt has) says otherwise.
        try box.pkcs8Copy(of: "ecdsa", to: "ecdsa.p8")
        try box.pkcs8Copy(of: "rsa1024", to: "rsa1024.p8")
        #expect(try box.signet("encrypt", "-r", good, "-o", "f.age", "plain").status == 0)
        let ecdsaIdentity = try box.signet("decrypt", "-i", "ecdsa.p8", "-o", "out", "f.age")
        #expect(ecdsaIdentity.status == 3, "\(ecdsaIdentity)")
        #expect(ecdsaIdentity.stderr.contains("a P-256 key as an identity") && !ecdsaIdentity.stderr.contains("--allow-weak"), "\(ecdsaIdentity)")
        let weak = try box.signet("decrypt", "-i", "rsa1024.p8", "-o", "out", "f.age")
        #expect(weak.status == 3 && weak.stderr.contains("--allow-weak"), "\(weak)")
        let allowed = try box.signet("decrypt", "-i", "rsa1024.p8", "--allow-weak", "-o", "out", "f.age")
        #expect(allowed.status == 1 && allowed.stderr.contains("no identity matches"), "\(allowed)")
        #expect(!box.exists("out"))
        // age recipient has no --allow-weak: its message says why instead.
        let recipient = try box.signet("age", "recipient", "rsa1024.p8")
        #expect(recipient.status == 3 && recipient.stderr.contains("too small") && !recipient.stderr.contains("--allow-weak"), "\(recipient)")
    }

    @Test("an altered ssh-rsa stanza body is exit 1, an ssh-ed25519 stanza with 3 arguments exit 3 (not an age file); no output file")
    func alteredStanzas() throws {
        let box = try Sandbox()
        let rsa = try box.sshKey("id_rsa", type: "rsa", bits: 2048)
        try box.pkcs8Copy(of: "id_rsa", to: "id_rsa.p8")
        #expect(try box.signet("key", "generate", "-t", "ed25519", "-o", "k.pem").status == 0)
        let ed = try box.signet("age", "recipient", "k.pem").out.trimmingCharacters(in: .whitespacesAndNewlines)
        let data = try box.writeRandom("plain", size: 3000)
        #expect(try box.signet("encrypt", "-r", rsa, "-o", "rsa.age", "plain").status == 0)
        #expect(try box.signet("encrypt", "-r", ed, "-o", "ed.age", "plain").status == 0)
        // Both open as written.
        #expect(try box.signet("decrypt", "-i", "id_rsa.p8", "rsa.age").stdout == data)
        #expect(try box.signet("decrypt", "-i", "k.pem", "ed.age").stdout == data)

        // The RSA-OAEP ciphertext: the 11th letter of the first of its 64-column body lines.
        let rsaBytes = Array(try box.read("rsa.age"))
        let rsaStanza = try #require(AgeCLITests.range(of: "\n-> ssh-rsa ", in: rsaBytes))
        let bodyStart = try #require(rsaBytes[rsaStanza.upperBound...].firstIndex(of: UInt8(ascii: "\n"))) + 1
        try box.replaceLetter("rsa.age", at: bodyStart + 10, to: "rsa-altered.age")
        for key in ["id_rsa.p8", "id_rsa"] {
            let result = try box.signet("decrypt", "-i", key, "-o", "out", "rsa-altered.age")
            #expect(result.status == 1 && result.stderr.contains("was altered"), "-i \(key): \(result)")
            #expect(result.stdout.isEmpty)
            #expect(!box.exists("out"), "-i \(key)")
        }
        #expect(try box.age("-d", "-i", "id_rsa", "rsa-altered.age").status != 0, "age refuses it too")

        // A third argument on the ssh-ed25519 line.
        var edBytes = Array(try box.read("ed.age"))
        let edStanza = try #require(AgeCLITests.range(of: "\n-> ssh-ed25519 ", in: edBytes))
        let lineEnd = try #require(edBytes[edStanza.upperBound...].firstIndex(of: UInt8(ascii: "\n")))
        edBytes.insert(contentsOf: Array(" extra".utf8), at: lineEnd)
        try box.write("ed-3.age", Data(edBytes))
        let result = try box.signet("decrypt", "-i", "k.pem", "-o", "out", "ed-3.age")
        #expect(result.status == 3, "\(result)")
        #expect(result.stderr.contains("not an age file"), "\(result)")
        #expect(!box.exists("out"))
        #expect(try box.temporaryLeftovers().isEmpty)
    }
}
