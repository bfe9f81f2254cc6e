import Foundation
import SignetTestSupport
import Testing

/// `signet encrypt|decrypt` and `signet age keygen|recipient` against age, age-keygen and pyrage.
@Suite("signet encrypt/decrypt/age: interop with age and pyrage")
struct AgeCLITests {
    static let passphrase = "correct horse battery staple"

    @Test(
        "signet age keygen keys: age -d opens signet encrypt -r files, signet decrypt -i opens age -r files, same sizes",
        arguments: [0, 1, 65536, 65537, 1 << 20])
    func x25519BothWays(size: Int) throws {
        let box = try Sandbox()
        let recipient = try box.signetAgeKey("key.txt")
        let data = try box.writeRandom("plain", size: size)

        let encrypted = try box.signet("encrypt", "-r", recipient, "-o", "by-signet.age", "plain")
        #expect(encrypted.status == 0, "\(encrypted)")
        #expect(encrypted.stdout.isEmpty)
        #expect(try box.mode("by-signet.age") == 0o644)
        let opened = try box.age("-d", "-i", "key.txt", "by-signet.age")
        #expect(opened.status == 0, "\(opened)")
        #expect(opened.stdout == data)

        let sealed = try box.age("-r", recipient, "-o", "by-age.age", "plain")
        try #require(sealed.status == 0, "\(sealed)")
        let decrypted = try box.signet("decrypt", "-i", "key.txt", "-o", "back", "by-age.age")
        #expect(decrypted.status == 0, "\(decrypted)")
        #expect(try box.read("back") == data)
        #expect(try box.mode("back") == 0o600, "decrypted output is private")
        // One X25519 stanza each, 64 KiB chunks: the two files have the same length.
        #expect(try box.read("by-signet.age").count == box.read("by-age.age").count)

        // Streams: standard input to standard output, both ways.
        let piped = try box.signet("encrypt", "-r", recipient, stdin: data)
        #expect(piped.status == 0, "\(piped)")
        let unpiped = try box.signet("decrypt", "-i", "key.txt", stdin: piped.stdout)
        #expect(unpiped.status == 0, "\(unpiped)")
        #expect(unpiped.stdout == data)
        #expect(try box.temporaryLeftovers().isEmpty)
    }

    @Test("armor both ways: age -a files decrypt with signet, signet encrypt -a files with age")
    func armor() throws {
        let box = try Sandbox()
        let recipient = try box.signetAgeKey("key.txt")
        let data = try box.writeRandom("plain", size: 100_000)

        #expect(try box.age("-a", "-r", recipient, "-o", "by-age.txt", "plain").status == 0)
        let decrypted = try box.signet("decrypt", "-i", "key.txt", "-o", "back", "by-age.txt")
        #expect(decrypted.status == 0, "\(decrypted)")
        #expect(try box.read("back") == data)

        let armored = try box.signet("encrypt", "-a", "-r", recipient, "plain")
        #expect(armored.status == 0, "\(armored)")
        #expect(armored.out.hasPrefix("-----BEGIN AGE ENCRYPTED FILE-----\n"), "\(armored.out.prefix(80))")
        #expect(armored.out.hasSuffix("-----END AGE ENCRYPTED FILE-----\n"))
        let opened = try box.age("-d", "-i", "key.txt", stdin: armored.stdout)
        #expect(opened.status == 0, "\(opened)")
        #expect(opened.stdout == data)
    }

