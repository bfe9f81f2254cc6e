import Crypto
import Foundation
@testable import SignetAge
import SignetCore
import SignetTestSupport
import Testing

/// The `mlkem768x25519` recipient type in process. The CCTV kit's `hybrid_*` vectors (in
/// `AgeVectorTests`) cover decryption of files made by the reference implementation.
@Suite struct AgePostQuantumTests {
    /// The spec's example identity and recipient (`Vectors/spec`).
    static func example() throws -> (identity: String, recipient: String) {
        let text = String(decoding: try TestVectors.data("spec/mlkem768x25519-example.txt", in: .module), as: UTF8.self)
        let lines = text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
        try #require(lines.count == 2)
        return (lines[0], lines[1])
    }

    @Test("the spec's example identity gives the spec's recipient (X-Wing's PrivateKeyToPublicKey)")
    func specExample() throws {
        let example = try Self.example()
        let identity = try MLKEM768X25519Identity(example.identity)
        #expect(identity.recipient.string == example.recipient)
        #expect(identity.string == example.identity)
        #expect(try MLKEM768X25519Recipient(example.recipient).string == example.recipient)
        #expect(!"\(identity)".contains(example.identity.dropFirst(19).prefix(12)))
        // In a key file, as age-keygen -pq writes it.
        let file = AgeKeyFile.keyFileContents(identity, created: Date(timeIntervalSince1970: 0), timeZone: TimeZone(identifier: "UTC")!)
        let read = try AgeKeyFile.identities(in: Array(file.utf8), source: "pq.txt")
        #expect(read.map(\.recipientString) == [example.recipient])
        #expect((try AgeKeyFile.recipient(example.recipient)) is MLKEM768X25519Recipient)
    }

    @Test("round trip, with the stanza the spec describes; another identity does not match")
    func roundTrip() throws {
        let identity = try MLKEM768X25519Identity.generate()
        let file = try AgeEncryptor(recipients: [identity.recipient]).encrypt(Array("post-quantum".utf8))
        let stanzas = try AgeHeader.parse(file, source: "f").stanzas
        #expect(stanzas.count == 1 && stanzas[0].type == "mlkem768x25519")
        #expect(stanzas[0].arguments.count == 1 && Base64.decodeUnpadded(stanzas[0].arguments[0])?.count == 1120)
        #expect(stanzas[0].body.count == 32)
        #expect(try AgeDecryptor(identities: [identity]).decrypt(file, source: "f") == Array("post-quantum".utf8))
        let other = try MLKEM768X25519Identity.generate()
        #expect(try thrown(AgeError.self) { _ = try AgeDecryptor(identities: [other]).decrypt(file, source: "f") }.code == "noMatchingIdentity")
    }

    @Test("post-quantum recipients are not mixed with classical ones")
    func noMixing() throws {
        let pq = try MLKEM768X25519Identity.generate().recipient
        let classical = X25519Identity.generate().recipient
        let error = try thrown(AgeError.self) { _ = try AgeEncryptor(recipients: [pq, classical]) }
        #expect(error.code == "invalidArgument" && error.description.contains("post-quantum"), "\(error)")
        _ = try AgeEncryptor(recipients: [pq, try MLKEM768X25519Identity.generate().recipient])
    }

    @Test("malformed stanzas are header errors", arguments: [
        ([String](), 32, "0 arguments"), (["AAAA"], 32, "1120 bytes"), (["ENC", "x"], 32, "2 arguments"), (["ENC"], 33, "33 bytes, not 32"),
    ])
    func malformed(arguments: [String], bodyCount: Int, mentioning: String) throws {
        let identity = try MLKEM768X25519Identity.generate()
        let encapsulated = Base64.encodeUnpadded([UInt8](repeating: 9, count: 1120))
        let stanza = AgeStanza(
            type: "mlkem768x25519", arguments: arguments.map { $0 == "ENC" ? encapsulated : $0 }, body: [UInt8](repeating: 0, count: bodyCount))
        let error = try thrown(AgeError.self) { _ = try identity.unwrap(stanzas: [stanza], source: "f") }
        #expect(error.code == "malformedHeader" && error.description.contains(mentioning), "\(error)")
    }

    @Test("the low-order probe: 0, 1 and the order-8 points are low order; a real key is not")
    func lowOrder() {
        #expect(MLKEM768X25519Identity.isLowOrder([UInt8](repeating: 0, count: 32)))
        #expect(MLKEM768X25519Identity.isLowOrder([1] + [UInt8](repeating: 0, count: 31)))
        // 325606250916557431795983626356110631294008115727848805560023387167927233504 (order 8)
        var order8 = [UInt8](repeating: 0, count: 32)
        for (index, byte) in [0xe0, 0xeb, 0x7a, 0x7c, 0x3b, 0x41, 0xb8, 0xae, 0x16, 0x56, 0xe3, 0xfa, 0xf1, 0x9f, 0xc4, 0x6a,
                              0xda, 0x09, 0x8d, 0xeb, 0x9c, 0x32, 0xb1, 0xfd, 0x86, 0x62, 0x05, 0x16, 0x5f, 0x49, 0xb8, 0x00].enumerated() {
            order8[index] = UInt8(byte)
        }
        #expect(MLKEM768X25519Identity.isLowOrder(order8))
        #expect(!MLKEM768X25519Identity.isLowOrder(Array(Curve25519.KeyAgreement.PrivateKey().publicKey.rawRepresentation)))
    }
}
