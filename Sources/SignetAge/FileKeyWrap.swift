import Crypto
import Foundation
import SignetCore

/// The sealing that the X25519 and scrypt stanzas share: ChaCha20-Poly1305 of the 16-byte file
/// key under a one-time wrap key with the all-zero nonce (age-encryption.org/v1), which gives a
/// 32-byte body. The nonce can be fixed because every wrap key comes from fresh randomness.
enum FileKeyWrap {
    /// The size of an age file key.
    static let fileKeyCount = 16
    /// The size of a stanza body: the sealed file key and its 16-byte tag.
    static let bodyCount = 32

    private static let zeroNonce = [UInt8](repeating: 0, count: 12)

    /// The body that carries `fileKey` under `wrapKey`.
    static func seal(_ fileKey: SecretBytes, with wrapKey: SymmetricKey) throws -> [UInt8] {
        guard fileKey.count == fileKeyCount else {
            throw AgeError.invalidArgument(detail: "a file key is \(fileKeyCount) bytes, not \(fileKey.count)")
        }
        do {
            let nonce = try ChaChaPoly.Nonce(data: zeroNonce)
            let box = try fileKey.withUnsafeBytes { bytes in
                try ChaChaPoly.seal(bytes, using: wrapKey, nonce: nonce)
            }
            return Array(box.ciphertext) + Array(box.tag)
        } catch {
            // Unreachable with a 32-byte key and a 12-byte nonce.
            throw AgeError.invalidArgument(detail: "sealing a file key failed: \(error)")
        }
    }

    /// The file key in `body`, or nil when `body` does not open under `wrapKey` (the stanza is
    /// for another key or passphrase). `body` must be ``bodyCount`` bytes: callers check that
    /// first, as the spec requires, and throw on any other length.
    static func open(_ body: [UInt8], with wrapKey: SymmetricKey) -> SecretBytes? {
        guard body.count == bodyCount else { return nil }
        do {
            let nonce = try ChaChaPoly.Nonce(data: zeroNonce)
            let box = try ChaChaPoly.SealedBox(
                nonce: nonce, ciphertext: Array(body[0..<fileKeyCount]), tag: Array(body[fileKeyCount..<bodyCount]))
            var opened = try ChaChaPoly.open(box, using: wrapKey)
            defer { opened.withUnsafeMutableBytes { SecretBytes.zero($0) } }
            return SecretBytes(opened)
        } catch {
            return nil
        }
    }
}
