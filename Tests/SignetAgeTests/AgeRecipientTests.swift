import Crypto
import Foundation
import SignetAge
import SignetCore
import SignetTestSupport
import Testing

/// Known values, all computed outside Signet: key pairs from the age spec (C2SP age.md) and the
/// age repository's testdata (`cmd/age/testdata/x25519.txt`, `testdata/example_keys.txt`);
/// stanzas made with python `cryptography` and `hashlib`, as follows (the live cross-checks
/// below run the same computations the other way):
///
/// ```python
/// R = X25519 public key of bytes.fromhex(identitySecretHex); e = b'\x0f' * 32; fk = bytes(range(16, 32))
/// share = X25519(e, basepoint)
/// key = HKDF(SHA256, 32, salt=share + R, info=b'age-encryption.org/v1/X25519').derive(X25519(e, R))
/// x25519Body = ChaCha20Poly1305(key).encrypt(bytes(12), fk, None)
/// salt = bytes(range(0xa0, 0xb0))
/// key = hashlib.scrypt(passphrase, salt=b'age-encryption.org/v1/scrypt' + salt, n=1 << 10, r=8, p=1, dklen=32)
/// scryptBody = ChaCha20Poly1305(key).encrypt(bytes(12), fk, None)
/// ```
enum AgeRecipientFixtures {
    /// age's spec example (C2SP age.md) and testdata key pairs, with the public key in hex.
    static let pairs: [(identity: String, recipient: String, publicHex: String)] = [
        ("AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX",
         "age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj",
         "132c442be010fbd57e72603328aa76e71fccc1503aae219327d14d9c9993f472"),
        ("AGE-SECRET-KEY-1EGTZVFFV20835NWYV6270LXYVK2VKNX2MMDKWYKLMGR48UAWX40Q2P2LM0",
         "age1xmwwc06ly3ee5rytxm9mflaz2u56jjj36s0mypdrwsvlul66mv4q47ryef",
         "36dcec3f5f24739a0c8b36cbb4ffa25729a94a51d41fb205a37419fe7f5adb2a"),
        ("AGE-SECRET-KEY-184JMZMVQH3E6U0PSL869004Y3U2NYV7R30EU99CSEDNPH02YUVFSZW44VU",
         "age1cy0su9fwf3gf9mw868g5yut09p6nytfmmnktexz2ya5uqg9vl9sss4euqm",
         "c11f0e152e4c5092edc7d1d142716f2875322d3bdcecbc984a2769c020acf961"),
    ]
    /// The testdata identity above and its secret scalar.
    static let identity = pairs[1].identity
    static let identitySecretHex = "ca1626252c53cf1a4dc46695e7fcc46594cb4ccadedb6712dfda0753f3ae355e"
    /// The file key both stanzas below carry.
    static let fileKeyHex = "101112131415161718191a1b1c1d1e1f"

    /// Ephemeral secret 0x0f × 32 to the testdata recipient: share, then body
    /// (HKDF-SHA256(X25519(e, R), share ‖ R, "age-encryption.org/v1/X25519"), ChaCha20-Poly1305).
    static let x25519Share = "foHpFuOvzbMe902NuSPyuhW4KhqmWU6iKNzfJ9e1T2w"
    static let x25519Body = "2LqV54wLsXsYQdkcwUW1SjLeBCvGX3HYtx0JG+HZqjA"

    /// scrypt(passphrase, "age-encryption.org/v1/scrypt" ‖ salt, 2^10, 8, 1) over the file key.
    static let passphrase = "correct horse battery staple"
    static let scryptSalt = "oKGio6SlpqeoqaqrrK2urw"
    static let scryptBody = "lAWIV62X0RFB8RB7jdgvDPmyibA9nMCCQTDZDOixzl8"

    static func x25519Stanza(share: String = AgeRecipientFixtures.x25519Share, extra: [String] = [], body: [UInt8]? = nil) -> AgeStanza {
        AgeStanza(type: "X25519", arguments: [share] + extra, body: body ?? unpadded(x25519Body))
    }

    static func scryptStanza(arguments: [String] = [AgeRecipientFixtures.scryptSalt, "10"], body: [UInt8]? = nil) -> AgeStanza {
        AgeStanza(type: "scrypt", arguments: arguments, body: body ?? unpadded(scryptBody))
    }

    static func secret(_ text: String) -> SecretBytes { SecretBytes(Array(text.utf8)) }

