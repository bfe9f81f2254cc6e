import Foundation
import SignetAge
import SignetCore
import SignetTestSupport
import Testing

/// Passphrase stanzas at a low work factor (2^10) so that the suite stays fast; the bound is
/// tested with work factors that are refused before scrypt runs.
@Suite("age scrypt recipients and identities")
struct AgeScryptTests {
    typealias F = AgeRecipientFixtures

    @Test("a stanza made by python hashlib opens to its file key")
    func knownStanza() throws {
        let identity = ScryptIdentity(passphrase: F.secret(F.passphrase))
        let fileKey = try identity.unwrap(stanzas: [F.scryptStanza()], source: "known.age")
        #expect(fileKey.map { F.hex($0.bytes) } == F.fileKeyHex)
    }

    @Test("wrap then unwrap gives the file key back; the stanza is `scrypt <salt> <logN>`")
    func roundTrip() throws {
        let recipient = try ScryptRecipient(passphrase: F.secret("hunter2"), logN: 10)
        #expect(recipient.isPassphrase && recipient.logN == 10)
        let fileKey = SecretBytes(RandomBytes.make(16))
        let stanzas = try recipient.wrap(fileKey: fileKey)
        let stanza = try #require(stanzas.first)
        #expect(stanzas.count == 1 && stanza.type == "scrypt" && stanza.arguments.count == 2 && stanza.body.count == 32)
        #expect(F.unpadded(stanza.arguments[0]).count == 16 && !stanza.arguments[0].contains("="))
        #expect(stanza.arguments[1] == "10")
        let opened = try ScryptIdentity(passphrase: F.secret("hunter2")).unwrap(stanzas: stanzas, source: "t.age")
        #expect(opened?.bytes == fileKey.bytes)
        #expect(try recipient.wrap(fileKey: fileKey).first?.arguments[0] != stanza.arguments[0])
    }

    @Test("the wrong passphrase is refused as such")
    func wrongPassphrase() throws {
        for passphrase in ["correct horse battery stapler", ""] {
            let identity = ScryptIdentity(passphrase: F.secret(passphrase))
            let error = try thrown(AgeError.self) { try identity.unwrap(stanzas: [F.scryptStanza()], source: "secret.age") }
            expectError(error, is: "wrongPassphrase", mentioning: ["secret.age"])
        }
    }

    @Test("a work factor above the bound is refused before scrypt runs")
    func workFactorBound() throws {
        let low = ScryptIdentity(passphrase: F.secret(F.passphrase), maximumLogN: 9)
        let error = try thrown(AgeError.self) { try low.unwrap(stanzas: [F.scryptStanza()], source: "slow.age") }
        expectError(error, is: "workFactorTooHigh", mentioning: ["slow.age", "2^10", "2^9"])
        #expect(error == .workFactorTooHigh(source: "slow.age", logN: 10, maximum: 9))

        // Refused by the bound: were it not, scrypt itself would refuse 2^40 at once rather
        // than try to allocate 1 PiB.
        let standard = ScryptIdentity(passphrase: F.secret(F.passphrase))
        #expect(standard.maximumLogN == ScryptIdentity.defaultMaximumLogN && ScryptIdentity.defaultMaximumLogN == 20)
        for logN in ["40", "123456789012345678901234567890"] {
            let stanza = F.scryptStanza(arguments: [F.scryptSalt, logN])
            let error = try thrown(AgeError.self) { try standard.unwrap(stanzas: [stanza], source: "huge.age") }
            expectError(error, is: "workFactorTooHigh", mentioning: ["huge.age", "2^20"])
        }
    }

    @Test("the bound given is clamped to the work factors age allows")
    func boundClamped() {
        #expect(ScryptIdentity(passphrase: F.secret("x"), maximumLogN: 99).maximumLogN == 30)
        #expect(ScryptIdentity(passphrase: F.secret("x"), maximumLogN: 0).maximumLogN == 1)
    }

