import Foundation
import SignetTestSupport
import Testing

/// Passphrases (through a pty for age and for signet's own prompt), passphrase-protected key
/// files, and pyrage both ways.
@Suite("signet encrypt/decrypt: passphrases and pyrage")
struct AgePassphraseCLITests {
    @Test("passphrase: signet encrypt -p opens with age -d at a terminal; age -p files open with signet decrypt --passphrase-file")
    func passphraseWithAge() throws {
        let box = try Sandbox()
        let age = try box.ageTool("age")
        try box.write("pw", AgeCLITests.passphrase + "\n")
        let data = try box.writeRandom("plain", size: 100_000)

        let encrypted = try box.signet("encrypt", "-p", "--passphrase-file", "pw", "-o", "by-signet.age", "plain")
        #expect(encrypted.status == 0, "\(encrypted)")
        let header = String(decoding: try box.read("by-signet.age").prefix(80), as: UTF8.self)
        #expect(header.hasPrefix("age-encryption.org/v1\n-> scrypt "), "\(header)")
        #expect(header.split(separator: "\n")[1].hasSuffix(" 18"), "work factor 2^18, as age: \(header)")
        let opened = try box.throughTerminal(passphraseFile: "pw", [age, "-d", "-o", "by-age.out", "by-signet.age"])
        #expect(opened.status == 0, "\(opened)")
        #expect(try box.read("by-age.out") == data)

        let sealed = try box.throughTerminal(passphraseFile: "pw", [age, "-p", "-o", "by-age.age", "plain"])
        try #require(sealed.status == 0, "\(sealed)")
        let decrypted = try box.signet("decrypt", "--passphrase-file", "pw", "-o", "back", "by-age.age")
        #expect(decrypted.status == 0, "\(decrypted)")
        #expect(try box.read("back") == data)
        let fromEnvironment = try box.signet("decrypt", "by-age.age", environment: ["SIGNET_PASSPHRASE": AgeCLITests.passphrase])
        #expect(fromEnvironment.status == 0 && fromEnvironment.stdout == data, "\(fromEnvironment)")
        let armored = try box.signet("encrypt", "-p", "-a", "plain", environment: ["SIGNET_PASSPHRASE": AgeCLITests.passphrase])
        #expect(armored.status == 0 && armored.out.hasPrefix("-----BEGIN AGE ENCRYPTED FILE-----\n"), "\(armored)")
        try box.write("armored.txt", armored.stdout)
        let openedArmor = try box.throughTerminal(passphraseFile: "pw", [age, "-d", "-o", "armored.out", "armored.txt"])
        #expect(openedArmor.status == 0, "\(openedArmor)")
        #expect(try box.read("armored.out") == data)
    }

    @Test("passphrase at signet's own prompt: encrypt asks twice, decrypt once; both on a terminal")
    func passphrasePrompt() throws {
        let box = try Sandbox()
        try box.write("pw", AgeCLITests.passphrase + "\n")
        let data = try box.writeRandom("plain", size: 1000)
        let encrypted = try box.throughTerminal(passphraseFile: "pw", [SignetBinary.path, "encrypt", "-p", "-o", "p.age", "plain"])
        #expect(encrypted.status == 0, "\(encrypted)")
        #expect(encrypted.stderr.contains("Repeat the passphrase"), "confirmed at the prompt: \(encrypted)")
        let decrypted = try box.throughTerminal(passphraseFile: "pw", [SignetBinary.path, "decrypt", "-o", "back", "p.age"])
        #expect(decrypted.status == 0, "\(decrypted)")
        #expect(try box.read("back") == data)
        #expect(try box.signet("decrypt", "--passphrase-file", "pw", "p.age").stdout == data)
    }

