import Foundation
import SignetCore
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

    static func load() throws -> RFC7914File { try VectorFile.decode(RFC7914File.self, named: "rfc7914") }
}

/// Runs python3's hashlib (OpenSSL's scrypt and PBKDF2) on hex inputs; returns hex.
enum PythonHashlib {
    static func derive(_ expression: String, password: [UInt8], salt: [UInt8]) throws -> String {
        let script = """
            import hashlib, sys
            password = bytes.fromhex(sys.argv[1]); salt = bytes.fromhex(sys.argv[2])
            print(\(expression).hex())
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, hex(password), hex(salt)]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "python3 failed (Scripts/test installs python3)")
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
}

@Suite("password hashing: RFC 7914 vectors and python's hashlib")
struct PasswordVectorTests {
    @Test("RFC 7914 §12 scrypt vectors", arguments: try RFC7914File.load().scrypt)
    func scryptVector(_ vector: RFC7914File.Scrypt) throws {
        let algorithm = PasswordHashAlgorithm.scrypt(logN: vector.logN, r: vector.r, p: vector.p)
        let expected = try VectorFile.bytes(hex: vector.derived)
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
        let expected = try VectorFile.bytes(hex: vector.derived)
        let derived = try PasswordHashAlgorithm.pbkdf2SHA256(iterations: vector.iterations)
            .derive(password: SecretBytes(Array(vector.password.utf8)), salt: Array(vector.salt.utf8), length: expected.count)
        #expect(derived.bytes == expected)
    }

    @Test("scrypt and PBKDF2 agree with python's hashlib on random and non-ASCII inputs")
    func pythonCrossCheck() throws {
        var generator = SystemRandomNumberGenerator()
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
            #expect(PythonHashlib.hex(ours.bytes) == theirs, "scrypt ln=\(logN)")
            let iterations = 1000 + 1500 * index
            let ours2 = try PasswordHashAlgorithm.pbkdf2SHA256(iterations: iterations)
                .derive(password: SecretBytes(password), salt: salt, length: 32)
            let theirs2 = try PythonHashlib.derive(
                "hashlib.pbkdf2_hmac('sha256', password, salt, \(iterations), 32)", password: password, salt: salt)
            #expect(PythonHashlib.hex(ours2.bytes) == theirs2, "pbkdf2 i=\(iterations)")
        }
    }

    @Test("a PHC string built from python's scrypt output verifies with PasswordHasher")
    func pythonMadePHC() throws {
        let password = Array("hunter2 but longer".utf8)
        let salt: [UInt8] = (0..<16).map { UInt8($0 * 7 + 3) }
        let hash = try VectorFile.bytes(
            hex: PythonHashlib.derive(
                "hashlib.scrypt(password, salt=salt, n=1024, r=8, p=1, maxmem=64 << 20, dklen=32)", password: password, salt: salt))
        let phc = PHCString(id: "scrypt", parameters: [.init("ln", "10"), .init("r", "8"), .init("p", "1")], salt: salt, hash: hash)
        let hasher = PasswordHasher(algorithm: .scrypt(logN: 10, r: 8, p: 1))
        #expect(try hasher.verify(SecretBytes(password), against: phc.description))
        #expect(try !hasher.verify(SecretBytes(Array("hunter2 but longeR".utf8)), against: phc.description))
    }
}
