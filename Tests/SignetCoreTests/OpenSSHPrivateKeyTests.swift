import Foundation
import SignetCore
import SignetTestSupport
import Testing

/// OpenSSH's `openssh-key-v1` private keys: ssh-keygen's fixtures (Vectors/keys/README.md) read to
/// the key of their `.pub` file and sign with it; damaged, hostile and encrypted files are
/// refused with a message naming the file and the problem.
@Suite struct OpenSSHPrivateKeyTests {
    // MARK: Building files

    /// SSH wire format (RFC 4251 §5), to build hostile files with.
    struct Writer {
        var bytes: [UInt8] = []

        mutating func uint32(_ value: UInt32) {
            bytes += [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
        }

        mutating func string(_ value: [UInt8]) {
            uint32(UInt32(value.count))
            bytes += value
        }

        mutating func string(_ value: String) { string(Array(value.utf8)) }
    }

    /// Reads SSH wire format back; nil when the data is cut short.
    /// A class, so that `#require` can call its mutating readers.
    final class Reader {
        let bytes: [UInt8]
        var offset = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        var rest: [UInt8] { Array(bytes[offset...]) }

        func take(_ count: Int) -> [UInt8]? {
            guard bytes.count - offset >= count else { return nil }
            defer { offset += count }
            return Array(bytes[offset..<offset + count])
        }

        func uint32() -> UInt32? {
            guard let bytes = take(4) else { return nil }
            return bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        }

        func string() -> [UInt8]? {
            guard let length = uint32() else { return nil }
            return take(Int(length))
        }
    }

    /// The fields of an `openssh-key-v1` body, to change one at a time and write back.
    struct KeyFile {
        var magic: [UInt8]
        var cipher: String
        var kdf: String
        var kdfOptions: [UInt8]
        var count: UInt32
        var publicBlobs: [[UInt8]]
        var section: [UInt8]
        /// Written in place of the private section's real length.
        var sectionLength: UInt32?
        var trailing: [UInt8] = []