    @Test("several recipients (a signet key and an age-keygen key): each key opens the file, in both tools")
    func severalRecipients() throws {
        let box = try Sandbox()
        let mine = try box.signetAgeKey("mine.txt")
        let theirs = try box.ageToolKey("theirs.txt")
        _ = try box.signetAgeKey("other.txt")
        let data = try box.writeRandom("plain", size: 70_000)

        let encrypted = try box.signet("encrypt", "-r", mine, "-r", theirs, "-o", "both.age", "plain")
        #expect(encrypted.status == 0, "\(encrypted)")
        for key in ["mine.txt", "theirs.txt"] {
            let byAge = try box.age("-d", "-i", key, "both.age")
            #expect(byAge.status == 0 && byAge.stdout == data, "age -i \(key): \(byAge)")
            let bySignet = try box.signet("decrypt", "-i", key, "both.age")
            #expect(bySignet.status == 0 && bySignet.stdout == data, "signet -i \(key): \(bySignet)")
        }
        #expect(try box.age("-r", mine, "-r", theirs, "-o", "by-age.age", "plain").status == 0)
        for key in ["mine.txt", "theirs.txt"] {
            let bySignet = try box.signet("decrypt", "-i", key, "by-age.age")
            #expect(bySignet.status == 0 && bySignet.stdout == data, "signet -i \(key): \(bySignet)")
        }
        // Several -i: one that matches is enough.
        let several = try box.signet("decrypt", "-i", "other.txt", "-i", "theirs.txt", "by-age.age")
        #expect(several.status == 0 && several.stdout == data, "\(several)")
    }

    @Test("-R recipients files with comments and blank lines, from a file and from standard input; age reads the same file")
    func recipientsFile() throws {
        let box = try Sandbox()
        let mine = try box.signetAgeKey("mine.txt")
        let theirs = try box.ageToolKey("theirs.txt")
        let data = try box.writeRandom("plain", size: 5_000)
        let list = "# the team\n\n# signet's key\n\(mine)\n\n# age-keygen's key\n\(theirs)\n"
        try box.write("team.txt", list)

        let encrypted = try box.signet("encrypt", "-R", "team.txt", "-o", "team.age", "plain")
        #expect(encrypted.status == 0, "\(encrypted)")
        let byAge = try box.age("-d", "-i", "theirs.txt", "team.age")
        #expect(byAge.status == 0 && byAge.stdout == data, "\(byAge)")
        let bySignet = try box.signet("decrypt", "-i", "mine.txt", "team.age")
        #expect(bySignet.status == 0 && bySignet.stdout == data, "\(bySignet)")

        let fromStdin = try box.signet("encrypt", "-R", "-", "-o", "stdin.age", "plain", stdin: Data(list.utf8))
        #expect(fromStdin.status == 0, "\(fromStdin)")
        #expect(try box.age("-d", "-i", "theirs.txt", "stdin.age").stdout == data)

        #expect(try box.age("-R", "team.txt", "-o", "by-age.age", "plain").status == 0)
        let opened = try box.signet("decrypt", "-i", "mine.txt", "by-age.age")
        #expect(opened.status == 0 && opened.stdout == data, "\(opened)")

        // -r and -R together.
        let other = try box.signetAgeKey("other.txt")
        let mixed = try box.signet("encrypt", "-r", other, "-R", "team.txt", "-o", "mixed.age", "plain")
        #expect(mixed.status == 0, "\(mixed)")
        #expect(try box.signet("decrypt", "-i", "other.txt", "mixed.age").stdout == data)
        #expect(try box.age("-d", "-i", "theirs.txt", "mixed.age").stdout == data)
    }

    @Test("signet age keygen writes age-keygen's format, 0600, announces the key, and refuses to overwrite")
    func keygen() throws {
        let box = try Sandbox()
        let generated = try box.signet("age", "keygen", "-o", "key.txt")
        #expect(generated.status == 0, "\(generated)")
        let recipient = try Sandbox.announcedRecipient(generated)
        #expect(generated.stderr == "Public key: \(recipient)\n")
        #expect(try box.mode("key.txt") == 0o600)
        let lines = try box.readText("key.txt").split(separator: "\n")
        #expect(lines.count == 3, "\(lines)")
        #expect(lines.first?.hasPrefix("# created: ") == true)
        #expect(lines.contains { $0 == "# public key: \(recipient)" })
        #expect(lines.last?.hasPrefix("AGE-SECRET-KEY-1") == true)

        let before = try box.read("key.txt")
        let again = try box.signet("age", "keygen", "-o", "key.txt")
        #expect(again.status == 2, "\(again)")
        #expect(try box.read("key.txt") == before)
        #expect(try box.signet("age", "keygen", "-o", "key.txt", "--force").status == 0)
        #expect(try box.read("key.txt") != before)

        let toStdout = try box.signet("age", "keygen")
        #expect(toStdout.status == 0, "\(toStdout)")
        #expect(toStdout.out.contains("\nAGE-SECRET-KEY-1"))
        let announced = try Sandbox.announcedRecipient(toStdout)
        #expect(toStdout.out.contains("# public key: \(announced)\n"))
        let quiet = try box.signet("age", "keygen", "-q")
        #expect(quiet.status == 0 && quiet.stderr.isEmpty, "\(quiet)")
    }

