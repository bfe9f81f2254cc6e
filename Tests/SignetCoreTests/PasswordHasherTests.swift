import Foundation
import SignetCore
import Testing

/// Cheap parameters: the policy logic, not the cost, is under test (debug builds are slow).
private let cheap = PasswordHasher(algorithm: .scrypt(logN: 10, r: 8, p: 1))

private func pw(_ text: String) -> SecretBytes { SecretBytes(Array(text.utf8)) }

@Suite("PasswordHasher and PHC strings")
struct PasswordHasherTests {
    @Test("the default is OWASP's scrypt N=2^17, r=8, p=1 with a 16-byte salt and 32-byte hash")
    func defaultPolicy() throws {
        let stored = try PasswordHasher().hash(pw("correct horse battery staple"))
        #expect(stored.hasPrefix("$scrypt$ln=17,r=8,p=1$"))
        let phc = try PHCString(parsing: stored)
        #expect(phc.salt.count == 16)
        #expect(phc.hash.count == 32)
        #expect(PasswordHashAlgorithm.defaultPBKDF2 == .pbkdf2SHA256(iterations: 600_000))
    }

    @Test("hash, parse, verify; wrong passwords and altered hashes fail")
    func roundTrip() throws {
        let stored = try cheap.hash(pw("s3cret"))
        #expect(try cheap.verify(pw("s3cret"), against: stored))
        #expect(try !cheap.verify(pw("s3cres"), against: stored))
        #expect(try !cheap.verify(pw("s3cret "), against: stored))
        var phc = try PHCString(parsing: stored)
        #expect(phc.description == stored)
        phc.hash[0] ^= 0x01
        #expect(try !cheap.verify(pw("s3cret"), against: phc.description))
        // Two hashes of one password differ (fresh salt).
        #expect(try cheap.hash(pw("s3cret")) != stored)
    }

    @Test("PBKDF2 hashes verify, with any policy")
    func pbkdf2() throws {
        let hasher = PasswordHasher(algorithm: .pbkdf2SHA256(iterations: 2000))
        let stored = try hasher.hash(pw("pässwörd"))
        #expect(stored.hasPrefix("$pbkdf2-sha256$i=2000$"))
        #expect(try hasher.verify(pw("pässwörd"), against: stored))
        #expect(try cheap.verify(pw("pässwörd"), against: stored))
    }

    @Test("needsRehash: another function or a lower cost, not an equal or higher one")
    func rehash() throws {
        let low = try PasswordHasher(algorithm: .scrypt(logN: 10, r: 8, p: 1)).hash(pw("x"))
        let higher = try PasswordHasher(algorithm: .scrypt(logN: 11, r: 8, p: 1)).hash(pw("x"))
        let pbkdf2 = try PasswordHasher(algorithm: .pbkdf2SHA256(iterations: 1000)).hash(pw("x"))
        let policy = PasswordHasher(algorithm: .scrypt(logN: 11, r: 8, p: 1))
        #expect(try policy.needsRehash(low))
        #expect(try !policy.needsRehash(higher))
        #expect(try policy.needsRehash(pbkdf2))
        #expect(try !cheap.needsRehash(higher))
        #expect(try PasswordHasher(algorithm: .pbkdf2SHA256(iterations: 1001)).needsRehash(pbkdf2))
    }

    @Test("a pepper is needed, the same one, to verify")
    func pepper() throws {
        let pepper = SecretBytes(Array("server-side pepper, 32 bytes....".utf8))
        let peppered = PasswordHasher(algorithm: .scrypt(logN: 10, r: 8, p: 1), pepper: pepper)
        let stored = try peppered.hash(pw("hunter2"))
        #expect(try peppered.verify(pw("hunter2"), against: stored))
        #expect(try !cheap.verify(pw("hunter2"), against: stored))
        let other = PasswordHasher(algorithm: .scrypt(logN: 10, r: 8, p: 1), pepper: SecretBytes(Array("another pepper of 32 bytes......".utf8)))
        #expect(try !other.verify(pw("hunter2"), against: stored))
    }