    /// Unpadded base64 decoded by Foundation, not by the code under test.
    static func unpadded(_ text: String) -> [UInt8] {
        let padded = text + String(repeating: "=", count: (4 - text.count % 4) % 4)
        return Data(base64Encoded: padded).map { Array($0) } ?? []
    }

    /// Unpadded base64 written by Foundation.
    static func encodeUnpadded(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "=", with: "")
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// The stanzas of an age file's header, read here just far enough for these tests (so that
    /// they do not depend on SignetAge's own header reader).
    static func stanzas(ofAgeFile bytes: [UInt8]) -> [AgeStanza] {
        var lines: [String] = []
        var current: [UInt8] = []
        for byte in bytes {
            guard byte == 0x0A else { current.append(byte); continue }
            let line = String(decoding: current, as: UTF8.self)
            if line.hasPrefix("---") { break }
            lines.append(line)
            current = []
        }
        var stanzas: [AgeStanza] = []
        var index = 1
        while index < lines.count, lines[index].hasPrefix("-> ") {
            let parts = lines[index].dropFirst(3).split(separator: " ").map { String($0) }
            var body = ""
            index += 1
            while index < lines.count {
                body += lines[index]
                index += 1
                if lines[index - 1].count < 64 { break }
            }
            stanzas.append(AgeStanza(type: parts.first ?? "", arguments: Array(parts.dropFirst()), body: unpadded(body)))
        }
        return stanzas
    }
}

@Suite("age Bech32")
struct AgeBech32Tests {
    /// BIP 173's valid Bech32 strings.
    static let valid = [
        "A12UEL5L", "a12uel5l",
        "an83characterlonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1tt5tgs",
        "abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw",
        "11" + String(repeating: "q", count: 82) + "c8247j",
        "split1checkupstagehandshakeupstreamerranterredcaperred2y9e3w", "?1ezyfcl",
    ]

    /// BIP 173's invalid strings (all but the one refused only for its length) and age's
    /// padding rules.
    static let invalid: [(String, String)] = [
        ("\u{20}1nwldj5", "HRP character out of range"), ("\u{7F}1axkwrx", "HRP character out of range"),
        ("\u{80}1eym55h", "HRP character out of range"), ("pzry9x0s0muk", "no separator"),
        ("1pzry9x0s0muk", "empty HRP"), ("x1b4n0q5v", "invalid data character"), ("li1dgmt3", "too short checksum"),
        ("de1lg7wt\u{FF}", "invalid character in checksum"), ("A1G7SGD8", "checksum over the uppercase HRP"),
        ("10a06t8", "empty HRP"), ("1qzzfhee", "empty HRP"), ("a12UEL5L", "mixed case"),
        ("tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sL5k7", "mixed case"),
        ("age1qpu0j2ex", "non-zero padding"), ("age1qdd35qf", "five bits of padding"),
        ("age1xmwwc0qly3ee5rytxm9mflaz2u56jjj36s0mypdrwsvlul66mv4q47ryef", "one character changed"),
    ]

    @Test("BIP 173's valid strings decode, and encode back to the same text", arguments: AgeBech32Tests.valid)
    func validStrings(_ string: String) throws {
        let decoded = try Bech32.decode(string, source: "vector")
        #expect(Bech32.encode(humanReadablePart: decoded.humanReadablePart, data: decoded.data) == string)
    }

    @Test("decoded data is the bytes packed in the string")
    func decodedData() throws {
        #expect(try Bech32.decode("abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw", source: "v").data
            == TestVectors.bytes(hex: "00443214c74254b635cf84653a56d7c675be77df"))
        #expect(try Bech32.decode("split1checkupstagehandshakeupstreamerranterredcaperred2y9e3w", source: "v").data
            == TestVectors.bytes(hex: "c5f38b70305f519bf66d85fb6cf03058f3dde463ecd7918f2dc743918f2d"))
        #expect(try Bech32.decode(Self.valid[4], source: "v").data == [UInt8](repeating: 0, count: 51))
        #expect(try Bech32.decode("age19l388n", source: "v") == Bech32.Decoded(humanReadablePart: "age", data: []))
        #expect(try Bech32.decode("A12UEL5L", source: "v").humanReadablePart == "A")
    }

    @Test("invalid strings are refused as invalid keys")
    func invalidStrings() throws {
        for (string, why) in Self.invalid {
            let error = try thrown(AgeError.self) { try Bech32.decode(string, source: "vector") }
            #expect(error.code == "invalidKey", "\(why): \(error)")
            #expect(error.description.hasPrefix("vector: not valid Bech32"), "\(why): \(error)")
        }
    }

    @Test("age sets no length limit: BIP 173's 91-character string decodes")
    func noLengthLimit() throws {
        let long = "an84characterslonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1569pvx"
        #expect(try Bech32.decode(long, source: "v").humanReadablePart.count == 84)
    }

    @Test("encoding takes the case of the human-readable part")
    func encodingCase() {
        let bytes = (0..<32).map { UInt8($0) }
        #expect(Bech32.encode(humanReadablePart: "age", data: bytes)
            == "age1qqqsyqcyq5rqwzqfpg9scrgwpugpzysnzs23v9ccrydpk8qarc0savhh7m")
        #expect(Bech32.encode(humanReadablePart: "AGE-SECRET-KEY-", data: bytes)
            == "AGE-SECRET-KEY-1QQQSYQCYQ5RQWZQFPG9SCRGWPUGPZYSNZS23V9CCRYDPK8QARC0SWRYDWG")
    }
}