    @Test("signet age recipient prints what age-keygen -y prints, for either tool's keys, several keys, and standard input")
    func recipient() throws {
        let box = try Sandbox()
        _ = try box.signetAgeKey("mine.txt")
        _ = try box.ageToolKey("theirs.txt")
        try box.write("both.txt", try box.readText("mine.txt") + "\n" + box.readText("theirs.txt"))
        for name in ["mine.txt", "theirs.txt", "both.txt"] {
            let expected = try box.ageKeygen("-y", name)
            try #require(expected.status == 0, "\(expected)")
            let ours = try box.signet("age", "recipient", name)
            #expect(ours.status == 0, "\(ours)")
            #expect(ours.out == expected.out, "\(name)")
        }
        #expect(try box.signet("age", "recipient", "both.txt").out.split(separator: "\n").count == 2)
        let fromStdin = try box.signet("age", "recipient", stdin: try box.read("theirs.txt"))
        let expected = try box.ageKeygen("-y", "theirs.txt")
        #expect(fromStdin.status == 0 && fromStdin.out == expected.out, "\(fromStdin)")
    }

    @Test("a wrong key, or none for an X25519 file, is exit 1 with no output file and a hint at -i")
    func wrongIdentity() throws {
        let box = try Sandbox()
        let right = try box.signetAgeKey("right.txt")
        _ = try box.signetAgeKey("wrong.txt")
        try box.writeRandom("plain", size: 1000)
        #expect(try box.signet("encrypt", "-r", right, "-o", "f.age", "plain").status == 0)

        let wrong = try box.signet("decrypt", "-i", "wrong.txt", "-o", "out", "f.age")
        #expect(wrong.status == 1, "\(wrong)")
        #expect(wrong.stderr.contains("-i FILE"), "\(wrong)")
        #expect(!box.exists("out"))
        // Without -i no passphrase is asked for (that would be exit 4 here, with no terminal).
        let none = try box.signet("decrypt", "-o", "out", "f.age")
        #expect(none.status == 1, "\(none)")
        #expect(!box.exists("out"))
        #expect(try box.temporaryLeftovers().isEmpty)
    }

