import Crypto
import Dispatch
import Foundation
import SignetCore

/// Encryption of the payload through the pipeline of two batches: while the chunks of batch N are
/// sealed on every core, the calling thread writes batch N − 1 and reads batch N + 1, so that
/// reading and writing (one thread, as the caller's closures require) overlap with sealing.
extension AgePayload {
    /// Seals everything `input` yields into `output`.
    static func encrypt(key: SymmetricKey, from input: any AgeByteSource, to output: any AgeByteSink) throws {
        let slots = (0..<2).map { _ in EncryptionSlot(width: batchWidth) }
        try runPipeline(slots, label: "signet.age.seal", key: key, from: input, to: output)
    }
}

/// One batch: the plaintext read, and each chunk's sealed box once sealed. Used by one thread
/// at a time: the reading thread fills and flushes it, a sealing job seals it, and the
/// pipeline waits for the job before the slot is touched again.
final class EncryptionSlot: PayloadBatch, @unchecked Sendable {
    let width: Int
    /// Plaintext: a full batch, and one byte more to learn whether the batch ends the file.
    let plain: UnsafeMutableRawBufferPointer
    var usable = 0
    /// Each chunk's `nonce ‖ ciphertext ‖ tag` as swift-crypto returns it; written from byte 12
    /// on, without a copy. Nil for a chunk that could not be sealed.
    var boxes: [Data?] = []

    init(width: Int) {
        self.width = width
        plain = UnsafeMutableRawBufferPointer.allocate(byteCount: width * AgePayload.chunkSize + 1, alignment: 16)
    }

    deinit { plain.deallocate() }

    /// Reads a batch (after the byte `carried` over from the previous one); returns how many
    /// chunks it holds and whether it is the file's last.
    func fill(from input: any AgeByteSource, carried: inout UInt8?) throws -> (count: Int, isFinal: Bool) {
        let batch = try AgePayload.fillBatch(plain, from: input, carried: &carried)
        usable = batch.usable
        let isFinal = batch.isFinal
        // An empty input is one empty final chunk; otherwise only full chunks and a final,
        // non-empty one (a carried byte means the next batch is never empty).
        let count = isFinal ? max(1, (usable + AgePayload.chunkSize - 1) / AgePayload.chunkSize) : width
        return (count, isFinal)
    }

    /// Seals the batch's `count` chunks concurrently into ``boxes``.
    func process(key: SymmetricKey, count: Int, firstCounter: UInt64, isFinal endsFile: Bool) {
        let results = UnsafeMutableBufferPointer<Data?>.allocate(capacity: count)
        results.initialize(repeating: nil)
        defer { results.deinitialize().deallocate() }
        let shared = SealBuffers(plain: UnsafeRawBufferPointer(rebasing: plain[0..<usable]), results: results)
        DispatchQueue.concurrentPerform(iterations: count) { index in
            let lower = index * AgePayload.chunkSize
            let upper = min(lower + AgePayload.chunkSize, shared.plain.count)
            shared.results[index] = try? ChaChaPoly.seal(
                UnsafeRawBufferPointer(rebasing: shared.plain[lower..<upper]), using: key,
                nonce: AgePayload.chunkNonce(firstCounter + UInt64(index), last: endsFile && index == count - 1)
            ).combined
        }
        boxes = Array(results)
    }

    /// Writes the sealed chunks to `output`, in order: each box without its 12-byte nonce.
    func flush(to output: any AgeByteSink, firstCounter: UInt64) throws {
        for (index, box) in boxes.enumerated() {
            guard let box else {
                throw AgeError.io(path: "output", detail: "ChaCha20-Poly1305 could not seal chunk \(firstCounter + UInt64(index) + 1)")
            }
            let written = box.withUnsafeBytes { (combined: UnsafeRawBufferPointer) in
                Result { () throws in try output.write(buffer: UnsafeRawBufferPointer(rebasing: combined[12...])) }
            }
            try written.get()
        }
        boxes = []
    }

    private struct SealBuffers: @unchecked Sendable {
        let plain: UnsafeRawBufferPointer
        let results: UnsafeMutableBufferPointer<Data?>
    }
}