@Suite("age X25519 recipients and identities")
struct AgeX25519Tests {
    typealias F = AgeRecipientFixtures

    @Test("known key pairs: identity → recipient and public key, and both encode back")
    func knownPairs() throws {
        for pair in F.pairs {
            let identity = try X25519Identity(pair.identity)
            #expect(identity.string == pair.identity)
            #expect(identity.recipient.string == pair.recipient)
            #expect(F.hex(Array(identity.recipient.publicKey.rawRepresentation)) == pair.publicHex)
            let recipient = try X25519Recipient(pair.recipient)
            #expect(recipient == identity.recipient)
            #expect(recipient.string == pair.recipient)
            #expect(X25519Recipient(publicKey: recipient.publicKey) == recipient)
        }
    }

    @Test("a generated identity encodes as age does: uppercase secret, lowercase recipient")
    func generated() throws {
        let identity = X25519Identity.generate()
        let text = identity.string
        #expect(text.hasPrefix("AGE-SECRET-KEY-1") && text == text.uppercased() && text.count == 74)
        #expect(try X25519Identity(text).recipient == identity.recipient)
        let recipient = identity.recipient.string
        #expect(recipient.hasPrefix("age1") && recipient == recipient.lowercased() && recipient.count == 62)
        #expect(X25519Identity.generate().recipient != identity.recipient)
    }

    @Test("printing an identity never shows the secret")
    func identityDescription() throws {
        let identity = try X25519Identity(F.identity)
        let secretPart = String(F.identity.dropFirst(16).prefix(20))
        var dumped = ""
        dump(identity, to: &dumped)
        for text in ["\(identity)", String(reflecting: identity), dumped] {
            #expect(!text.contains(secretPart) && !text.lowercased().contains(secretPart.lowercased()), "\(text)")
        }
        #expect("\(identity)".contains(identity.recipient.string))
    }

    @Test("recipient strings that are not X25519 recipients are refused")
    func badRecipients() throws {
        let cases: [(String, SignetErrorCode<AgeError>, String)] = [
            ("agf1qqqsyqcyq5rqwzqfpg9scrgwpugpzysnzs23v9ccrydpk8qarc0s43wcss", "invalidKey", "not an age recipient"),
            (F.pairs[1].recipient.uppercased(), "invalidKey", "lowercase"),
            ("age1qqqsyqcyq5rqwzqfpg9scrgwpugpzysnzs23v9ccrydpk8qarc535lh4", "invalidKey", "32 bytes, not 31"),
            ("age1qqqsyqcyq5rqwzqfpg9scrgwpugpzysnzs23v9ccrydpk8qarc0jqtdny4t", "invalidKey", "32 bytes, not 33"),
            ("age1xmwwc0qly3ee5rytxm9mflaz2u56jjj36s0mypdrwsvlul66mv4q47ryef", "invalidKey", "checksum"),
            (F.pairs[1].recipient + " ", "invalidKey", "printable ASCII"),
            ("age1pq1qqqsyqcyq5rqwzqfpg9scrgwpugpzysnzs23v9ccrydpk8qarc0jqgfzyvjz2f385857ay", "invalidKey", "post-quantum"),
            ("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKW6zVi0JxA8ZtmZBS0f8ykpFqrF9EiVJQ1tDBnOSqqO alice", "invalidKey", "an OpenSSH public key"),
            ("", "invalidKey", "not an age recipient"),
        ]
        for (text, code, fragment) in cases {
            let error = try thrown(AgeError.self) { try X25519Recipient(text) }
            expectError(error, is: code, mentioning: [fragment])
        }
    }

