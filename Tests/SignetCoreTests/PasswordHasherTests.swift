import Foundation
import SignetCore
import Testing

/// Cheap parameters: the policy logic, not the cost, is under test (debug builds are slow).
private let cheap = PasswordHasher(algorithm: .scrypt(logN: 10, r: 8, p: 1))

private func pw(_ text: String) -> SecretBytes { SecretBytes(Array(text.utf8)) }

/// A well-formed salt ("saltsaltsaltsalt", 16 bytes) and hash (32 bytes) for the refusal cases.
private let phcSalt = "c2FsdHNhbHRzYWx0c2FsdA"
private let phcHash = "aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g"
private let notPHC = "not a PHC string ($id$parameters$salt$hash)"

/// The refusal of a stored hash that is not acceptable: always `.malformed` from "password hash".
private func phcMalformed(_ detail: String) -> SignetCoreError { .malformed(source: "password hash", detail: detail) }

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
        let tooLong = SignetCoreError.invalidArgument(detail: "the password is longer than 1024 bytes")
        #expect(throws: tooLong) { try cheap.hash(SecretBytes([UInt8](repeating: 0x61, count: 1025))) }
        let stored = try cheap.hash(SecretBytes([UInt8](repeating: 0x61, count: 1024)))
        #expect(try cheap.verify(SecretBytes([UInt8](repeating: 0x61, count: 1024)), against: stored))
        #expect(throws: SignetCoreError.invalidArgument(detail: "the password is empty")) { try cheap.verify(SecretBytes([]), against: stored) }
        #expect(throws: tooLong) { try cheap.verify(SecretBytes([UInt8](repeating: 0x61, count: 1025)), against: stored) }
    }

    /// Costs out of bounds and the exact refusal each gets (a stored hash that asks for too
    /// much is malformed input, not a bad command line).
    static let costCases: [(String, SignetCoreError)] = [
        ("$scrypt$ln=20,r=32,p=1", phcMalformed("scrypt parameters ln=20,r=32,p=1 need more than 256 MiB of memory (128 · r · N · p)")),
        ("$scrypt$ln=20,r=8,p=1", phcMalformed("scrypt parameters ln=20,r=8,p=1 need more than 256 MiB of memory (128 · r · N · p)")),
        ("$scrypt$ln=21,r=8,p=1", phcMalformed("parameter ln=21 is not an integer from 1 to 20")),
        ("$scrypt$ln=17,r=8,p=17", phcMalformed("parameter p=17 is not an integer from 1 to 16")),
        ("$scrypt$ln=0,r=8,p=1", phcMalformed("parameter ln=0 is not an integer from 1 to 20")),
        ("$scrypt$ln=17,r=0,p=1", phcMalformed("parameter r=0 is not an integer from 1 to 32")),
        ("$scrypt$ln=17,r=33,p=1", phcMalformed("parameter r=33 is not an integer from 1 to 32")),
        ("$pbkdf2-sha256$i=10000001", phcMalformed("parameter i=10000001 is not an integer from 1 to 10000000")),
        ("$pbkdf2-sha256$i=0", phcMalformed("parameter i=0 is not an integer from 1 to 10000000")),
    ]

    @Test("stored costs beyond the bounds are refused before any work", arguments: PasswordHasherTests.costCases)
    func costBounds(_ prefix: String, _ expected: SignetCoreError) {
        let stored = "\(prefix)$\(phcSalt)$\(phcHash)"
        #expect(throws: expected, "\(stored)") { try cheap.verify(pw("x"), against: stored) }
        #expect(throws: expected, "\(stored)") { try cheap.needsRehash(stored) }
    }

    /// Each malformed string and the exact refusal it gets: the first thing wrong, in the
    /// order PHCString, PasswordHashAlgorithm and PasswordHasher check.
    static let malformedCases: [(String, SignetCoreError)] = [
        ("", phcMalformed(notPHC)),
        ("$", phcMalformed(notPHC)),
        ("$scrypt", phcMalformed(notPHC)),
        ("$scrypt$ln=10,r=8,p=1", phcMalformed(notPHC)),
        ("$scrypt$ln=10,r=8,p=1$\(phcSalt)", phcMalformed(notPHC)),
        ("scrypt$ln=10,r=8,p=1$\(phcSalt)$\(phcHash)", phcMalformed(notPHC)),
        ("$scrypt$ln=10,r=8,p=1$\(phcSalt)==$\(phcHash)", phcMalformed("the salt is not base64 without padding")),
        ("$scrypt$ln=10,r=8,p=1$c2Fsd!NhbHRzYWx0c2FsdA$\(phcHash)", phcMalformed("the salt is not base64 without padding")),
        ("$scrypt$ln=10,r=8,p=1$\(phcSalt)$\(phcHash)==", phcMalformed("the hash is not base64 without padding")),
        ("$scrypt$ln=10,ln=10,r=8,p=1$\(phcSalt)$\(phcHash)", phcMalformed("parameter 'ln' appears twice")),
        ("$scrypt$ln=10,r=8,p=1,x=1$\(phcSalt)$\(phcHash)", phcMalformed("unknown scrypt parameter 'x'")),
        ("$scrypt$ln=010,r=8,p=1$\(phcSalt)$\(phcHash)", phcMalformed("parameter ln=010 is not an integer from 1 to 20")),
        ("$scrypt$ln=ten,r=8,p=1$\(phcSalt)$\(phcHash)", phcMalformed("parameter ln=ten is not an integer from 1 to 20")),
        (
            "$scrypt$ln=99999999999999999999,r=8,p=1$\(phcSalt)$\(phcHash)",
            phcMalformed("parameter ln=99999999999999999999 is not an integer from 1 to 20")
        ),
        ("$scrypt$ln=10,r=8,p=$\(phcSalt)$\(phcHash)", phcMalformed("bad parameter 'p=' (expected name=value)")),
        ("$scrypt$ln=10,r=8$\(phcSalt)$\(phcHash)", phcMalformed("scrypt hash without the parameter 'p'")),
        ("$scrypt$ln=10 r=8,p=1$\(phcSalt)$\(phcHash)", phcMalformed("contains white space or a character outside printable ASCII")),
        ("$scrypt$v=19$ln=10,r=8,p=1$\(phcSalt)$\(phcHash)", phcMalformed("scrypt hashes have no version segment")),
        ("$scrypt$ln=10,r=8,p=1$c2FsdA$\(phcHash)", phcMalformed("salt of 4 bytes (8 to 64 are accepted)")),
        ("$scrypt$ln=10,r=8,p=1$\(phcSalt)$aGFzaA", phcMalformed("hash of 4 bytes (16 to 64 are accepted)")),
        ("$SCRYPT$ln=10,r=8,p=1$\(phcSalt)$\(phcHash)", phcMalformed("bad function identifier 'SCRYPT'")),
        (
            "$md5$i=1$\(phcSalt)$\(phcHash)",
            SignetCoreError.unsupported(source: "password hash", detail: "the function 'md5' (supported: scrypt, pbkdf2-sha256)")
        ),
        (
            "$argon2id$v=19$m=65536,t=3,p=4$\(phcSalt)$\(phcHash)",
            SignetCoreError.unsupported(source: "password hash", detail: "the function 'argon2id' (supported: scrypt, pbkdf2-sha256)")
        ),
    ]

    @Test("malformed PHC strings are refused with a precise error", arguments: PasswordHasherTests.malformedCases)
    func malformed(_ text: String, _ expected: SignetCoreError) {
        #expect(throws: expected, "\(text)") { try cheap.verify(pw("x"), against: text) }
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
        let error = try #require(throws: SignetCoreError.self) { try PasswordHashAlgorithm(phc: phc) }
        #expect(error == .unsupported(source: "password hash", detail: "the function 'argon2id' (supported: scrypt, pbkdf2-sha256)"))
        #expect(error.category == .malformedInput)
    }
}
