import Crypto
import CryptoExtras
import Foundation
@testable import SignetAge
import SignetCore
import SignetTestSupport
import Testing

/// The `ssh-ed25519` and `ssh-rsa` recipient types in process: the Ed25519→X25519 map, stanza
/// shapes and tags, and the refusals. Interoperability with age and pyrage is in the CLI tests.
@Suite struct AgeSSHTests {
    static let ed25519 = try! PrivateKey.generate(.ed25519)
    static let rsa = try! PrivateKey.generate(.rsa2048)

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// The 32-byte little-endian encoding of a small y, with the x sign bit as given.
    static func edwards(y: UInt8, sign: Bool = false) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 32)
        bytes[0] = y
        if sign { bytes[31] |= 0x80 }
        return bytes
    }

    // MARK: Ed25519 → X25519

    @Test("libsodium's crypto_sign_ed25519_pk_to_curve25519 and sk_to_curve25519 vector")
    func libsodiumVector() throws {
        // test/default/ed25519_convert.c and .exp in libsodium: the seed, then the converted keys
        // (the secret one as libsodium clamps it).
        let seed = try TestVectors.bytes(hex: "421151a459faeade3d247115f94aedae42318124095afabe4d1451a559faedee")
        let signing = try Curve25519.Signing.PrivateKey(rawRepresentation: seed)
        let u = try #require(Ed25519Montgomery.publicKey(edwards: Array(signing.publicKey.rawRepresentation)))
        #expect(Self.hex(u) == "f1814f0e8ff1043d8a44d25babff3cedcae6c22c3edaa48f857ae70de2baae50")
        let converted = try Ed25519Montgomery.privateKey(seed: seed)
        var scalar = Array(SHA512.hash(data: seed).prefix(32))
        scalar[0] &= 248
        scalar[31] = scalar[31] & 127 | 64
        #expect(Self.hex(scalar) == "8052030376d47112be7f73ed7a019293dd12ad910b654455798b4667d73de166")
        #expect(Array(converted.publicKey.rawRepresentation) == u)
    }

    @Test("the public map agrees with X25519 of the converted secret, for 64 random keys")
    func mapsAgree() throws {
        for _ in 0..<64 {
            let signing = Curve25519.Signing.PrivateKey()
            let u = try #require(Ed25519Montgomery.publicKey(edwards: Array(signing.publicKey.rawRepresentation)))
            let converted = try Ed25519Montgomery.privateKey(seed: Array(signing.rawRepresentation))
            #expect(Array(converted.publicKey.rawRepresentation) == u)
        }
    }

    @Test("encodings that are not points are refused; non-canonical ones are read as age reads them")
    func pointChecks() throws {
        // y = 2: (y² − 1)/(d·y² + 1) is not a square, so no x exists.
        #expect(Ed25519Montgomery.publicKey(edwards: Self.edwards(y: 2)) == nil)
        #expect(Ed25519Montgomery.publicKey(edwards: [UInt8](repeating: 1, count: 31)) == nil)
        // The identity (y = 1) maps to u = 0, for X25519 to refuse as low order.
        #expect(Ed25519Montgomery.publicKey(edwards: Self.edwards(y: 1)) == [UInt8](repeating: 0, count: 32))
        // The sign of x does not change u; y + p is read as y (filippo.io/edwards25519 does both).
        let signing = Curve25519.Signing.PrivateKey()
        var encoded = Array(signing.publicKey.rawRepresentation)
        let u = Ed25519Montgomery.publicKey(edwards: encoded)
        encoded[31] ^= 0x80
        #expect(Ed25519Montgomery.publicKey(edwards: encoded) == u)
        // y = 3 + p: the bytes of p + 3 = 2^255 − 16, the top bit cleared.
        var nonCanonical = [UInt8](repeating: 0xFF, count: 32)
        nonCanonical[0] = 0xF0
        nonCanonical[31] = 0x7F
        #expect(Ed25519Montgomery.publicKey(edwards: nonCanonical) == Ed25519Montgomery.publicKey(edwards: Self.edwards(y: 3)))
    }

    @Test("an Ed25519 key of low order cannot be encrypted to")
    func lowOrderRecipient() throws {
        // y = 1 (the identity, u = 0) and y = 0 (order 4, u = 1) both give an all-zero secret.
        for y: UInt8 in [0, 1] {
            let line = "ssh-ed25519 " + Base64.encode(Self.wire("ssh-ed25519", Self.edwards(y: y)))
            let error = try thrown(AgeError.self) {
                let recipient = try AgeSSH.recipient(line: line, source: "low order")
                _ = try recipient.wrap(fileKey: SecretBytes([UInt8](repeating: 7, count: 16)))
            }
            #expect(error.code == "invalidKey", "y = \(y): \(error)")
        }
    }

    // MARK: Stanzas

    @Test("ssh-ed25519: stanza shape, tag, and a round trip; another key is not matched")
    func ed25519RoundTrip() throws {
        let recipient = try SSHEd25519Recipient(publicKey: Self.ed25519.publicKey, source: "test")
        let file = try AgeEncryptor(recipients: [recipient]).encrypt(Array("hello".utf8))
        let stanza = try #require(try Self.stanzas(file).first)
        #expect(stanza.type == "ssh-ed25519")
        #expect(stanza.arguments.count == 2)
        #expect(stanza.arguments[0] == Self.tag(Self.ed25519.publicKey))
        #expect(stanza.body.count == 32)
        let identity = try SSHEd25519Identity(privateKey: Self.ed25519, source: "test")
        #expect(try AgeDecryptor(identities: [identity]).decrypt(file, source: "f") == Array("hello".utf8))
        #expect(identity.recipientString == recipient.string)
        let other = try SSHEd25519Identity(privateKey: try PrivateKey.generate(.ed25519), source: "other")
        let error = try thrown(AgeError.self) { _ = try AgeDecryptor(identities: [other]).decrypt(file, source: "f") }
        #expect(error.code == "noMatchingIdentity")
    }

    @Test("ssh-rsa: stanza shape, tag, and a round trip; another key is not matched")
    func rsaRoundTrip() throws {
        let recipient = try SSHRSARecipient(publicKey: Self.rsa.publicKey, source: "test")
        let file = try AgeEncryptor(recipients: [recipient]).encrypt(Array("hello".utf8))
        let stanza = try #require(try Self.stanzas(file).first)
        #expect(stanza.type == "ssh-rsa")
        #expect(stanza.arguments == [Self.tag(Self.rsa.publicKey)])
        #expect(stanza.body.count == 256)
        let identity = try SSHRSAIdentity(privateKey: Self.rsa, source: "test")
        #expect(try AgeDecryptor(identities: [identity]).decrypt(file, source: "f") == Array("hello".utf8))
        let other = try SSHRSAIdentity(privateKey: try PrivateKey.generate(.rsa2048), source: "other")
        let error = try thrown(AgeError.self) { _ = try AgeDecryptor(identities: [other]).decrypt(file, source: "f") }
        #expect(error.code == "noMatchingIdentity")
    }

    @Test("a stanza tagged for this key whose body does not open is an error, as in age; another key's is skipped")
    func alteredBody() throws {
        let identity = try SSHRSAIdentity(privateKey: Self.rsa, source: "test")
        let stanza = AgeStanza(type: "ssh-rsa", arguments: [Self.tag(Self.rsa.publicKey)], body: [UInt8](repeating: 1, count: 256))
        let error = try thrown(AgeError.self) { _ = try identity.unwrap(stanzas: [stanza], source: "f") }
        #expect(error.code == "stanzaDoesNotOpen" && error.category == .checkFailed)
        #expect(error.description.contains("ssh-rsa stanza for this key does not open"), "\(error)")
        let edIdentity = try SSHEd25519Identity(privateKey: Self.ed25519, source: "test")
        let share = Base64.encodeUnpadded(Array(Curve25519.KeyAgreement.PrivateKey().publicKey.rawRepresentation))
        let edStanza = AgeStanza(type: "ssh-ed25519", arguments: [Self.tag(Self.ed25519.publicKey), share], body: [UInt8](repeating: 1, count: 32))
        #expect(try thrown(AgeError.self) { _ = try edIdentity.unwrap(stanzas: [edStanza], source: "f") }.code == "stanzaDoesNotOpen")
        let otherTag = AgeStanza(type: "ssh-ed25519", arguments: ["AAAAAA", share], body: [UInt8](repeating: 1, count: 32))
        #expect(try edIdentity.unwrap(stanzas: [otherTag], source: "f") == nil)
    }

    @Test("malformed ssh stanzas are header errors", arguments: [
        ("ssh-rsa", ["AAAAAA", "x"], "2 arguments after its type, not 1"),
        ("ssh-ed25519", ["AAAAAA"], "1 arguments after its type, not 2"),
        ("ssh-ed25519", ["AAAAAA", "AAAA"], "ephemeral share"),
    ])
    func malformedStanzas(type: String, arguments: [String], mentioning: String) throws {
        let identity: any AgeIdentity = type == "ssh-rsa"
            ? try SSHRSAIdentity(privateKey: Self.rsa, source: "t") : try SSHEd25519Identity(privateKey: Self.ed25519, source: "t")
        let error = try thrown(AgeError.self) {
            _ = try identity.unwrap(stanzas: [AgeStanza(type: type, arguments: arguments, body: [UInt8](repeating: 0, count: 32))], source: "f")
        }
        #expect(error.code == "malformedHeader")
        #expect(error.description.contains(mentioning), "\(error)")
    }

    @Test("a stanza whose tag is no key's (even a malformed one) is not this identity's: skipped, as the reference does")
    func foreignTags() throws {
        let rsa = try SSHRSAIdentity(privateKey: Self.rsa, source: "t")
        let ed = try SSHEd25519Identity(privateKey: Self.ed25519, source: "t")
        let share = Base64.encodeUnpadded(Array(Curve25519.KeyAgreement.PrivateKey().publicKey.rawRepresentation))
        for tag in ["AAAAA", "AAAAAB", "AAAAAA==", "AAAAAA"] {
            #expect(try rsa.unwrap(stanzas: [AgeStanza(type: "ssh-rsa", arguments: [tag], body: [1, 2, 3])], source: "f") == nil)
            // Another key's stanza with a body of the wrong length is not looked at either.
            #expect(try ed.unwrap(stanzas: [AgeStanza(type: "ssh-ed25519", arguments: [tag, share], body: [1, 2, 3])], source: "f") == nil)
        }
    }

    @Test("an ssh-ed25519 body of the wrong length and a low-order share are header errors")
    func ed25519StanzaChecks() throws {
        let identity = try SSHEd25519Identity(privateKey: Self.ed25519, source: "t")
        let tag = Self.tag(Self.ed25519.publicKey)
        let share = Base64.encodeUnpadded(Array(Curve25519.KeyAgreement.PrivateKey().publicKey.rawRepresentation))
        let long = AgeStanza(type: "ssh-ed25519", arguments: [tag, share], body: [UInt8](repeating: 0, count: 33))
        #expect(try thrown(AgeError.self) { _ = try identity.unwrap(stanzas: [long], source: "f") }.code == "malformedHeader")
        let zero = Base64.encodeUnpadded([UInt8](repeating: 0, count: 32))
        let lowOrder = AgeStanza(type: "ssh-ed25519", arguments: [tag, zero], body: [UInt8](repeating: 0, count: 32))
        let error = try thrown(AgeError.self) { _ = try identity.unwrap(stanzas: [lowOrder], source: "f") }
        #expect(error.description.contains("low-order"), "\(error)")
    }

    // MARK: Recipient lines

    @Test("authorized_keys lines: options, quotes and comments around the key")
    func authorizedKeysLines() throws {
        let line = Self.ed25519.publicKey.openSSHLine()
        let expected = try SSHEd25519Recipient(publicKey: Self.ed25519.publicKey, source: "x").string
        for text in [
            line, line + " user@host", "no-pty " + line,
            #"command="echo a b",no-agent-forwarding "# + line + " a comment",
            "restrict,from=\"10.0.0.1\"\t" + line,
        ] {
            let recipient = try AgeKeyFile.recipient(text, source: "line")
            #expect((recipient as? SSHEd25519Recipient)?.string == expected, "\(text)")
        }
        let rsa = try AgeKeyFile.recipient(Self.rsa.publicKey.openSSHLine(comment: "me"), source: "line")
        #expect(rsa is SSHRSARecipient)
    }

    @Test("options are skipped by OpenSSH's own rule: the key taken is the one ssh-keygen -l reads")
    func authorizedKeysQuoting() throws {
        let a = Self.ed25519.publicKey.openSSHLine()
        let other = try PrivateKey.generate(.ed25519).publicKey
        let b = other.openSSHLine()
        func key(_ line: String) throws -> String? { (try AgeKeyFile.recipient(line, source: "line") as? SSHEd25519Recipient)?.string }
        // \" inside quotes does not close them: the options run to the quote after "c".
        #expect(try key(#"command="x\\" \#(a) c" \#(b)"#) == b)
        // \" outside quotes opens nothing: the options end at the first blank.
        #expect(try key(#"from=\" \#(a) " \#(b)"#) == a)
        #expect(try key(#"command="echo \"hi\"",no-pty \#(b) comment"#) == b)
        // A quote that never closes is not a key line.
        let open = try thrown(AgeError.self) { _ = try AgeKeyFile.recipient(#"command="x \#(a)"#, source: "line") }
        #expect(open.code == "invalidKey", "\(open)")
    }

    @Test("keys age cannot encrypt to are refused", arguments: [
        ("ecdsa", "unsupported", "ssh-rsa and ssh-ed25519 keys only"),
        ("sk", "unsupported", "sk-ssh-ed25519@openssh.com"),
        ("dss", "unsupported", "ssh-dss"),
        ("rsa1024", "invalidKey", "too small"),
        ("truncated", "invalidKey", "ssh-ed25519"),
        ("alone", "invalidKey", "OpenSSH public key"),
    ])
    func refusedLines(kind: String, code: String, mentioning: String) throws {
        let line: String
        switch kind {
        case "ecdsa": line = try PrivateKey.generate(.p256).publicKey.openSSHLine()
        case "sk": line = "sk-ssh-ed25519@openssh.com AAAAGnNrLXNzaC1lZDI1NTE5QG9wZW5zc2guY29t"
        case "dss": line = "ssh-dss AAAAB3NzaC1kc3M="
        case "rsa1024": line = try PrivateKey.generate(.rsa1024, policy: KeyPolicy(allowWeakRSA: true)).publicKey.openSSHLine()
        case "truncated": line = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA"
        default: line = "ssh-ed25519"
        }
        let error = try thrown(AgeError.self) { _ = try AgeKeyFile.recipient(line, source: "line") }
        #expect(error.code.name == code, "\(error)")
        #expect(error.description.contains(mentioning), "\(error)")
    }

    @Test("X25519Recipient alone refuses an OpenSSH key, pointing elsewhere")
    func x25519RefusesSSH() throws {
        let error = try thrown(AgeError.self) { _ = try X25519Recipient(Self.ed25519.publicKey.openSSHLine()) }
        #expect(error.code == "invalidKey")
        #expect(error.description.contains("an OpenSSH public key"))
    }

    @Test("recipients files mix age1 and OpenSSH lines; a PEM public key file is one recipient")
    func recipientsFiles() throws {
        let x25519 = X25519Identity.generate().recipient.string
        let text = "# team\n\(x25519)\n\nno-pty \(Self.ed25519.publicKey.openSSHLine(comment: "ed"))\n\(Self.rsa.publicKey.openSSHLine())\n"
        let recipients = try AgeKeyFile.recipients(in: Array(text.utf8), source: "team.txt")
        #expect(recipients.count == 3)
        #expect(recipients[0] is X25519Recipient && recipients[1] is SSHEd25519Recipient && recipients[2] is SSHRSARecipient)
        let pem = Array(try Self.ed25519.publicKey.encoded(as: .pem))
        let fromPEM = try AgeKeyFile.recipients(in: pem, source: "ed.pub.pem")
        #expect((fromPEM.first as? SSHEd25519Recipient)?.string == (recipients[1] as? SSHEd25519Recipient)?.string)
        let bad = "\(x25519)\nssh-ed25519 AAAA\n"
        let error = try thrown(AgeError.self) { _ = try AgeKeyFile.recipients(in: Array(bad.utf8), source: "bad.txt") }
        #expect(error.description.contains("line 2"), "\(error)")
    }

    @Test("identity files: a PEM private key is one identity; a public key or an ECDSA key is refused")
    func identityFiles() throws {
        let pem = try Self.rsa.encoded(as: .pem)
        let identities = try AgeKeyFile.identities(in: pem, source: "rsa.pem")
        #expect(identities.count == 1 && identities[0] is SSHRSAIdentity)
        #expect(identities[0].recipientString == Self.rsa.publicKey.openSSHLine())
        let publicPEM = try Self.rsa.publicKey.encoded(as: .pem)
        #expect(try thrown(AgeError.self) { _ = try AgeKeyFile.identities(in: publicPEM, source: "p") }.code == "invalidKey")
        let ecdsa = try PrivateKey.generate(.p256).encoded(as: .pem)
        #expect(try thrown(AgeError.self) { _ = try AgeKeyFile.identities(in: ecdsa, source: "e") }.code == "unsupported")
    }

    // MARK: Helpers

    static func tag(_ key: PublicKey) -> String {
        Data(SHA256.hash(data: key.openSSHWireFormat).prefix(4)).base64EncodedString().replacingOccurrences(of: "=", with: "")
    }

    static func wire(_ type: String, _ key: [UInt8]) -> [UInt8] {
        func string(_ bytes: [UInt8]) -> [UInt8] {
            let n = UInt32(bytes.count)
            return [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + bytes
        }
        return string(Array(type.utf8)) + string(key)
    }

    /// The stanzas of a binary age file's header.
    static func stanzas(_ file: [UInt8]) throws -> [AgeStanza] {
        try AgeHeader.parse(file, source: "f").stanzas
    }
}
