import Crypto
import CryptoExtras
import Foundation
import SignetAge
import SignetCore
import SignetTestSupport
import Testing

/// The tutorial's chunked RSA PKCS#1 v1.5 scheme, read-only. The ciphertexts are made here with
/// swift-crypto's PKCS#1 v1.5 encryption (the CLI tests make them with openssl).
@Suite struct LegacyRSAPKCS1Tests {
    static let weak = try! PrivateKey.generate(.rsa1024, policy: KeyPolicy(allowWeakRSA: true))
    static let strong = try! PrivateKey.generate(.rsa2048)

    /// `plaintext` as the tutorial encrypts it: k − 11 byte chunks, each PKCS#1 v1.5 encrypted.
    static func tutorialCiphertext(_ plaintext: [UInt8], key: PrivateKey) throws -> [UInt8] {
        let rsa = try #require(key.rsaKey)
        let publicKey = try _RSA.Encryption.PublicKey(unsafeDERRepresentation: rsa.publicKey.derRepresentation)
        let chunk = rsa.keySizeInBits / 8 - 11
        var ciphertext: [UInt8] = []
        var offset = 0
        repeat {
            let end = min(offset + chunk, plaintext.count)
            ciphertext += try publicKey.encrypt(plaintext[offset..<end], padding: ._WEAK_AND_INSECURE_PKCS_V1_5)
            offset = end
        } while offset < plaintext.count
        return ciphertext
    }

    @Test("base64 (as the tutorial sends it, wrapped or not) and raw binary decrypt, for 1024- and 2048-bit keys",
          arguments: [0, 1, 117, 118, 245, 1000])
    func decrypts(size: Int) throws {
        let plaintext = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        for key in [Self.weak, Self.strong] {
            let ciphertext = try Self.tutorialCiphertext(plaintext, key: key)
            let base64 = Data(ciphertext).base64EncodedString()
            let wrapped = Data(ciphertext).base64EncodedString(options: [.lineLength76Characters, .endLineWithLineFeed]) + "\n"
            for input in [Array(base64.utf8), Array(wrapped.utf8), ciphertext] {
                #expect(try LegacyRSAPKCS1.decrypt(input, privateKey: key, source: "in") == plaintext)
            }
        }
    }

    @Test("another key, a truncated or altered input, an empty one and a key that is not RSA are refused")
    func refusals() throws {
        let ciphertext = try Self.tutorialCiphertext(Array(repeating: 0x41, count: 300), key: Self.weak)
        let other = try PrivateKey.generate(.rsa1024, policy: KeyPolicy(allowWeakRSA: true))
        let wrongKey = try thrown(AgeError.self) { _ = try LegacyRSAPKCS1.decrypt(ciphertext, privateKey: other, source: "in") }
        #expect(wrongKey.code == "payloadInvalid" && wrongKey.description.contains("block 1 of 3"), "\(wrongKey)")
        let truncated = Array(Data(ciphertext.dropLast(5)).base64EncodedString().utf8)
        let cut = try thrown(AgeError.self) { _ = try LegacyRSAPKCS1.decrypt(truncated, privateKey: Self.weak, source: "in") }
        #expect(cut.description.contains("not a whole number of 128-byte blocks"), "\(cut)")
        let largerKey = try thrown(AgeError.self) { _ = try LegacyRSAPKCS1.decrypt(ciphertext, privateKey: Self.strong, source: "in") }
        #expect(largerKey.description.contains("256-byte"), "\(largerKey)")
        var altered = ciphertext
        altered[200] ^= 0x01
        let changed = try thrown(AgeError.self) { _ = try LegacyRSAPKCS1.decrypt(altered, privateKey: Self.weak, source: "in") }
        #expect(changed.description.contains("block 2 of 3"), "\(changed)")
        #expect(try thrown(AgeError.self) { _ = try LegacyRSAPKCS1.decrypt([], privateKey: Self.weak, source: "in") }.code == "payloadInvalid")
        let ed25519 = try PrivateKey.generate(.ed25519)
        #expect(try thrown(AgeError.self) { _ = try LegacyRSAPKCS1.decrypt(ciphertext, privateKey: ed25519, source: "in") }.code == "invalidKey")
    }
}