    @Test("truncated files are exit 1, leave no output file, and never touch an existing one (exit 2 without --force)")
    func truncated() throws {
        let box = try Sandbox()
        let recipient = try box.signetAgeKey("key.txt")
        let data = try box.writeRandom("plain", size: 1 << 20)
        #expect(try box.signet("encrypt", "-r", recipient, "-o", "f.age", "plain").status == 0)
        let whole = Array(try box.read("f.age"))
        try box.write("cut.age", Data(whole.prefix(whole.count - 1000)))
        // Cut exactly after two whole chunks: every byte left authenticates, but the last chunk is missing.
        let macLine = try #require(Self.range(of: "\n--- ", in: whole))
        let headerEnd = try #require(whole[macLine.upperBound...].firstIndex(of: UInt8(ascii: "\n"))) + 1
        try box.write("boundary.age", Data(whole.prefix(headerEnd + 16 + 2 * (65536 + 16))))

        for name in ["cut.age", "boundary.age"] {
            let result = try box.signet("decrypt", "-i", "key.txt", "-o", "out", name)
            #expect(result.status == 1, "\(name): \(result)")
            #expect(!box.exists("out"), "\(name)")
            #expect(try box.age("-d", "-i", "key.txt", name).status != 0, "age refuses \(name) too")
        }

        try box.write("existing", "keep me\n")
        let refused = try box.signet("decrypt", "-i", "key.txt", "-o", "existing", "cut.age")
        #expect(refused.status == 2, "\(refused)")
        #expect(try box.readText("existing") == "keep me\n")
        let forced = try box.signet("decrypt", "--force", "-i", "key.txt", "-o", "existing", "cut.age")
        #expect(forced.status == 1, "\(forced)")
        #expect(try box.readText("existing") == "keep me\n")
        #expect(try box.temporaryLeftovers().isEmpty)
        let replaced = try box.signet("decrypt", "--force", "-i", "key.txt", "-o", "existing", "f.age")
        #expect(replaced.status == 0, "\(replaced)")
        #expect(try box.read("existing") == data)
    }

    @Test("tampering: the header MAC, a recipient's share, a payload bit: exit 1 and no output")
    func tampered() throws {
        let box = try Sandbox()
        let recipient = try box.signetAgeKey("key.txt")
        try box.writeRandom("plain", size: 100_000)
        #expect(try box.signet("encrypt", "-r", recipient, "-o", "f.age", "plain").status == 0)
        let whole = Array(try box.read("f.age"))
        let macLine = try #require(Self.range(of: "\n--- ", in: whole))
        try box.replaceLetter("f.age", at: macLine.upperBound + 10, to: "mac.age")
        let stanza = try #require(Self.range(of: "-> X25519 ", in: whole))
        try box.replaceLetter("f.age", at: stanza.upperBound + 10, to: "share.age")
        var flipped = whole
        flipped[flipped.count - 1] ^= 0x01
        try box.write("payload.age", Data(flipped))

        for name in ["mac.age", "share.age", "payload.age"] {
            let result = try box.signet("decrypt", "-i", "key.txt", "-o", "out", name)
            #expect(result.status == 1, "\(name): \(result)")
            #expect(!box.exists("out"), "\(name)")
            #expect(try box.age("-d", "-i", "key.txt", name).status != 0, "age refuses \(name) too")
        }
        let mac = try box.signet("decrypt", "-i", "key.txt", "mac.age")
        #expect(mac.stderr.contains("MAC"), "\(mac)")
        #expect(mac.stdout.isEmpty)
    }

    @Test("input that is not age is exit 3: text, random bytes, broken armor")
    func garbage() throws {
        let box = try Sandbox()
        _ = try box.signetAgeKey("key.txt")
        try box.write("text.age", "this is not an age file\n")
        try box.writeRandom("random.age", size: 1000)
        try box.write("armor.age", "-----BEGIN AGE ENCRYPTED FILE-----\n!!!!\n-----END AGE ENCRYPTED FILE-----\n")
        for name in ["text.age", "random.age", "armor.age"] {
            let withKey = try box.signet("decrypt", "-i", "key.txt", "-o", "out", name)
            #expect(withKey.status == 3, "\(name): \(withKey)")
            let withoutKey = try box.signet("decrypt", "-o", "out", name)
            #expect(withoutKey.status == 3, "\(name): \(withoutKey)")
            #expect(!box.exists("out"))
        }
        // A key file that is not one.
        try box.write("notakey.txt", "AGE-SECRET-KEY-1NOTAKEY\n")
        #expect(try box.signet("decrypt", "-i", "notakey.txt", "text.age").status == 3)
    }