    @Test("a secret key given as a recipient is refused without being quoted")
    func secretAsRecipient() throws {
        let error = try thrown(AgeError.self) { try X25519Recipient(F.identity) }
        expectError(error, is: "invalidKey", mentioning: ["identity (a secret key)"])
        #expect(!error.description.contains(String(F.identity.dropFirst(16).prefix(20))))
    }

    @Test("reading an identity's string leaves the key intact (a fuzz finding: it once zeroed the key it encoded)")
    func stringKeepsKey() throws {
        let identity = X25519Identity.generate()
        let first = identity.string
        #expect(identity.string == first)
        let file = try AgeEncryptor(recipients: [identity.recipient]).encrypt(Array("still here".utf8))
        #expect(try AgeDecryptor(identities: [identity]).decrypt(file, source: "t.age") == Array("still here".utf8))
        #expect(try X25519Identity(first).recipient == identity.recipient)
    }

    @Test("identity strings that are not X25519 identities are refused, never quoted")
    func badIdentities() throws {
        let cases: [(String, SignetErrorCode<AgeError>, String)] = [
            (F.identity.lowercased(), "invalidKey", "uppercase"),
            ("AGE-SECRET-KEY-1QQQSYQCYQ5RQWZQFPG9SCRGWPUGPZYSNZS23V9CCRYDPK8QARCNQTXUK", "invalidKey", "32 bytes, not 31"),
            (F.pairs[1].recipient, "invalidKey", "a recipient"),
            ("AGE-SECRET-KEY-PQ-1XX76JRALNLXDMEW0CRK45QMCCH4X06SE84UN3VPM33W6HWDX0H3SK3ZQFR", "invalidKey", "post-quantum"),
            ("AGE-PLUGIN-YUBIKEY-1QQQQQQ", "unsupported", "plugin"),
            (String(F.identity.dropLast()) + "1", "invalidKey", "Bech32"),
            ("hello", "invalidKey", "not an age identity"),
        ]
        for (text, code, fragment) in cases {
            let error = try thrown(AgeError.self) { try X25519Identity(text) }
            expectError(error, is: code, mentioning: [fragment])
            if text.count > 40 {
                // Nothing of the key text is ever quoted.
                let keyPart = String(text.lowercased().dropFirst(20).prefix(12))
                #expect(!error.description.lowercased().contains(keyPart), "\(error)")
            }
        }
    }

    @Test("a stanza made by python cryptography opens to its file key")
    func knownStanza() throws {
        let identity = try X25519Identity(F.identity)
        let fileKey = try identity.unwrap(stanzas: [F.x25519Stanza()], source: "known.age")
        #expect(fileKey.map { F.hex($0.bytes) } == F.fileKeyHex)
    }

    @Test("wrap then unwrap gives the file key back; each wrap has a fresh ephemeral share")
    func roundTrip() throws {
        let identity = X25519Identity.generate()
        let fileKey = SecretBytes(RandomBytes.make(16))
        let stanzas = try identity.recipient.wrap(fileKey: fileKey)
        let stanza = try #require(stanzas.first)
        #expect(stanzas.count == 1 && stanza.type == "X25519" && stanza.arguments.count == 1 && stanza.body.count == 32)
        #expect(F.unpadded(stanza.arguments[0]).count == 32 && !stanza.arguments[0].contains("="))
        #expect(try identity.unwrap(stanzas: stanzas, source: "t.age")?.bytes == fileKey.bytes)
        #expect(try identity.recipient.wrap(fileKey: fileKey).first?.arguments != stanza.arguments)
    }

    @Test("a stanza for another key is skipped; other stanza types are ignored")
    func otherKeys() throws {
        let identity = X25519Identity.generate()
        let other = X25519Identity.generate()
        let fileKey = SecretBytes(RandomBytes.make(16))
        let theirs = try other.recipient.wrap(fileKey: fileKey)
        #expect(try identity.unwrap(stanzas: theirs, source: "t.age") == nil)
        let unknown = AgeStanza(type: "example.com/enigma", arguments: ["x", "y", "z"], body: [1, 2, 3])
        let mine = try identity.recipient.wrap(fileKey: fileKey)
        #expect(try identity.unwrap(stanzas: [unknown] + theirs + mine, source: "t.age")?.bytes == fileKey.bytes)
        #expect(try identity.unwrap(stanzas: [unknown, F.scryptStanza()], source: "t.age") == nil)
    }