    @Test("passphrase failures: wrong passphrase exit 1 and no file; none to be had exit 4; -i for a passphrase file exit 1")
    func passphraseFailures() throws {
        let box = try Sandbox()
        try box.write("pw", AgeCLITests.passphrase + "\n")
        try box.write("wrong", "not the passphrase\n")
        _ = try box.signetAgeKey("key.txt")
        try box.writeRandom("plain", size: 1000)
        #expect(try box.signet("encrypt", "-p", "--passphrase-file", "pw", "-o", "p.age", "plain").status == 0)

        let wrong = try box.signet("decrypt", "--passphrase-file", "wrong", "-o", "out", "p.age")
        #expect(wrong.status == 1, "\(wrong)")
        #expect(!box.exists("out"))
        let none = try box.signet("decrypt", "-o", "out", "p.age")
        #expect(none.status == 4, "\(none)")
        #expect(none.stderr.contains("--passphrase-file"), "\(none)")
        #expect(!box.exists("out"))
        let withKey = try box.signet("decrypt", "-i", "key.txt", "-o", "out", "p.age")
        #expect(withKey.status == 1, "\(withKey)")
        #expect(!box.exists("out"))
        #expect(try box.temporaryLeftovers().isEmpty)
    }

    @Test("a passphrase-encrypted key file (age -p key.txt) works with signet decrypt -i and signet age recipient")
    func encryptedKeyFile() throws {
        let box = try Sandbox()
        let age = try box.ageTool("age")
        try box.write("pw", AgeCLITests.passphrase + "\n")
        let recipient = try box.signetAgeKey("key.txt")
        let locked = try box.throughTerminal(passphraseFile: "pw", [age, "-p", "-o", "key.txt.age", "key.txt"])
        try #require(locked.status == 0, "\(locked)")
        let data = try box.writeRandom("plain", size: 3000)
        #expect(try box.signet("encrypt", "-r", recipient, "-o", "f.age", "plain").status == 0)

        let decrypted = try box.signet("decrypt", "-i", "key.txt.age", "--passphrase-file", "pw", "f.age")
        #expect(decrypted.status == 0 && decrypted.stdout == data, "\(decrypted)")
        let printed = try box.signet("age", "recipient", "--passphrase-file", "pw", "key.txt.age")
        #expect(printed.status == 0 && printed.out == recipient + "\n", "\(printed)")
        try box.write("wrong", "nope\n")
        #expect(try box.signet("decrypt", "-i", "key.txt.age", "--passphrase-file", "wrong", "f.age").status == 1)
    }

    @Test("pyrage both ways: X25519 binary and armored, and passphrase")
    func pyrage() throws {
        let box = try Sandbox()
        try box.requirePyrage()
        try box.write("pw", AgeCLITests.passphrase + "\n")
        let recipient = try box.signetAgeKey("key.txt")
        let secret = try box.ageSecretKey(in: "key.txt")
        let data = try box.writeRandom("plain", size: 200_000)
        #expect(try box.signet("encrypt", "-r", recipient, "-o", "s.age", "plain").status == 0)
        #expect(try box.signet("encrypt", "-a", "-r", recipient, "-o", "s.txt", "plain").status == 0)
        #expect(try box.signet("encrypt", "-p", "--passphrase-file", "pw", "-o", "sp.age", "plain").status == 0)

        try box.python(
            """
            import sys, pyrage
            secret, recipient = sys.argv[1], sys.argv[2]
            passphrase = open("pw").read().split("\\n")[0]
            data = open("plain", "rb").read()
            identity = pyrage.x25519.Identity.from_str(secret)
            for name in ("s.age", "s.txt"):
                assert pyrage.decrypt(open(name, "rb").read(), [identity]) == data, name
            assert pyrage.passphrase.decrypt(open("sp.age", "rb").read(), passphrase) == data, "sp.age"
            to = pyrage.x25519.Recipient.from_str(recipient)
            open("p.age", "wb").write(pyrage.encrypt(data, [to]))
            open("p.txt", "wb").write(pyrage.encrypt(data, [to], armored=True))
            open("pp.age", "wb").write(pyrage.passphrase.encrypt(data, passphrase))
            """, secret, recipient)

        for name in ["p.age", "p.txt"] {
            let opened = try box.signet("decrypt", "-i", "key.txt", name)
            #expect(opened.status == 0 && opened.stdout == data, "\(name): \(opened)")
        }
        let opened = try box.signet("decrypt", "--passphrase-file", "pw", "pp.age")
        #expect(opened.status == 0 && opened.stdout == data, "pp.age: \(opened)")
    }
}
