import Crypto
import CryptoExtras
import Foundation
@testable import SignetAge
import SignetCore
import SignetTestSupport
import Testing

/// One Wycheproof RSAES-OAEP decryption vector (SHA-256, MGF1-SHA-256), with its group's key.
struct OAEPVector: Sendable, CustomTestStringConvertible {
    var file: String
    var id: Int
    var comment: String
    var keyBits: Int
    var pkcs8: [UInt8]
    var message: [UInt8]
    var ciphertext: [UInt8]
    var label: [UInt8]
    /// `valid`, `acceptable` (valid, for small moduli) or `invalid`.
    var result: String

    var testDescription: String { "\(file) #\(id) \(keyBits) bits \(result) \(comment)" }

    private struct File: Decodable {
        var testGroups: [Group]
    }

    private struct Group: Decodable {
        var keysize: Int
        var sha: String
        var mgfSha: String
        var privateKeyPkcs8: String
        var tests: [Test]
    }

    private struct Test: Decodable {
        var tcId: Int
        var comment: String
        var msg: String
        var ct: String
        var label: String
        var result: String
    }

    /// Every SHA-256 vector of the two files in `Vectors/wycheproof` (see its README).
    static func loadAll() throws -> [OAEPVector] {
        var vectors: [OAEPVector] = []
        for name in ["rsa_oaep_2048_sha256_mgf1sha256_test.json", "rsa_oaep_misc_sha256_test.json"] {
            let file = try JSONDecoder().decode(File.self, from: TestVectors.data("wycheproof/\(name)", in: .module))
            for group in file.testGroups where group.sha == "SHA-256" && group.mgfSha == "SHA-256" {
                let key = try TestVectors.bytes(hex: group.privateKeyPkcs8)
                for test in group.tests {
                    vectors.append(OAEPVector(
                        file: name, id: test.tcId, comment: test.comment, keyBits: group.keysize, pkcs8: key,
                        message: try TestVectors.bytes(hex: test.msg), ciphertext: try TestVectors.bytes(hex: test.ct),
                        label: try TestVectors.bytes(hex: test.label), result: test.result))
                }
            }
        }
        return vectors
    }
}

@Suite struct RSAOAEPTests {
    static let vectors = (try? OAEPVector.loadAll()) ?? []

    @Test("the Wycheproof files load, with labelled vectors among them")
    func vectorsLoad() {
        #expect(Self.vectors.count == 35 + 56)
        #expect(Self.vectors.filter { !$0.label.isEmpty }.count >= 24)
        #expect(Self.vectors.contains { $0.result == "invalid" })
    }

    @Test("Wycheproof RSAES-OAEP-SHA256 decryption vectors", arguments: RSAOAEPTests.vectors)
    func wycheproof(vector: OAEPVector) throws {
        let key = try _RSA.Signing.PrivateKey(unsafeDERRepresentation: vector.pkcs8)
        if vector.result == "invalid" {
            #expect(throws: RSAOAEP.Failure.decryptionError) {
                _ = try RSAOAEP.decrypt(vector.ciphertext, label: vector.label, privateKey: key)
            }
        } else {
            let message = try RSAOAEP.decrypt(vector.ciphertext, label: vector.label, privateKey: key)
            #expect(message.bytes == vector.message)
        }
    }

    @Test("a wrong label is a decryption error, the same as any other")
    func wrongLabel() throws {
        let vector = try #require(Self.vectors.first { !$0.label.isEmpty && $0.result == "valid" })
        let key = try _RSA.Signing.PrivateKey(unsafeDERRepresentation: vector.pkcs8)
        #expect(throws: RSAOAEP.Failure.decryptionError) {
            _ = try RSAOAEP.decrypt(vector.ciphertext, label: vector.label + [0], privateKey: key)
        }
        #expect(throws: RSAOAEP.Failure.decryptionError) {
            _ = try RSAOAEP.decrypt(vector.ciphertext, label: [], privateKey: key)
        }
    }

    @Test("our encryption decrypts with swift-crypto's OAEP-SHA256 (empty label), and the reverse")
    func crossCheckWithBoringSSL() throws {
        let signing = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let encryption = try _RSA.Encryption.PrivateKey(derRepresentation: signing.derRepresentation)
        for length in [0, 1, 16, 190] {
            let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
            let ours = try RSAOAEP.encrypt(message, label: [], publicKey: signing.publicKey)
            #expect(ours.count == 256)
            #expect(Array(try encryption.decrypt(ours, padding: .PKCS1_OAEP_SHA256)) == message)
            let theirs = try encryption.publicKey.encrypt(message, padding: .PKCS1_OAEP_SHA256)
            #expect(try RSAOAEP.decrypt(Array(theirs), label: [], privateKey: signing).bytes == message)
        }
    }

    @Test("encryption round trips under age's label; the seed makes each ciphertext new")
    func roundTrip() throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let message = Array(0..<16).map { UInt8($0) }
        let first = try RSAOAEP.encrypt(message, label: SSHRSARecipient.label, publicKey: key.publicKey)
        let second = try RSAOAEP.encrypt(message, label: SSHRSARecipient.label, publicKey: key.publicKey)
        #expect(first != second)
        #expect(try RSAOAEP.decrypt(first, label: SSHRSARecipient.label, privateKey: key).bytes == message)
    }

    @Test("the longest message is k − 2·hLen − 2 bytes; one more is refused")
    func messageLength() throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let longest = [UInt8](repeating: 0x42, count: 256 - 66)
        let ciphertext = try RSAOAEP.encrypt(longest, label: [], publicKey: key.publicKey)
        #expect(try RSAOAEP.decrypt(ciphertext, label: [], privateKey: key).bytes == longest)
        #expect(throws: RSAOAEP.Failure.messageTooLong) {
            _ = try RSAOAEP.encrypt(longest + [0], label: [], publicKey: key.publicKey)
        }
    }

    @Test("EME-OAEP decoding refuses each broken field of a well-formed encoding")
    func decodeChecks() throws {
        let label = Array("L".utf8)
        let seed = [UInt8](repeating: 0x5C, count: 32)
        let encoded = RSAOAEP.encode([1, 2, 3], label: label, seed: seed, k: 128)
        #expect(RSAOAEP.decode(encoded, label: label)?.bytes == [1, 2, 3])
        // The first byte, then a byte of each masked part: every change breaks the decoding.
        for index in [0, 1, 32, 33, 64, 127] {
            var broken = encoded
            broken[index] ^= 0x01
            #expect(RSAOAEP.decode(broken, label: label) == nil, "byte \(index) flipped")
        }
        #expect(RSAOAEP.decode(Array(encoded.prefix(65)), label: label) == nil)
    }

    @Test("the branch-free zero mask")
    func zeroMask() {
        #expect(RSAOAEP.isZeroMask(0) == ~0)
        for value: UInt in [1, 2, 0x80, 0xFF, UInt.max, 1 << (UInt.bitWidth - 1)] {
            #expect(RSAOAEP.isZeroMask(value) == 0)
        }
    }
}
