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
    /// The most chunks sealed concurrently in one batch: with the input and output buffers,
    /// encryption holds about 2 × 16 × 64 KiB = 2 MiB, whatever the input's size.
    static let maximumBatch = 16

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

    // MARK: Encryption

    /// Seals everything `input` yields into `output`, a batch of chunks at a time: the batch is
    /// read, its chunks sealed concurrently (up to two per core), then written in order.
    static func encrypt(key: SymmetricKey, from input: any AgeByteSource, to output: any AgeByteSink) throws(AgeError) {
        let width = max(1, min(max(8, 2 * SystemInfo.activeProcessorCount), maximumBatch))
        // One byte more than the batch holds: having it tells whether the batch's last chunk is
        // the file's last. It is carried over to the next batch.
        let plainCapacity = width * chunkSize + 1
        let plain = UnsafeMutableRawBufferPointer.allocate(byteCount: plainCapacity, alignment: 16)
        defer { plain.deallocate() }
        // Sealed batches go out as this one array, reused: a full batch is handed over whole (no
        // copy, and no fresh allocation that the kernel must fault in page by page).
        var sealed = [UInt8](repeating: 0, count: width * (chunkSize + tagSize))
        var buffered = 0
        var counter: UInt64 = 0
        while true {
            let read = try input.readFull(into: UnsafeMutableRawBufferPointer(rebasing: plain[buffered...]))
            buffered += read
            let isFinal = buffered < plainCapacity
            let usable = isFinal ? buffered : plainCapacity - 1
            // An empty input is one empty final chunk; otherwise only full chunks and a final,
            // non-empty one (a carried byte means the next batch is never empty).
            let count = isFinal ? max(1, (usable + chunkSize - 1) / chunkSize) : width
            let batch = UnsafeRawBufferPointer(rebasing: plain[0..<usable])
            let firstCounter = counter
            let result = sealed.withUnsafeMutableBytes { target in
                Result { () throws(AgeError) -> Int in
                    try sealBatch(key: key, plain: batch, count: count, firstCounter: firstCounter, endsFile: isFinal, into: target)
                }
            }
            let sealedCount = try result.get()
            try output.write(sealedCount == sealed.count ? sealed : Array(sealed[0..<sealedCount]))
            if isFinal { return }
            plain[0] = plain[plainCapacity - 1]
            buffered = 1
            counter += UInt64(width)
        }
    }

    /// Seals `count` chunks of `plain` (all full but perhaps the last) into `sealed`
    /// concurrently; returns the number of bytes written.
    private static func sealBatch(
        key: SymmetricKey, plain: UnsafeRawBufferPointer, count: Int, firstCounter: UInt64, endsFile: Bool,
        into sealed: UnsafeMutableRawBufferPointer
    ) throws(AgeError) -> Int {
        let failures = UnsafeMutableBufferPointer<Bool>.allocate(capacity: count)
        failures.initialize(repeating: false)
        defer { failures.deallocate() }
        // Each iteration reads its own range of `plain` and writes its own range of `sealed`
        // and its own flag, so sharing the pointers across the iterations is safe.
        let buffers = BatchBuffers(plain: plain, sealed: sealed, failures: failures)
        DispatchQueue.concurrentPerform(iterations: count) { index in
            let plain = buffers.plain
            let sealed = buffers.sealed
            let failures = buffers.failures
            let lower = index * chunkSize
            let upper = min(lower + chunkSize, plain.count)
            let nonce = chunkNonce(firstCounter + UInt64(index), last: endsFile && index == count - 1)
            do {
                let box = try ChaChaPoly.seal(UnsafeRawBufferPointer(rebasing: plain[lower..<upper]), using: key, nonce: nonce)
                let target = UnsafeMutableRawBufferPointer(rebasing: sealed[(index * (chunkSize + tagSize))...])
                // `combined` is nonce ‖ ciphertext ‖ tag; the file holds ciphertext ‖ tag.
                box.combined.withUnsafeBytes { (combined: UnsafeRawBufferPointer) in
                    target.copyMemory(from: UnsafeRawBufferPointer(rebasing: combined[12...]))
                }
            } catch {
                failures[index] = true
            }
        }
        if let failed = failures.firstIndex(of: true) {
            throw AgeError.io(path: "output", detail: "ChaCha20-Poly1305 could not seal chunk \(firstCounter + UInt64(failed) + 1)")
        }
        return plain.count + count * tagSize
    }

    /// The buffers of one batch, shared by its concurrent iterations (each touches only its
    /// own ranges).
    private struct BatchBuffers: @unchecked Sendable {
        let plain: UnsafeRawBufferPointer
        let sealed: UnsafeMutableRawBufferPointer
        let failures: UnsafeMutableBufferPointer<Bool>
    }

    // MARK: Decryption

    /// Opens the chunks `input` yields after the nonce and writes each one's plaintext to
    /// `output` once it has authenticated, never before. Refuses a payload that ends without a
    /// chunk flagged last, that ends inside a chunk, whose empty last chunk follows data, or
    /// that goes on after the chunk flagged last.
    static func decrypt(key: SymmetricKey, from input: any AgeByteSource, to output: any AgeByteSink, source: String) throws(AgeError) {
        let sealedSize = chunkSize + tagSize
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: sealedSize, alignment: 16)
        defer { buffer.deallocate() }
        var counter: UInt64 = 0
        func invalid(_ detail: String) -> AgeError { .payloadInvalid(source: source, detail: detail) }
        while true {
            let count = try input.readFull(into: buffer)
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            let number = counter + 1
            if count == 0 {
                if counter == 0 { throw invalid("the file ends right after the payload nonce, with no chunk (truncated)") }
                throw invalid("the file ends after chunk \(counter), which is not flagged last (truncated)")
            }
            if count < sealedSize {
                // A short read is the end of the input: this chunk must be the final one.
                guard count >= tagSize else {
                    throw invalid("chunk \(number) is \(count) bytes, shorter than its 16-byte tag (truncated)")
                }
                if let plaintext = open(chunk, key: key, counter: counter, last: true) {
                    guard !plaintext.isEmpty || counter == 0 else {
                        throw invalid("chunk \(number), the last, is empty after \(counter) chunks of data; only an empty file ends with an empty chunk")
                    }
                    try output.write(plaintext)
                    return
                }
                if open(chunk, key: key, counter: counter, last: false) != nil {
                    throw invalid("chunk \(number) ends the file but is not flagged last (truncated)")
                }
                throw invalid("chunk \(number) does not authenticate (altered, or truncated inside it)")
            }
            if let plaintext = open(chunk, key: key, counter: counter, last: false) {
                try output.write(plaintext)
                counter += 1
                continue
            }
            // A full-size chunk may be the final one: then nothing may follow it.
            guard let plaintext = open(chunk, key: key, counter: counter, last: true) else {
                throw invalid("chunk \(number) does not authenticate (altered, reordered, or truncated inside it)")
            }
            try output.write(plaintext)
            let probe = UnsafeMutableRawBufferPointer.allocate(byteCount: 1, alignment: 1)
            defer { probe.deallocate() }
            guard try input.read(into: probe) == 0 else {
                throw invalid("data follows chunk \(number), which is flagged last")
            }
            return
        }
    }

    /// The plaintext of one sealed chunk (ciphertext ‖ tag), or nil when it does not
    /// authenticate as chunk `counter` with this last flag.
    private static func open(_ chunk: UnsafeRawBufferPointer, key: SymmetricKey, counter: UInt64, last: Bool) -> [UInt8]? {
        let split = chunk.count - tagSize
        guard split >= 0,
            let box = try? ChaChaPoly.SealedBox(
                nonce: chunkNonce(counter, last: last),
                ciphertext: UnsafeRawBufferPointer(rebasing: chunk[0..<split]),
                tag: UnsafeRawBufferPointer(rebasing: chunk[split...])),
            let plaintext = try? ChaChaPoly.open(box, using: key)
        else { return nil }
        return [UInt8](plaintext)
    }
}