        init(fixture name: String) throws {
            let text = try KeyTestSupport.fixtureText(name)
            let base64 = text.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
            let reader = Reader(bytes: [UInt8](try #require(Data(base64Encoded: base64))))
            magic = try #require(reader.take(15))
            cipher = String(decoding: try #require(reader.string()), as: UTF8.self)
            kdf = String(decoding: try #require(reader.string()), as: UTF8.self)
            kdfOptions = try #require(reader.string())
            count = try #require(reader.uint32())
            publicBlobs = [try #require(reader.string())]
            section = try #require(reader.string())
            trailing = reader.rest
        }

        var body: [UInt8] {
            var writer = Writer(bytes: magic)
            writer.string(cipher)
            writer.string(kdf)
            writer.string(kdfOptions)
            writer.uint32(count)
            for blob in publicBlobs { writer.string(blob) }
            writer.uint32(sectionLength ?? UInt32(section.count))
            writer.bytes += section + trailing
            return writer.bytes
        }

        /// The body PEM-armoured as ssh-keygen writes it: base64 in lines of 70 characters.
        var pem: [UInt8] { OpenSSHPrivateKeyTests.pem(body) }
    }

    static func pem(_ body: [UInt8]) -> [UInt8] {
        let text = Data(body).base64EncodedString()
        var lines = ["-----BEGIN OPENSSH PRIVATE KEY-----"]
        var index = text.startIndex
        while index < text.endIndex {
            let end = text.index(index, offsetBy: 70, limitedBy: text.endIndex) ?? text.endIndex
            lines.append(String(text[index..<end]))
            index = end
        }
        lines.append("-----END OPENSSH PRIVATE KEY-----")
        return Array((lines.joined(separator: "\n") + "\n").utf8)
    }

    /// A private section: check integers, the key's fields, the comment, and the padding
    /// (1, 2, 3 … to a multiple of 8 unless `padding` is set).
    struct Section {
        var check1: UInt32
        var check2: UInt32
        var fields: [[UInt8]] = []
        var comment: [UInt8]
        var padding: [UInt8]?

        /// Parses the section of `file`, whose key has `fieldCount` fields (its type included).
        init(of file: KeyFile, fieldCount: Int) throws {
            let reader = Reader(bytes: file.section)
            check1 = try #require(reader.uint32())
            check2 = try #require(reader.uint32())
            for _ in 0..<fieldCount { fields.append(try #require(reader.string())) }
            comment = try #require(reader.string())
        }

        var bytes: [UInt8] {
            var writer = Writer()
            writer.uint32(check1)
            writer.uint32(check2)
            for field in fields { writer.string(field) }
            writer.string(comment)
            if let padding {
                writer.bytes += padding
            } else {
                var next: UInt8 = 1
                while writer.bytes.count % 8 != 0 {
                    writer.bytes.append(next)
                    next += 1
                }
            }
            return writer.bytes
        }
    }

    /// The fixture with its private section replaced by `change` applied to its parsed form.
    static func changedSection(_ name: String, fieldCount: Int, _ change: (inout Section) -> Void) throws -> [UInt8] {
        var file = try KeyFile(fixture: name)
        var section = try Section(of: file, fieldCount: fieldCount)
        change(&section)
        file.section = section.bytes
        return file.pem
    }

    static func error(_ bytes: [UInt8], policy: KeyPolicy = .strict, sourceLocation: SourceLocation = #_sourceLocation) throws -> SignetCoreError {
        try KeyTestSupport.decodeError(bytes, source: "id_test", policy: policy, sourceLocation: sourceLocation)
    }

    static let fieldCounts = ["openssh-ed25519.key": 3, "openssh-ecdsa-p256.key": 4, "openssh-ecdsa-p384.key": 4, "openssh-rsa.key": 7]

    // MARK: ssh-keygen's keys

    @Test("ssh-keygen's unencrypted keys read to the key of their .pub file, and sign", arguments: [
        ("openssh-ed25519", KeyKind.ed25519, "sha256/3Cx3Hm/UNXTeuY9RLhvMuP7ok4LlRAN+fsOABOsXvOQ="),
        ("openssh-rsa", KeyKind.rsa(bits: 2048), "sha256/ugNdZsN/5crKzjegu/mYWcSZ2ID200YvSac5HwdBDl8="),
        ("openssh-ecdsa-p256", KeyKind.p256, "sha256/fPbYVbgVxoZ5MpfvGBQ+Htq3CuSGSu1nSf2N+9mlKTE="),
        ("openssh-ecdsa-p384", KeyKind.p384, "sha256/t6XMEmj/ZwLalAP5bb6TUkR4Bc9U9GLN6PqfmtFJW8A="),
    ])
    func fixtures(name: String, kind: KeyKind, fingerprint: String) throws {
        let decoded = try KeyDecoder.decode(try KeyTestSupport.fixture(name + ".key"), source: name)
        let key = try #require(decoded.privateKeyValue)
        #expect(key.kind == kind)
        let publicFile = try KeyDecoder.decode(try KeyTestSupport.fixture(name + ".pub"), source: name + ".pub")
        let publicKey = try #require(publicFile.publicKeyValue)
        #expect(key.publicKey == publicKey)
        #expect(key.publicKey.fingerprint.description == fingerprint)

        let signature = try SoftwareSigner(key: key).signMessageSynchronously(KeyTestSupport.message)
        try PublicKeyVerifier(key: publicKey).verify(signature: signature, message: KeyTestSupport.message)
        // The key leaves in the formats Signet writes, as itself.
        for format in [PrivateKeyFormat.der, .jwk] {
            let again = try KeyDecoder.decode(try key.encoded(as: format), source: "re-encoded")
            #expect(again.privateKeyValue?.publicKey == publicKey, "\(format.rawValue)")
        }
    }

    @Test("a key read by path, and the path names it in errors")
    func byPath() throws {
        let decoded = try KeyDecoder.decode(path: try KeyTestSupport.fixturePath("openssh-ecdsa-p256.key"))
        #expect(decoded.privateKeyValue?.kind == .p256)
        let path = try KeyTestSupport.fixturePath("openssh-ed25519-encrypted.key")
        let error = try KeyTestSupport.thrown { try KeyDecoder.decode(path: path) }
        KeyTestSupport.check(error, is: "unsupported", mentioning: "\(path): unsupported: ", "passphrase-protected")
    }

    @Test("a file rebuilt from its parsed fields is the fixture itself (the builder these tests use)")
    func builderRoundTrip() throws {
        for (name, fieldCount) in Self.fieldCounts {
            let file = try KeyFile(fixture: name)
            #expect(try file.pem == KeyTestSupport.fixture(name), "\(name)")
            #expect(try Section(of: file, fieldCount: fieldCount).bytes == file.section, "\(name)")
        }
    }

    // MARK: Refusals

    @Test("a passphrase-protected key is refused with the way to remove the passphrase from a copy")
    func encrypted() throws {
        let error = try Self.error(try KeyTestSupport.fixture("openssh-ed25519-encrypted.key"))
        KeyTestSupport.check(
            error, is: "unsupported", mentioning: "id_test: unsupported: ", "passphrase-protected OpenSSH private keys",
            "\"aes256-ctr\"", "\"bcrypt\"", "ssh-keygen -p -N \"\" -f COPY")
        // Names from the file are quoted with their control characters escaped.
        var file = try KeyFile(fixture: "openssh-ed25519.key")
        file.cipher = "evil\u{1b}[2J"
        let escaped = try Self.error(file.pem)
        KeyTestSupport.check(escaped, is: "unsupported", mentioning: "passphrase-protected", "evil\\u{1b}[2J")
        #expect(!escaped.description.contains("\u{1b}"))
    }

    @Test("RSA under 2048 bits: a weak key by default, and unreadable in this format under any policy")
    func weakRSA() throws {
        let bytes = try KeyTestSupport.fixture("openssh-rsa1024.key")
        #expect(try Self.error(bytes) == .weakKey(source: "id_test", bits: 1024))
        let error = try Self.error(bytes, policy: KeyPolicy(allowWeakRSA: true))
        KeyTestSupport.check(error, is: "unsupported", mentioning: "id_test: unsupported: ", "under 2048 bits", "1024", "ssh-keygen -p -m PKCS8")
    }

    @Test("outer structure: magic, KDF, number of keys, trailing data, oversize lengths")
    func outerStructure() throws {
        let fixture = try KeyFile(fixture: "openssh-ed25519.key")
        var file = fixture
        file.magic = Array("openssh-key-v2".utf8) + [0]
        KeyTestSupport.check(try Self.error(file.pem), is: "malformed", mentioning: "id_test: ", "not an OpenSSH private key", "openssh-key-v1")

        file = fixture
        file.kdf = "bcrypt"
        KeyTestSupport.check(try Self.error(file.pem), is: "malformed", mentioning: "id_test: ", "unencrypted", "\"bcrypt\"")

        file = fixture
        file.count = 2
        let second = try KeyFile(fixture: "openssh-ed25519-encrypted.key").publicBlobs[0]
        file.publicBlobs.append(second)
        KeyTestSupport.check(try Self.error(file.pem), is: "malformed", mentioning: "id_test: ", "holds 2 keys; give one key per file")

        file = fixture
        file.count = 0
        KeyTestSupport.check(try Self.error(file.pem), is: "malformed", mentioning: "id_test: ", "holds no key")

        file = fixture
        file.trailing = [0, 0, 0, 0]
        KeyTestSupport.check(try Self.error(file.pem), is: "malformed", mentioning: "id_test: ", "extra data after the key")

        file = fixture
        file.sectionLength = 0xFFFF_FFFF
        KeyTestSupport.check(try Self.error(file.pem), is: "malformed", mentioning: "id_test: ", "truncated")

        var body = fixture.body
        body.replaceSubrange(15..<19, with: [0xff, 0xff, 0xff, 0xff])  // the cipher name's length
        KeyTestSupport.check(try Self.error(Self.pem(body)), is: "malformed", mentioning: "id_test: ", "truncated")
    }

    @Test("key types other than RSA, P-256, P-384 and Ed25519", arguments: [
        "ssh-dss", "sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com", "ecdsa-sha2-nistp521",
    ])
    func unsupportedType(type: String) throws {
        var file = try KeyFile(fixture: "openssh-ed25519.key")
        var blob = Writer()
        blob.string(type)
        for value in [[1], [2], [3], [4]] as [[UInt8]] { blob.string(value) }
        file.publicBlobs = [blob.bytes]
        let error = try Self.error(file.pem)
        KeyTestSupport.check(
            error, is: "unsupported", mentioning: "id_test: unsupported: ", "OpenSSH key type \"\(type)\"",
            "supported: ssh-rsa, ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ssh-ed25519")
    }

    @Test("a public key that is not the private key's")
    func halvesDiffer() throws {
        var file = try KeyFile(fixture: "openssh-ed25519.key")
        let otherEd25519 = try KeyFile(fixture: "openssh-ed25519-encrypted.key").publicBlobs[0]
        file.publicBlobs = [otherEd25519]
        KeyTestSupport.check(try Self.error(file.pem), is: "malformed", mentioning: "id_test: ", "the public and private halves do not match")

        let p256 = try KeyFile(fixture: "openssh-ecdsa-p256.key").publicBlobs[0]
        file.publicBlobs = [p256]
        KeyTestSupport.check(
            try Self.error(file.pem), is: "malformed",
            mentioning: "the public and private halves do not match", "ecdsa-sha2-nistp256 outside", "\"ssh-ed25519\" inside")
    }

    @Test("check integers and padding")
    func checkIntegersAndPadding() throws {
        let name = "openssh-ed25519.key"
        let differ = try Self.changedSection(name, fieldCount: 3) { $0.check2 ^= 1 }
        KeyTestSupport.check(
            try Self.error(differ), is: "malformed", mentioning: "id_test: ", "check integers differ", "wrong passphrase")
        let badPadding = try Self.changedSection(name, fieldCount: 3) { $0.padding = [1, 7] }
        KeyTestSupport.check(try Self.error(badPadding), is: "malformed", mentioning: "id_test: ", "padding after the comment")
        let longPadding = try Self.changedSection(name, fieldCount: 3) { $0.padding = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] }
        KeyTestSupport.check(try Self.error(longPadding), is: "malformed", mentioning: "id_test: ", "at most 7 bytes")
        let noPadding = try Self.changedSection(name, fieldCount: 3) { $0.padding = [] }
        KeyTestSupport.check(try Self.error(noPadding), is: "malformed", mentioning: "id_test: ", "not a multiple of 8")
    }

    /// Expects the fixture `name`, its private section changed by `change`, to be refused as
    /// malformed with a message naming `fragment`.
    static func expectDamaged(
        _ name: String, _ fieldCount: Int, _ fragment: String, sourceLocation: SourceLocation = #_sourceLocation,
        _ change: (inout Section) -> Void
    ) throws {
        let bytes = try changedSection(name, fieldCount: fieldCount, change)
        let refusal = try Self.error(bytes, sourceLocation: sourceLocation)
        KeyTestSupport.check(refusal, is: "malformed", mentioning: "id_test: ", fragment, sourceLocation: sourceLocation)
    }

    @Test("damaged Ed25519 fields")
    func damagedEd25519() throws {
        let name = "openssh-ed25519.key"
        try Self.expectDamaged(name, 3, "\"ssh-rsa\" inside") { $0.fields[0] = Array("ssh-rsa".utf8) }
        try Self.expectDamaged(name, 3, "64-byte seed ‖ public key") { $0.fields[2][63] ^= 1 }
        try Self.expectDamaged(name, 3, "64-byte seed ‖ public key") { $0.fields[2].removeLast() }
        try Self.expectDamaged(name, 3, "seed does not belong to its public key") { $0.fields[2][0] ^= 1 }
    }

    @Test("damaged ECDSA fields")
    func damagedECDSA() throws {
        let name = "openssh-ecdsa-p256.key"
        try Self.expectDamaged(name, 4, "curve name \"nistp384\"") { $0.fields[1] = Array("nistp384".utf8) }
        let negative: [UInt8] = [0x80] + [UInt8](repeating: 1, count: 31)
        try Self.expectDamaged(name, 4, "ECDSA private scalar is negative") { $0.fields[3] = negative }
        let long: [UInt8] = [0x01] + [UInt8](repeating: 0, count: 32)
        try Self.expectDamaged(name, 4, "longer than 32 bytes") { $0.fields[3] = long }
        try Self.expectDamaged(name, 4, "not valid for its curve") { $0.fields[3] = [] }
        try Self.expectDamaged("openssh-ecdsa-p384.key", 4, "does not belong to its public point") { $0.fields[3] = [7] }
    }

    @Test("damaged RSA fields")
    func damagedRSA() throws {
        let name = "openssh-rsa.key"
        let inconsistent = "RSA private key is inconsistent or damaged"
        try Self.expectDamaged(name, 7, inconsistent) { $0.fields[3][100] ^= 2 }  // d
        try Self.expectDamaged(name, 7, inconsistent) { $0.fields[4][100] ^= 2 }  // iqmp
        try Self.expectDamaged(name, 7, inconsistent) { $0.fields[5] = [0] }  // p
        try Self.expectDamaged(name, 7, inconsistent) { $0.fields[6] = [3] }  // q
        try Self.expectDamaged(name, 7, "RSA private exponent is negative") { $0.fields[3][0] = 0x80 }
    }

    @Test("every truncation of a private section, and of a whole body, is malformed (never a crash)")
    func truncations() throws {
        for name in Self.fieldCounts.keys.sorted() {
            let fixture = try KeyFile(fixture: name)
            for length in 0..<fixture.section.count {
                var file = fixture
                file.section = Array(fixture.section.prefix(length))
                let error = try Self.error(file.pem)
                KeyTestSupport.check(error, is: "malformed", mentioning: "id_test: ")
            }
        }
        let body = try KeyFile(fixture: "openssh-ed25519.key").body
        for length in 0..<body.count {
            let error = try Self.error(Self.pem(Array(body.prefix(length))))
            KeyTestSupport.check(error, is: "malformed", mentioning: "id_test: ")
        }
    }
}
