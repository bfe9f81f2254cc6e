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
    ) throws -> (usable: Int, isFinal: Bool) {
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

    /// Runs the payload through two batches in turn: while the chunks of one are sealed or
    /// opened on every core (a job on a queue of its own), the calling thread writes the
    /// previous batch and reads the next — the caller's reader and writer stay on its thread.
    static func runPipeline<Batch: PayloadBatch>(
        _ slots: [Batch], label: String, key: SymmetricKey, from input: any AgeByteSource, to output: any AgeByteSink
    ) throws {
        let queue = DispatchQueue(label: label, qos: .userInitiated)
        var counter: UInt64 = 0
        var carried: UInt8?
        var pending: (slot: Batch, group: DispatchGroup, firstCounter: UInt64)?
        var current = 0
        // Never return with a job still using a batch's buffers.
        defer { pending?.group.wait() }
        while true {
            let slot = slots[current]
            let batch = try slot.fill(from: input, carried: &carried)
            let group = DispatchGroup()
            let firstCounter = counter
            queue.async(group: group) {
                slot.process(key: key, count: batch.count, firstCounter: firstCounter, isFinal: batch.isFinal)
            }
            // The new job is pending before the previous batch is flushed, so that a flush that
            // throws still leaves it to the `defer` to wait for.
            let previous = pending
            pending = (slot, group, firstCounter)
            if let previous {
                previous.group.wait()
                try previous.slot.flush(to: output, firstCounter: previous.firstCounter)
            }
            if batch.isFinal {
                group.wait()
                pending = nil
                try slot.flush(to: output, firstCounter: firstCounter)
                return
            }
            counter += UInt64(slot.width)
            current ^= 1
        }
    }
}

/// One batch of the payload pipeline (``AgePayload/runPipeline(_:label:key:from:to:)``): filled
/// and flushed by the calling thread, processed by a background job, never by two at once.
protocol PayloadBatch: AnyObject, Sendable {
    /// The chunks a full batch holds.
    var width: Int { get }
    /// Reads the batch (after the byte carried over from the previous one); returns how many
    /// chunks it holds and whether it ends the input.
    func fill(from input: any AgeByteSource, carried: inout UInt8?) throws -> (count: Int, isFinal: Bool)
    /// Seals or opens the batch's `count` chunks, numbered from `firstCounter`, on every core.
    func process(key: SymmetricKey, count: Int, firstCounter: UInt64, isFinal: Bool)
    /// Writes what the batch made, in order, then throws what went wrong in it, if anything.
    func flush(to output: any AgeByteSink, firstCounter: UInt64) throws
}
