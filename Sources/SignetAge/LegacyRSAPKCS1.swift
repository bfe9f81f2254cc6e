import CryptoExtras
import Foundation
import SignetCore

/// The seed tutorial's RSA encryption, read-only: the plaintext cut into chunks of k − 11
/// bytes (117 for a 1024-bit key), each encrypted on its own with RSAES-PKCS1-v1_5 (RFC 8017
/// §7.2) to k bytes, the ciphertexts concatenated and, as the tutorial sends them, base64
/// encoded.
///
/// The scheme is unsafe and Signet never produces it: PKCS#1 v1.5 encryption is open to
/// padding-oracle attacks (Bleichenbacher), and nothing authenticates the data — chunks can be
/// dropped, reordered or replaced with chunks of another message, and the padding check is the
/// only thing that can notice an alteration. It is here so that data made that way can be
/// recovered and moved to age. Each block is decrypted by swift-crypto's RSAES-PKCS1-v1_5.
public enum LegacyRSAPKCS1 {
    /// The largest input read, 64 MiB: the tutorial encrypted small payloads; this is a bound on
    /// memory, as the whole input is held to decrypt it.
    public static let maximumInputSize = 64 << 20

    /// The plaintext of `input`: base64 text (white space and line breaks ignored), or the raw
    /// concatenated ciphertext when `input` is not base64 and its length is a multiple of the
    /// key's size.
    ///
    /// - Parameters:
    ///   - input: The ciphertext as the tutorial wrote it.
    ///   - privateKey: The RSA private key whose public key encrypted it.
    ///   - source: The input's name, for messages.
    /// - Throws: ``AgeError/invalidKey(source:detail:)`` for a key that is not RSA;
    ///   ``AgeError/payloadInvalid(source:detail:)`` for an input of the wrong size or a chunk
    ///   that does not decrypt (named by its number).
    public static func decrypt(_ input: [UInt8], privateKey: PrivateKey, source: String) throws -> [UInt8] {
        guard let rsa = privateKey.rsaKey else {
            throw AgeError.invalidKey(source: source, detail: "the legacy scheme needs an RSA private key, not \(privateKey.kind)")
        }
        guard input.count <= maximumInputSize else {
            throw AgeError.payloadInvalid(source: source, detail: "larger than \(maximumInputSize >> 20) MiB, the limit for the legacy scheme")
        }
        let k = (rsa.keySizeInBits + 7) / 8
        let ciphertext = try ciphertext(of: input, blockSize: k, source: source)
        let key: _RSA.Encryption.PrivateKey
        do {
            key = try _RSA.Encryption.PrivateKey(unsafeDERRepresentation: rsa.derRepresentation)
        } catch {
            throw AgeError.invalidKey(source: source, detail: "the RSA key cannot decrypt (\(error))")
        }
        let count = ciphertext.count / k
        var plaintext: [UInt8] = []
        plaintext.reserveCapacity(count * (k - 11))
        for index in 0..<count {
            do {
                let chunk = ciphertext[(index * k)..<((index + 1) * k)]
                plaintext += try key.decrypt(chunk, padding: ._WEAK_AND_INSECURE_PKCS_V1_5)
            } catch {
                SecretBytes.zero(&plaintext)
                throw AgeError.payloadInvalid(
                    source: source, detail: "block \(index + 1) of \(count) does not decrypt with this key (another key, or altered data)")
            }
        }
        return plaintext
    }

    /// The concatenated ciphertext: `input` decoded from base64, or `input` itself when it is
    /// not base64 text; its length must be a positive multiple of `blockSize`.
    static func ciphertext(of input: [UInt8], blockSize: Int, source: String) throws -> [UInt8] {
        let text = input.filter { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D) }
        let decoded = String(validating: text, as: UTF8.self).flatMap { Base64.decode($0) }
        let bytes: [UInt8]
        if let decoded, !text.isEmpty {
            bytes = decoded
        } else if !input.isEmpty, input.count % blockSize == 0 {
            bytes = input
        } else {
            throw AgeError.payloadInvalid(source: source, detail: "neither base64 text nor a whole number of \(blockSize)-byte RSA blocks")
        }
        guard !bytes.isEmpty, bytes.count % blockSize == 0 else {
            throw AgeError.payloadInvalid(
                source: source,
                detail: "\(bytes.count) bytes of ciphertext are not a whole number of \(blockSize)-byte blocks (the key is \(blockSize * 8) bits: is it the right key?)")
        }
        return bytes
    }
}