    @Test("malformed scrypt stanzas are refused before scrypt runs")
    func malformedStanzas() throws {
        let identity = ScryptIdentity(passphrase: F.secret(F.passphrase))
        let salt15 = F.encodeUnpadded([UInt8](repeating: 0, count: 15))
        let salt17 = F.encodeUnpadded([UInt8](repeating: 0, count: 17))
        var cases: [(AgeStanza, String)] = [
            (F.scryptStanza(arguments: [F.scryptSalt]), "1 arguments"),
            (F.scryptStanza(arguments: [F.scryptSalt, "10", "x"]), "3 arguments"),
            (F.scryptStanza(arguments: [salt15, "10"]), "16 bytes"),
            (F.scryptStanza(arguments: [salt17, "10"]), "16 bytes"),
            (F.scryptStanza(arguments: [F.scryptSalt + "==", "10"]), "canonical"),
            (F.scryptStanza(arguments: [String(F.scryptSalt.dropLast()) + "x", "10"]), "canonical"),
            (F.scryptStanza(body: Array(F.unpadded(F.scryptBody).dropLast())), "31 bytes, not 32"),
            (F.scryptStanza(body: F.unpadded(F.scryptBody) + [0]), "33 bytes, not 32"),
        ]
        for logN in ["010", "0", "-1", "+5", "1e3", "", " 10", "10 ", "0x0a", "\u{0661}\u{0660}"] {
            cases.append((F.scryptStanza(arguments: [F.scryptSalt, logN]), "leading zeros"))
        }
        for (stanza, fragment) in cases {
            let error = try thrown(AgeError.self) { try identity.unwrap(stanzas: [stanza], source: "bad.age") }
            expectError(error, is: "malformedHeader", mentioning: ["bad.age", fragment])
        }
    }

    @Test("an scrypt stanza must be the file's only stanza")
    func onlyStanza() throws {
        let identity = ScryptIdentity(passphrase: F.secret(F.passphrase))
        for stanzas in [[F.scryptStanza(), F.x25519Stanza()], [F.x25519Stanza(), F.scryptStanza()], [F.scryptStanza(), F.scryptStanza()]] {
            let error = try thrown(AgeError.self) { try identity.unwrap(stanzas: stanzas, source: "mixed.age") }
            expectError(error, is: "malformedHeader", mentioning: ["mixed.age", "only stanza"])
        }
        #expect(try identity.unwrap(stanzas: [F.x25519Stanza()], source: "x.age") == nil)
        #expect(try identity.unwrap(stanzas: [], source: "x.age") == nil)
    }

    @Test("a recipient refuses an empty passphrase and work factors age does not allow")
    func recipientArguments() throws {
        let empty = try thrown(AgeError.self) { try ScryptRecipient(passphrase: SecretBytes([UInt8]())) }
        expectError(empty, is: "invalidArgument", mentioning: ["empty"])
        for logN in [0, 31, -1] {
            let error = try thrown(AgeError.self) { try ScryptRecipient(passphrase: F.secret("x"), logN: logN) }
            expectError(error, is: "invalidArgument", mentioning: ["2^\(logN)"])
        }
        #expect(try ScryptRecipient(passphrase: F.secret("x")).logN == 18)
    }

    @Test("python hashlib opens a stanza Signet wraps")
    func pythonOpensOurStanza() throws {
        let fileKey = SecretBytes(RandomBytes.make(16))
        let stanza = try #require(try ScryptRecipient(passphrase: F.secret("pässword"), logN: 10).wrap(fileKey: fileKey).first)
        let script = """
            import base64, hashlib, sys
            from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
            def unpadded(text):
                assert '=' not in text
                return base64.b64decode(text + '=' * (-len(text) % 4), validate=True)
            salt, logn, body = unpadded(sys.argv[2]), int(sys.argv[3]), unpadded(sys.argv[4])
            key = hashlib.scrypt(bytes.fromhex(sys.argv[1]), salt=b'age-encryption.org/v1/scrypt' + salt, n=1 << logn, r=8, p=1, dklen=32)
            print(ChaCha20Poly1305(key).decrypt(bytes(12), body, None).hex())
            """
        let passphrase = F.hex(Array("pässword".utf8))
        let result = try Python.runOK(script, [passphrase, stanza.arguments[0], stanza.arguments[1], F.encodeUnpadded(stanza.body)])
        #expect(result.out.trimmingCharacters(in: .whitespacesAndNewlines) == F.hex(fileKey.bytes))
    }
}
