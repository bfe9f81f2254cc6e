import Crypto
import Dispatch
import SignetCore

/// Encryption of the payload as a pipeline over three batches: while the chunks of batch N are
/// sealed on every core, the calling thread writes batch N − 1 and reads batch N + 1, so that
/// reading and writing (one thread, as the caller's closures require) overlap with sealing.
extension AgePayload {
    /// Seals everything `input` yields into `output`.
    static func encrypt(key: SymmetricKey, from input: any AgeByteSource, to output: any AgeByteSink) throws(AgeError) {
        let width = max(1, min(max(8, 2 * SystemInfo.activeProcessorCount), maximumBatch))
        let slots = (0..<2).map { _ in EncryptionSlot(width: width) }
        let sealing = DispatchQueue(label: "signet.age.seal", qos: .userInitiated)
        var counter: UInt64 = 0
        var carried: UInt8?
        var pending: (slot: EncryptionSlot, group: DispatchGroup)?
        var current = 0
        defer {
            // Never leave a sealing job behind with buffers about to be freed.
            pending?.group.wait()
        }
        while true {
            let slot = slots[current]
            // Read this batch while the previous one is being sealed.
            let batch = try slot.fill(from: input, carried: &carried)
            let group = DispatchGroup()
            let firstCounter = counter
            sealing.async(group: group) {
                slot.seal(key: key, count: batch.count, firstCounter: firstCounter, endsFile: batch.isFinal)
            }
            // Write the previous batch while this one is being sealed.
            if let previous = pending {
                previous.group.wait()
                pending = nil
                try previous.slot.flush(to: output, firstCounter: counter - UInt64(width))
            }
            pending = (slot, group)
            if batch.isFinal {
                group.wait()
                pending = nil
                try slot.flush(to: output, firstCounter: firstCounter)
                return
            }
            counter += UInt64(width)
            current ^= 1
        }
    }
}

/// One batch's buffers: the plaintext read, the sealed chunks, and what sealing found. Used by
/// one thread at a time: the reading thread fills and flushes it, a sealing job seals it, and
/// the pipeline waits for the job before the slot is touched again.
final class EncryptionSlot: @unchecked Sendable {
    let width: Int
    /// Plaintext: a full batch, and one byte more to learn whether the batch ends the file.
    let plain: UnsafeMutableRawBufferPointer
    /// The sealed batch, handed to the sink whole (no copy when the batch is full).
    var sealed: [UInt8]
    var usable = 0
    var sealedCount = 0
    var failedChunk: Int?

    init(width: Int) {
        self.width = width
        plain = UnsafeMutableRawBufferPointer.allocate(byteCount: width * AgePayload.chunkSize + 1, alignment: 16)
        sealed = [UInt8](repeating: 0, count: width * (AgePayload.chunkSize + AgePayload.tagSize))
    }

    deinit { plain.deallocate() }

    /// Reads a batch (after the byte `carried` over from the previous one); returns how many
    /// chunks it holds and whether it is the file's last.
    func fill(from input: any AgeByteSource, carried: inout UInt8?) throws(AgeError) -> (count: Int, isFinal: Bool) {
        var buffered = 0
        if let byte = carried {
            plain[0] = byte
            buffered = 1
        }
        buffered += try input.readFull(into: UnsafeMutableRawBufferPointer(rebasing: plain[buffered...]))
        let isFinal = buffered < plain.count
        usable = isFinal ? buffered : plain.count - 1
        carried = isFinal ? nil : plain[plain.count - 1]
        // An empty input is one empty final chunk; otherwise only full chunks and a final,
        // non-empty one (a carried byte means the next batch is never empty).
        let count = isFinal ? max(1, (usable + AgePayload.chunkSize - 1) / AgePayload.chunkSize) : width
        return (count, isFinal)
    }

    /// Seals the batch's `count` chunks concurrently into ``sealed``.
    func seal(key: SymmetricKey, count: Int, firstCounter: UInt64, endsFile: Bool) {
        let plain = UnsafeRawBufferPointer(rebasing: self.plain[0..<usable])
        failedChunk = nil
        sealed.withUnsafeMutableBytes { target in
            let failures = UnsafeMutableBufferPointer<Bool>.allocate(capacity: count)
            failures.initialize(repeating: false)
            defer { failures.deallocate() }
            let buffers = AgePayload.BatchBuffers(plain: plain, sealed: target, failures: failures)
            DispatchQueue.concurrentPerform(iterations: count) { index in
                buffers.failures[index] = !AgePayload.sealChunk(
                    key: key, plain: buffers.plain, sealed: buffers.sealed, index: index,
                    counter: firstCounter + UInt64(index), last: endsFile && index == count - 1)
            }
            failedChunk = failures.firstIndex(of: true)
        }
        sealedCount = plain.count + count * AgePayload.tagSize
    }

    /// Writes the sealed batch to `output`.
    func flush(to output: any AgeByteSink, firstCounter: UInt64) throws(AgeError) {
        if let failed = failedChunk {
            throw AgeError.io(path: "output", detail: "ChaCha20-Poly1305 could not seal chunk \(firstCounter + UInt64(failed) + 1)")
        }
        try output.write(sealedCount == sealed.count ? sealed : Array(sealed[0..<sealedCount]))
    }
}
