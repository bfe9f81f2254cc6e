import Crypto
import Dispatch
import Foundation
import SignetCore

/// The payload of an age v1 file (age-encryption.org/v1, "Payload"): a 16-byte nonce, then the
/// plaintext in 64 KiB chunks, each sealed with ChaCha20-Poly1305 under the payload key and the
/// nonce `counter (11 bytes, big endian) ‖ last flag (0x01 on the final chunk)`: the STREAM
/// construction. The final chunk may be short, and empty only when it is the only one.
enum AgePayload {
    /// The size of a plaintext chunk.
    static let chunkSize = 64 * 1024
    /// The Poly1305 tag each chunk carries.
    static let tagSize = 16
    /// The random nonce between the header and the first chunk.
    static let nonceSize = 16
    /// The chunks in one batch, sealed or opened concurrently: 32 × 64 KiB = 2 MiB, so that
    /// the hand-offs between the reading thread and the workers are few. The pipeline holds
    /// two batches of plaintext and two of ciphertext, about 8 MiB, whatever the input's size.
    static let batchWidth = 32

    /// HKDF-SHA-256(ikm: file key, salt: nonce, info: "payload"), 32 bytes.
    static func key(fileKey: SecretBytes, nonce: [UInt8]) -> SymmetricKey {
        let ikm = fileKey.withUnsafeBytes { SymmetricKey(data: $0) }
        return HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: nonce, info: Array("payload".utf8), outputByteCount: 32)
    }

    /// The ChaCha20-Poly1305 nonce of chunk `counter` (from 0).
    static func chunkNonce(_ counter: UInt64, last: Bool) -> ChaChaPoly.Nonce {
        var bytes = [UInt8](repeating: 0, count: 12)
        // An 11-byte counter; 64 bits of it are more than any file can use.
        for index in 0..<8 { bytes[3 + index] = UInt8(truncatingIfNeeded: counter >> UInt64(56 - 8 * index)) }
        bytes[11] = last ? 0x01 : 0x00
        return try! ChaChaPoly.Nonce(data: bytes)  // 12 bytes: never throws
    }

    /// Reads a batch into `buffer`: the byte `carried` over from the previous batch first, then
    /// as much as the input gives. The buffer holds one byte more than a batch, so a full read
    /// tells that the input goes on: that byte is carried into the next batch. Returns how many
    /// bytes belong to this batch, and whether it is the input's last.
    static func fillBatch(
        _ buffer: UnsafeMutableRawBufferPointer, from input: any AgeByteSource, carried: inout UInt8?
    ) throws(AgeError) -> (usable: Int, isFinal: Bool) {
        var buffered = 0
        if let byte = carried {
            buffer[0] = byte
            buffered = 1
        }
        buffered += try input.readFull(into: UnsafeMutableRawBufferPointer(rebasing: buffer[buffered...]))
        let isFinal = buffered < buffer.count
        carried = isFinal ? nil : buffer[buffer.count - 1]
        return (isFinal ? buffered : buffer.count - 1, isFinal)
    }
}