    @Test("malformed X25519 stanzas are refused")
    func malformedStanzas() throws {
        let identity = try X25519Identity(F.identity)
        let stanzas: [(AgeStanza, String)] = [
            (AgeStanza(type: "X25519", arguments: [], body: F.unpadded(F.x25519Body)), "0 arguments"),
            (F.x25519Stanza(extra: ["extra"]), "2 arguments"),
            (F.x25519Stanza(share: "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHg"), "32 bytes"),
            (F.x25519Stanza(share: "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g"), "32 bytes"),
            (F.x25519Stanza(share: F.x25519Share + "="), "canonical"),
            (F.x25519Stanza(share: String(F.x25519Share.dropLast()) + "x"), "canonical"),
            (F.x25519Stanza(share: String(F.x25519Share.dropLast())), "canonical"),
            (F.x25519Stanza(body: Array(F.unpadded(F.x25519Body).dropLast())), "31 bytes, not 32"),
            (F.x25519Stanza(body: F.unpadded(F.x25519Body) + [0]), "33 bytes, not 32"),
            (F.x25519Stanza(body: []), "0 bytes, not 32"),
        ]
        for (stanza, fragment) in stanzas {
            let error = try thrown(AgeError.self) { try identity.unwrap(stanzas: [stanza], source: "bad.age") }
            expectError(error, is: "malformedHeader", mentioning: ["bad.age", fragment])
        }
    }

    @Test("an ephemeral share that is a low-order point (all-zero shared secret) is refused")
    func lowOrderShare() throws {
        let identity = try X25519Identity(F.identity)
        for share in [F.encodeUnpadded([UInt8](repeating: 0, count: 32)), F.encodeUnpadded([1] + [UInt8](repeating: 0, count: 31))] {
            let error = try thrown(AgeError.self) { try identity.unwrap(stanzas: [F.x25519Stanza(share: share)], source: "zero.age") }
            expectError(error, is: "malformedHeader", mentioning: ["zero.age", "low-order"])
        }
    }

    @Test("wrapping to a low-order recipient is refused")
    func lowOrderRecipient() throws {
        let recipient = try X25519Recipient("age1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq5cu47z")
        let error = try thrown(AgeError.self) { try recipient.wrap(fileKey: SecretBytes(RandomBytes.make(16))) }
        expectError(error, is: "invalidKey", mentioning: ["low-order"])
    }

    @Test("python cryptography opens a stanza Signet wraps")
    func pythonOpensOurStanza() throws {
        let identity = try X25519Identity(F.identity)
        let fileKey = SecretBytes(RandomBytes.make(16))
        let stanza = try #require(try identity.recipient.wrap(fileKey: fileKey).first)
        let script = """
            import base64, sys
            from cryptography.hazmat.primitives import hashes, serialization
            from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
            from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
            from cryptography.hazmat.primitives.kdf.hkdf import HKDF
            def unpadded(text):
                assert '=' not in text
                return base64.b64decode(text + '=' * (-len(text) % 4), validate=True)
            key = X25519PrivateKey.from_private_bytes(bytes.fromhex(sys.argv[1]))
            me = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
            share, body = unpadded(sys.argv[2]), unpadded(sys.argv[3])
            shared = key.exchange(X25519PublicKey.from_public_bytes(share))
            wrap = HKDF(hashes.SHA256(), 32, share + me, b'age-encryption.org/v1/X25519').derive(shared)
            print(ChaCha20Poly1305(wrap).decrypt(bytes(12), body, None).hex())
            """
        let result = try Python.runOK(script, [F.identitySecretHex, stanza.arguments[0], F.encodeUnpadded(stanza.body)])
        #expect(result.out.trimmingCharacters(in: .whitespacesAndNewlines) == F.hex(fileKey.bytes))
    }

    @Test("a stanza the age CLI writes opens")
    func ageCLIStanza() throws {
        let folder = try TemporaryFolder()
        let identity = X25519Identity.generate()
        let input = try folder.write("in.txt", "hello\n")
        let age = try #require(ProcessRunner.which("age"), "age is not installed (Scripts/test installs the Debian package age)")
        let result = try ProcessRunner.run(age, ["-r", identity.recipient.string, "-o", folder.file("out.age"), input])
        try #require(result.status == 0, "\(result)")
        let stanzas = F.stanzas(ofAgeFile: Array(try Data(contentsOf: folder.fileURL("out.age"))))
        #expect(stanzas.contains { $0.type == "X25519" })
        #expect(try identity.unwrap(stanzas: stanzas, source: "out.age")?.count == 16)
        #expect(try X25519Identity.generate().unwrap(stanzas: stanzas, source: "out.age") == nil)
    }
}
