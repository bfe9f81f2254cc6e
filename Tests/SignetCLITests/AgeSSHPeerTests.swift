import Foundation
import SignetTestSupport
import Testing

/// `signet encrypt|decrypt` with ssh-keygen's Ed25519 and RSA keys against age and pyrage, both
/// ways: the OpenSSH `.pub` line as the recipient, the OpenSSH private key file (openssh-key-v1)
/// as the identity on both sides.
@Suite("signet encrypt/decrypt: ssh-ed25519 and ssh-rsa recipients against age and pyrage")
struct AgeSSHPeerTests {
    /// ssh-keygen's `-t` for each of age's two SSH recipient types (the stanza is `ssh-<type>`).
    static let keyTypes = ["ed25519", "rsa"]

    /// A failure message for a run whose standard output may be megabytes of binary.
    static func brief(_ result: RunResult) -> String { "exit \(result.status): \(result.stderr)" }

    @Test(
        "ssh-keygen keys: age -d -i KEY opens signet encrypt -r LINE files, signet decrypt -i KEY opens age -R KEY.pub files; 0, 1, 64 KiB, 64 KiB + 1, 1 MiB; binary and armored",
        arguments: AgeSSHPeerTests.keyTypes)
    func withAge(type: String) throws {
        let box = try Sandbox()
        let age = try box.ageTool("age")
        let line = try box.sshKey("id", type: type, bits: type == "rsa" ? 2048 : nil)
        for size in [0, 1, 65536, 65537, 1 << 20] {
            let data = try box.writeRandom("plain-\(size)", size: size)
            for armor in [false, true] {
                let what = "ssh-\(type), \(size) bytes\(armor ? ", armored" : "")"
                let flags = armor ? ["-a"] : []
                let suffix = "\(size)" + (armor ? ".txt" : ".age")

                let encrypted = try box.signet(arguments: ["encrypt"] + flags + ["-r", line, "-o", "s-" + suffix, "plain-\(size)"])
                #expect(encrypted.status == 0, "signet encrypt, \(what): \(encrypted)")
                #expect(encrypted.stdout.isEmpty)
                let written = try box.read("s-" + suffix)
                let expectedStart = armor ? "-----BEGIN AGE ENCRYPTED FILE-----\n" : "age-encryption.org/v1\n-> ssh-\(type) "
                #expect(written.starts(with: Data(expectedStart.utf8)), "\(what): \(String(decoding: written.prefix(60), as: UTF8.self))")
                let opened = try box.age("-d", "-i", "id", "s-" + suffix)
                #expect(opened.status == 0, "age -d, \(what): \(Self.brief(opened))")
                #expect(opened.stdout == data, "age -d, \(what): wrong plaintext")

                let sealed = try box.run(age, flags + ["-R", "id.pub", "-o", "a-" + suffix, "plain-\(size)"], stdin: nil)
                try #require(sealed.status == 0, "age -R, \(what): \(sealed)")
                let decrypted = try box.signet("decrypt", "-i", "id", "-o", "back-" + suffix, "a-" + suffix)
                #expect(decrypted.status == 0, "signet decrypt, \(what): \(decrypted)")
                #expect(decrypted.stdout.isEmpty)
                #expect((try? box.read("back-" + suffix)) == data, "signet decrypt, \(what): wrong or no plaintext")
                if !armor {
                    // One stanza of the same shape each, 64 KiB chunks: the same length.
                    #expect(try box.read("a-" + suffix).count == written.count, "\(what)")
                }
            }
        }
        // Standard input to standard output, with the identity given twice over (a key file and itself).
        let data = try box.writeRandom("plain", size: 100_000)
        let piped = try box.signet("encrypt", "-r", line, stdin: data)
        #expect(piped.status == 0, "\(Self.brief(piped))")
        let unpiped = try box.signet("decrypt", "-i", "id", "-i", "id", stdin: piped.stdout)
        #expect(unpiped.status == 0, "\(Self.brief(unpiped))")
        #expect(unpiped.stdout == data)
        #expect(try box.temporaryLeftovers().isEmpty)
    }

    @Test("pyrage both ways with ssh-keygen keys: ssh.Identity opens signet's files, signet opens ssh.Recipient's", arguments: AgeSSHPeerTests.keyTypes)
    func withPyrage(type: String) throws {
        let box = try Sandbox()
        try box.requirePyrage()
        let line = try box.sshKey("id", type: type, bits: type == "rsa" ? 2048 : nil)
        let data = try box.writeRandom("plain", size: 150_000)
        let binary = try box.signet("encrypt", "-r", line, "-o", "s.age", "plain")
        #expect(binary.status == 0, "\(binary)")
        let armored = try box.signet("encrypt", "-a", "-r", line, "-o", "s.txt", "plain")
        #expect(armored.status == 0, "\(armored)")
        try box.write("empty", Data())
        #expect(try box.signet("encrypt", "-r", line, "-o", "empty.age", "empty").status == 0)

        try box.python(
            """
            import pyrage
            from pyrage import ssh
            data = open("plain", "rb").read()
            identity = ssh.Identity.from_buffer(open("id", "rb").read())
            for name in ("s.age", "s.txt"):
                assert pyrage.decrypt(open(name, "rb").read(), [identity]) == data, name
            assert pyrage.decrypt(open("empty.age", "rb").read(), [identity]) == b"", "empty.age"
            to = ssh.Recipient.from_str(open("id.pub").read().strip())
            open("p.age", "wb").write(pyrage.encrypt(data, [to]))
            open("p.txt", "wb").write(pyrage.encrypt(data, [to], armored=True))
            open("p-empty.age", "wb").write(pyrage.encrypt(b"", [to]))
            """)

        #expect(try box.read("p.age").starts(with: Data("age-encryption.org/v1\n-> ssh-\(type) ".utf8)))
        // The RSA key also as PKCS#8 PEM: the same key in another container opens the same files.
        var identities = ["id"]
        if type == "rsa" {
            try box.pkcs8Copy(of: "id", to: "id.p8")
            identities.append("id.p8")
        }
        for identity in identities {
            for name in ["p.age", "p.txt"] {
                let opened = try box.signet("decrypt", "-i", identity, "-o", "\(name).\(identity).out", name)
                #expect(opened.status == 0, "-i \(identity) \(name): \(opened)")
                #expect((try? box.read("\(name).\(identity).out")) == data, "-i \(identity) \(name): wrong or no plaintext")
            }
            let empty = try box.signet("decrypt", "-i", identity, "p-empty.age")
            #expect(empty.status == 0 && empty.stdout.isEmpty, "-i \(identity) p-empty.age: \(empty)")
        }
    }
}
