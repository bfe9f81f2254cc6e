import Foundation
import SignetCore
import SignetTestSupport
import Testing

/// `Vectors/rfc7914.json`: RFC 7914's scrypt (§12) and PBKDF2-HMAC-SHA256 (§11) vectors.
struct RFC7914File: Decodable {
    struct Scrypt: Decodable, Sendable, CustomTestStringConvertible {
        var name: String
        var password: String
        var salt: String
        var logN: Int
        var r: Int
        var p: Int
        var derived: String
        var note: String?
        var testDescription: String { name }
    }

    struct PBKDF2: Decodable, Sendable, CustomTestStringConvertible {
        var name: String
        var password: String
        var salt: String
        var iterations: Int
        var derived: String
        var testDescription: String { name }
    }

    var scrypt: [Scrypt]
    var pbkdf2SHA256: [PBKDF2]

    static func load() throws -> RFC7914File { try TestVectors.decode(RFC7914File.self, "rfc7914.json", in: .module) }
}

/// Runs python3's hashlib (OpenSSL's scrypt and PBKDF2) on hex inputs; returns hex.
enum PythonHashlib {
    static func derive(_ expression: String, password: [UInt8], salt: [UInt8]) throws -> String {
        let script = """
            import hashlib, sys
            password = bytes.fromhex(sys.argv[1]); salt = bytes.fromhex(sys.argv[2])
            print(\(expression).hex())
            """
        return try Python.runOK(script, [hex(password), hex(salt)]).out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// Runs a python3 script with `arguments`; returns its exit status and trimmed output.
    static func run(_ script: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let result = try Python.run(script, arguments)
        return (result.status, result.out.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Checks a `$pbkdf2-sha256$i=…$salt$hash` string with hashlib alone: python splits the
    /// PHC string, decodes the unpadded base64 and compares; prints "match" or "mismatch".
    static let verifyPBKDF2PHC = """
        import base64, hashlib, hmac, sys
        def unpadded(text):
            assert '=' not in text, text
            return base64.b64decode(text + '=' * (-len(text) % 4), validate=True)
        password = bytes.fromhex(sys.argv[1])
        empty, ident, params, salt, digest = sys.argv[2].split('$')
        assert empty == '' and ident == 'pbkdf2-sha256', sys.argv[2]
        name, value = params.split('=')
        assert name == 'i' and value == str(int(value)), params
        salt, digest = unpadded(salt), unpadded(digest)
        derived = hashlib.pbkdf2_hmac('sha256', password, salt, int(value), len(digest))
        print('match' if hmac.compare_digest(derived, digest) else 'mismatch')
        """

    /// Makes a `$pbkdf2-sha256$i=…$salt$hash` string with hashlib alone (argv: password hex,
    /// salt hex, iterations, hash length).
    static let makePBKDF2PHC = """
        import base64, hashlib, sys
        password = bytes.fromhex(sys.argv[1]); salt = bytes.fromhex(sys.argv[2]); i = int(sys.argv[3])
        b64 = lambda data: base64.b64encode(data).decode().rstrip('=')
        digest = hashlib.pbkdf2_hmac('sha256', password, salt, i, int(sys.argv[4]))
        print('$pbkdf2-sha256$i=%d$%s$%s' % (i, b64(salt), b64(digest)))
        """
}

@Suite("password hashing: RFC 7914 vectors and python's hashlib")
struct PasswordVectorTests {
    @Test("RFC 7914 §12 scrypt vectors", arguments: try RFC7914File.load().scrypt)
    func scryptVector(_ vector: RFC7914File.Scrypt) throws {
        let algorithm = PasswordHashAlgorithm.scrypt(logN: vector.logN, r: vector.r, p: vector.p)
        let expected = try TestVectors.bytes(hex: vector.derived)
        let password = SecretBytes(Array(vector.password.utf8))
        if vector.note != nil {
            // 2^20 · 8 · 128 bytes = 1 GiB: refused up front rather than allocated.
            #expect(throws: SignetCoreError.self) {
                _ = try algorithm.derive(password: password, salt: Array(vector.salt.utf8), length: expected.count)
            }
            return
        }
        let derived = try algorithm.derive(password: password, salt: Array(vector.salt.utf8), length: expected.count)
        #expect(derived.bytes == expected)
    }

    @Test("RFC 7914 §11 PBKDF2-HMAC-SHA256 vectors", arguments: try RFC7914File.load().pbkdf2SHA256)
    func pbkdf2Vector(_ vector: RFC7914File.PBKDF2) throws {
        let expected = try TestVectors.bytes(hex: vector.derived)
        let derived = try PasswordHashAlgorithm.pbkdf2SHA256(iterations: vector.iterations)
            .derive(password: SecretBytes(Array(vector.password.utf8)), salt: Array(vector.salt.utf8), length: expected.count)
        #expect(derived.bytes == expected)
    }

    @Test("scrypt and PBKDF2 agree with python's hashlib on random and non-ASCII inputs")
    func pythonCrossCheck() throws {
        // Seeded, so a disagreement can be replayed with the same inputs.
        let seed: UInt64 = 0x7061_7373_776F_7264
        var generator = SplitMix64(seed: seed)
        let passwords: [[UInt8]] = [
            Array("correct horse battery staple".utf8),
            Array("pässwörd ✓ 密码".utf8),
            (0..<40).map { _ in UInt8.random(in: 1...255, using: &generator) },
        ]
        for (index, password) in passwords.enumerated() {
            let salt = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let logN = 10 + index % 3
            let ours = try PasswordHashAlgorithm.scrypt(logN: logN, r: 8, p: 1)
                .derive(password: SecretBytes(password), salt: salt, length: 32)
            let theirs = try PythonHashlib.derive(
                "hashlib.scrypt(password, salt=salt, n=\(1 << logN), r=8, p=1, maxmem=64 << 20, dklen=32)", password: password, salt: salt)
            #expect(PythonHashlib.hex(ours.bytes) == theirs, "scrypt ln=\(logN), seed \(seed), input \(index)")
            let iterations = 1000 + 1500 * index
            let ours2 = try PasswordHashAlgorithm.pbkdf2SHA256(iterations: iterations)
                .derive(password: SecretBytes(password), salt: salt, length: 32)
            let theirs2 = try PythonHashlib.derive(
                "hashlib.pbkdf2_hmac('sha256', password, salt, \(iterations), 32)", password: password, salt: salt)
            #expect(PythonHashlib.hex(ours2.bytes) == theirs2, "pbkdf2 i=\(iterations), seed \(seed), input \(index)")
        }
    }

    @Test("a PHC string built from python's scrypt output verifies with PasswordHasher")
    func pythonMadePHC() throws {
        let password = Array("hunter2 but longer".utf8)
        let salt: [UInt8] = (0..<16).map { UInt8($0 * 7 + 3) }
        let hash = try TestVectors.bytes(
            hex: PythonHashlib.derive(
                "hashlib.scrypt(password, salt=salt, n=1024, r=8, p=1, maxmem=64 << 20, dklen=32)", password: password, salt: salt))
        let phc = PHCString(id: "scrypt", parameters: [.init("ln", "10"), .init("r", "8"), .init("p", "1")], salt: salt, hash: hash)
        let hasher = PasswordHasher(algorithm: .scrypt(logN: 10, r: 8, p: 1))
        #expect(try hasher.verify(SecretBytes(password), against: phc.description))
        #expect(try !hasher.verify(SecretBytes(Array("hunter2 but longeR".utf8)), against: phc.description))
    }

    @Test("a PBKDF2 PHC string made by PasswordHasher verifies with python's hashlib", arguments: [2000, 600_000])
    func pbkdf2PHCCheckedByPython(iterations: Int) throws {
        let password = Array("pässwörd ✓ 密码".utf8)
        let stored = try PasswordHasher(algorithm: .pbkdf2SHA256(iterations: iterations)).hash(SecretBytes(password))
        #expect(stored.hasPrefix("$pbkdf2-sha256$i=\(iterations)$"))
        let right = try PythonHashlib.run(PythonHashlib.verifyPBKDF2PHC, [PythonHashlib.hex(password), stored])
        #expect(right.status == 0, "python3 failed on \(stored)")
        #expect(right.output == "match", "python's hashlib does not accept \(stored)")
        // The check is not vacuous: python refuses another password against the same string.
        let wrong = try PythonHashlib.run(PythonHashlib.verifyPBKDF2PHC, [PythonHashlib.hex(Array("passwörd ✓ 密码".utf8)), stored])
        #expect(wrong.status == 0 && wrong.output == "mismatch", "\(wrong)")
    }

    @Test("a PBKDF2 PHC string made by python's hashlib verifies with PasswordHasher", arguments: [32, 64])
    func pythonMadePBKDF2PHC(hashLength: Int) throws {
        let password = Array("hunter2 but longer ✓".utf8)
        let salt: [UInt8] = (0..<16).map { UInt8($0 * 11 + 5) }
        let made = try PythonHashlib.run(PythonHashlib.makePBKDF2PHC, [PythonHashlib.hex(password), PythonHashlib.hex(salt), "3000", "\(hashLength)"])
        try #require(made.status == 0, "python3 failed (Scripts/test installs python3)")
        let stored = made.output
        #expect(stored.hasPrefix("$pbkdf2-sha256$i=3000$"), "\(stored)")
        let hasher = PasswordHasher(algorithm: .pbkdf2SHA256(iterations: 3000))
        #expect(try hasher.verify(SecretBytes(password), against: stored), "\(stored)")
        #expect(try !hasher.verify(SecretBytes(Array("hunter2 but longer !".utf8)), against: stored))
        // Any policy verifies it (the stored string names its function and cost), and one of
        // more iterations asks for a rehash.
        #expect(try PasswordHasher(algorithm: .scrypt(logN: 10, r: 8, p: 1)).verify(SecretBytes(password), against: stored))
        #expect(try PasswordHasher(algorithm: .pbkdf2SHA256(iterations: 3001)).needsRehash(stored))
        #expect(try !hasher.needsRehash(stored))
    }
}