    @Test("usage: -p with -r or -R, no recipient, a bad -r, binary to a terminal, an existing -o: exit 2 (a bad key: 3)")
    func usage() throws {
        let box = try Sandbox()
        let recipient = try box.signetAgeKey("key.txt")
        try box.write("pw", Self.passphrase + "\n")
        try box.write("team.txt", recipient + "\n")
        try box.writeRandom("plain", size: 100)

        let mixed = try box.signet("encrypt", "-p", "--passphrase-file", "pw", "-r", recipient, "plain")
        #expect(mixed.status == 2, "\(mixed)")
        #expect(mixed.stdout.isEmpty)
        #expect(try box.signet("encrypt", "-p", "--passphrase-file", "pw", "-R", "team.txt", "plain").status == 2)
        let nobody = try box.signet("encrypt", "-o", "x.age", "plain")
        #expect(nobody.status == 2, "\(nobody)")
        #expect(!box.exists("x.age"))
        #expect(try box.signet("encrypt", "-r", "age1notarecipient", "-o", "x.age", "plain").status == 3)
        #expect(!box.exists("x.age"))

        try box.write("existing.age", "old\n")
        let exists = try box.signet("encrypt", "-r", recipient, "-o", "existing.age", "plain")
        #expect(exists.status == 2, "\(exists)")
        #expect(try box.readText("existing.age") == "old\n")
        #expect(try box.signet("encrypt", "-r", recipient, "-o", "existing.age", "--force", "plain").status == 0)
        #expect(try box.readText("existing.age") != "old\n")

        let terminal = try box.throughTerminal(passphraseFile: "pw", [SignetBinary.path, "encrypt", "-r", recipient, "plain"])
        #expect(terminal.status == 2, "\(terminal)")
        #expect(terminal.stderr.contains("terminal"), "\(terminal)")
        let armored = try box.throughTerminal(passphraseFile: "pw", [SignetBinary.path, "encrypt", "-a", "-r", recipient, "plain"])
        #expect(armored.status == 0 && armored.stderr.contains("-----BEGIN AGE ENCRYPTED FILE-----"), "\(armored)")
    }

    /// The first occurrence of `text` in `bytes`.
    static func range(of text: String, in bytes: [UInt8]) -> Range<Int>? {
        let needle = Array(text.utf8)
        guard bytes.count >= needle.count else { return nil }
        for start in 0...(bytes.count - needle.count) where bytes[start..<(start + needle.count)].elementsEqual(needle) {
            return start..<(start + needle.count)
        }
        return nil
    }

    /// Runs a command on a pseudo-terminal and types the passphrase (the first line of the file
    /// in argv[1]) at each prompt that names a passphrase, once the program has turned echo off
    /// (signet flushes pending input as it does); exits with the command's status and copies
    /// what the terminal showed to standard error. Gives up after two minutes.
    static let terminalDriver = """
        import os, pty, re, select, signal, sys, termios, time

        passphrase = open(sys.argv[1], "rb").read().split(b"\\n")[0]
        command = sys.argv[2:]
        pid, fd = pty.fork()
        if pid == 0:
            os.execvp(command[0], command)
        prompt = re.compile(rb"[Pp]assphrase[^\\n:]*:")


        def echo_off():
            # On Linux the master side reports the terminal's (the slave's) modes.
            try:
                return not termios.tcgetattr(fd)[3] & termios.ECHO
            except termios.error:
                return True


        seen, answered, deadline = b"", 0, time.monotonic() + 120
        while True:
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                seen += b"\\n[terminal.py: timed out]\\n"
                break
            ready, _, _ = select.select([fd], [], [], 1.0)
            if not ready:
                continue
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
            while answered < len(prompt.findall(seen)):
                # Type only once echo is off: a program that flushes the input as it turns echo off
                # (TCSAFLUSH) would drop what was typed before.
                wait = time.monotonic() + 10
                while not echo_off() and time.monotonic() < wait:
                    time.sleep(0.01)
                try:
                    os.write(fd, passphrase + b"\\n")
                except OSError:
                    pass
                answered += 1
        _, status = os.waitpid(pid, 0)
        sys.stderr.write(seen.decode("utf-8", "replace"))
        sys.exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))

        """
}
