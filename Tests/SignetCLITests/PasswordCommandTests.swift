import Foundation
import SignetCore
import Testing

/// `signet password hash|verify`: the password never on argv; exit 0 on a match, 1 otherwise.
@Suite("signet password")
struct PasswordCommandTests {
    /// A low-cost hash made by the library, so verify tests do not pay for N = 2^17 in a debug build.
    static func cheapHash(_ password: String, pepper: String? = nil) throws -> String {
        try PasswordHasher(algorithm: .scrypt(logN: 10, r: 8, p: 1), pepper: pepper.map { SecretBytes(Array($0.utf8)) })
            .hash(SecretBytes(Array(password.utf8)))
    }

    @Test("hash prints one PHC line with OWASP's parameters, and verify accepts it")
    func hashDefault() throws {
        let sandbox = try Sandbox()
        let file = try sandbox.write("pw.txt", "correct horse battery staple\n")
        let hashed = try sandbox.signet("password", "hash", "--password-file", file)
        #expect(hashed.status == 0, "\(hashed)")
        let line = hashed.out.trimmingCharacters(in: .newlines)
        #expect(line.hasPrefix("$scrypt$ln=17,r=8,p=1$"))
        #expect(hashed.out.filter { $0 == "\n" }.count == 1)
        // Python's hashlib agrees on the derived bytes (salt and hash are unpadded base64).
        let phc = try PHCString(parsing: line)
        let check = try sandbox.must(
            "python3", "-c",
            "import hashlib,sys; print(hashlib.scrypt(b'correct horse battery staple', salt=bytes.fromhex(sys.argv[1]), n=1<<17, r=8, p=1, maxmem=256<<20, dklen=32).hex())",
            phc.salt.map { String(format: "%02x", $0) }.joined())
        #expect(check.out.trimmingCharacters(in: .whitespacesAndNewlines) == phc.hash.map { String(format: "%02x", $0) }.joined())
        let verified = try sandbox.signet("password", "verify", line, "--password-file", file)
        #expect(verified.status == 0, "\(verified)")
        #expect(verified.stderr.contains("password matches"))
    }

    @Test("pbkdf2-sha256 with 600,000 iterations")
    func pbkdf2() throws {
        let sandbox = try Sandbox()
        let hashed = try sandbox.signet("password", "hash", "-a", "pbkdf2-sha256", stdin: Data("hunter2".utf8))
        #expect(hashed.status == 0, "\(hashed)")
        #expect(hashed.out.hasPrefix("$pbkdf2-sha256$i=600000$"))
        let line = hashed.out.trimmingCharacters(in: .newlines)
        // Python's hashlib, reading the PHC string itself (unpadded base64), agrees.
        let check = try sandbox.must(
            "python3", "-c",
            """
            import base64, hashlib, sys
            unpadded = lambda text: base64.b64decode(text + '=' * (-len(text) % 4), validate=True)
            empty, ident, params, salt, digest = sys.argv[1].split('$')
            assert (empty, ident, params) == ('', 'pbkdf2-sha256', 'i=600000'), sys.argv[1]
            digest = unpadded(digest)
            print(hashlib.pbkdf2_hmac('sha256', b'hunter2', unpadded(salt), 600000, len(digest)) == digest)
            """,
            line)
        #expect(check.out.trimmingCharacters(in: .whitespacesAndNewlines) == "True", "python's hashlib does not accept \(line)")
        #expect(try sandbox.signet("password", "verify", line, stdin: Data("hunter2\n".utf8)).status == 0)
        #expect(try sandbox.signet("password", "verify", line, stdin: Data("hunter3".utf8)).status == 1)
    }

    @Test("exactly one trailing newline is removed from standard input and files")
    func newlines() throws {
        let sandbox = try Sandbox()
        let plain = try Self.cheapHash("pw")
        #expect(try sandbox.signet("password", "verify", plain, stdin: Data("pw\n".utf8)).status == 0)
        #expect(try sandbox.signet("password", "verify", plain, stdin: Data("pw\r\n".utf8)).status == 0)
        #expect(try sandbox.signet("password", "verify", plain, stdin: Data("pw\n\n".utf8)).status == 1)
        let withNewline = try Self.cheapHash("pw\n")
        let file = try sandbox.write("two.txt", "pw\n\n")
        #expect(try sandbox.signet("password", "verify", withNewline, "--password-file", file).status == 0)
    }

    @Test("a wrong password exits 1; below-policy hashes get a rehash note, -q silences notes")
    func mismatchAndRehash() throws {
        let sandbox = try Sandbox()
        let stored = try Self.cheapHash("s3cret")
        let wrong = try sandbox.signet("password", "verify", stored, stdin: Data("s3cres".utf8))
        #expect(wrong.status == 1)
        #expect(wrong.stderr.contains("does not match"))
        let right = try sandbox.signet("password", "verify", stored, stdin: Data("s3cret".utf8))
        #expect(right.status == 0)
        #expect(right.stderr.contains("rehash"))
        let quiet = try sandbox.signet("password", "verify", stored, "-q", stdin: Data("s3cret".utf8))
        #expect(quiet.status == 0)
        #expect(quiet.stderr.isEmpty)
    }

    @Test("a pepper is needed to verify a peppered hash; a short pepper is refused")
    func pepper() throws {
        let sandbox = try Sandbox()
        let pepperFile = try sandbox.write("pepper", "0123456789abcdef-pepper")
        let stored = try Self.cheapHash("pw", pepper: "0123456789abcdef-pepper")
        #expect(try sandbox.signet("password", "verify", stored, "--pepper-file", pepperFile, stdin: Data("pw".utf8)).status == 0)
        #expect(try sandbox.signet("password", "verify", stored, stdin: Data("pw".utf8)).status == 1)
        let short = try sandbox.write("short", "too short")
        let refused = try sandbox.signet("password", "hash", "--pepper-file", short, stdin: Data("pw".utf8))
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("at least 16 bytes"))
    }

    @Test("bad input: precise errors and the documented exit codes")
    func badInput() throws {
        let sandbox = try Sandbox()
        let empty = try sandbox.signet("password", "hash", stdin: Data("\n".utf8))
        #expect(empty.status == 2)
        #expect(empty.stderr.contains("empty"))
        #expect(try sandbox.signet("password", "hash", "-a", "md5", stdin: Data("pw".utf8)).status == 2)
        let malformed = try sandbox.signet("password", "verify", "$scrypt$ln=10$bad", stdin: Data("pw".utf8))
        #expect(malformed.status == 3)
        #expect(malformed.stderr.contains("password hash"))
        let argon = try sandbox.signet(
            "password", "verify", "$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g",
            stdin: Data("pw".utf8))
        #expect(argon.status == 3)
        #expect(argon.stderr.contains("unsupported"))
        let costly = try sandbox.signet(
            "password", "verify", "$scrypt$ln=20,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g",
            stdin: Data("pw".utf8))
        #expect(costly.status == 3, "\(costly)")
        #expect(costly.stderr.contains("256 MiB"))
        let missingFile = try sandbox.signet("password", "hash", "--password-file", sandbox.path("absent"))
        #expect(missingFile.status == 4)
        let tooLong = try sandbox.signet("password", "hash", stdin: Data(repeating: 0x61, count: 2000))
        #expect(tooLong.status == 2)
        // The password is never an argument.
        #expect(try sandbox.signet("password", "hash", "hunter2").status == 2)
    }
}