    @Test("empty and over-long passwords are refused; 1024 bytes are accepted")
    func lengthBounds() throws {
        #expect(throws: SignetCoreError.invalidArgument(detail: "the password is empty")) { try cheap.hash(SecretBytes([])) }
        #expect(throws: SignetCoreError.self) { try cheap.hash(SecretBytes([UInt8](repeating: 0x61, count: 1025))) }
        let stored = try cheap.hash(SecretBytes([UInt8](repeating: 0x61, count: 1024)))
        #expect(try cheap.verify(SecretBytes([UInt8](repeating: 0x61, count: 1024)), against: stored))
        #expect(throws: SignetCoreError.self) { try cheap.verify(SecretBytes([]), against: stored) }
    }

    @Test("stored costs beyond the bounds are refused before any work")
    func costBounds() {
        let salt = "c2FsdHNhbHRzYWx0c2FsdA"
        let hash = "aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g"
        for parameters in ["ln=20,r=32,p=1", "ln=21,r=8,p=1", "ln=17,r=8,p=17", "ln=0,r=8,p=1", "ln=17,r=0,p=1"] {
            #expect(throws: SignetCoreError.self, "\(parameters)") {
                try cheap.verify(pw("x"), against: "$scrypt$\(parameters)$\(salt)$\(hash)")
            }
        }
        #expect(throws: SignetCoreError.self) { try cheap.verify(pw("x"), against: "$pbkdf2-sha256$i=10000001$\(salt)$\(hash)") }
        #expect(throws: SignetCoreError.self) { try cheap.verify(pw("x"), against: "$pbkdf2-sha256$i=0$\(salt)$\(hash)") }
    }

    @Test("malformed PHC strings are refused with a precise error", arguments: [
        "", "$", "$scrypt", "$scrypt$ln=10,r=8,p=1", "$scrypt$ln=10,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA",
        "scrypt$ln=10,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g",
        "$scrypt$ln=10,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA==$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g",
        "$scrypt$ln=10,r=8,p=1$c2Fsd!NhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g",
        "$scrypt$ln=10,ln=10,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g",
        "$scrypt$ln=10,r=8,p=1,x=1$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g",
        "$scrypt$ln=010,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g",
        "$scrypt$ln=ten,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g",
        "$scrypt$ln=99999999999999999999,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g",
        "$scrypt$ln=10,r=8,p=$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g",
        "$scrypt$ln=10 r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g",
        "$scrypt$v=19$ln=10,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g",
        "$scrypt$ln=10,r=8,p=1$c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g",
        "$scrypt$ln=10,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$aGFzaA",
        "$SCRYPT$ln=10,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g",
        "$md5$i=1$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g",
        "$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g",
    ])
    func malformed(_ text: String) {
        #expect(throws: SignetCoreError.self, "\(text)") { try cheap.verify(pw("x"), against: text) }
    }

    @Test("oversized input is refused before parsing")
    func oversized() {
        let long = "$scrypt$ln=10,r=8,p=1$" + String(repeating: "A", count: 600) + "$aGFzaA"
        #expect(throws: SignetCoreError.tooLarge(source: "password hash", limit: PHCString.maximumLength)) {
            try PHCString(parsing: long)
        }
    }

    @Test("argon2 is recognised as unsupported, not as garbage")
    func argon2Unsupported() throws {
        let phc = try PHCString(parsing: "$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g")
        #expect(phc.version == "19")
        #expect(phc.description.hasPrefix("$argon2id$v=19$m=65536,t=3,p=4$"))
        do {
            _ = try PasswordHashAlgorithm(phc: phc)
            Issue.record("argon2id was accepted")
        } catch {
            guard case .unsupported = error else {
                Issue.record("expected .unsupported, got \(error)")
                return
            }
            #expect(error.category == .malformedInput)
        }
    }
}
