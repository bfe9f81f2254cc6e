import Crypto
import Dispatch
import Foundation
import SignetCore

/// Decryption of the payload in batches: the chunks of a batch are opened on every core, then
/// their plaintexts are written in order up to the first chunk that does not open, so nothing
/// of an unauthenticated chunk (nor of any chunk after it) is ever released. While a batch is
/// being opened, the calling thread writes the previous one and reads the next.
extension AgePayload {
    /// Opens the chunks `input` yields after the nonce and writes each one's plaintext to
    /// `output` once it has authenticated, never before. Refuses a payload that ends without a
    /// chunk flagged last, that ends inside a chunk, whose empty last chunk follows data, or
    /// that goes on after the chunk flagged last.
    static func decrypt(key: SymmetricKey, from input: any AgeByteSource, to output: any AgeByteSink, source: String) throws {
        let slots = (0..<2).map { _ in DecryptionSlot(width: batchWidth, source: source) }
        try runPipeline(slots, label: "signet.age.open", key: key, from: input, to: output)
    }

    /// The plaintext of one sealed chunk (ciphertext ‖ tag), or nil when it does not
    /// authenticate as chunk `counter` with this last flag.
    static func open(_ chunk: UnsafeRawBufferPointer, key: SymmetricKey, counter: UInt64, last: Bool) -> Data? {
        let split = chunk.count - tagSize
        guard split >= 0,
            let box = try? ChaChaPoly.SealedBox(
                nonce: chunkNonce(counter, last: last),
                ciphertext: UnsafeRawBufferPointer(rebasing: chunk[0..<split]),
                tag: UnsafeRawBufferPointer(rebasing: chunk[split...])),
            let plaintext = try? ChaChaPoly.open(box, using: key)
        else { return nil }
        return plaintext
    }
}

/// One batch of sealed chunks and what opening them gave. Used by one thread at a time.
final class DecryptionSlot: PayloadBatch, @unchecked Sendable {
    let width: Int
    /// The input's name in messages.
    let source: String
    /// Sealed chunks: a full batch, and one byte more to learn whether the batch ends the file.
    let sealed: UnsafeMutableRawBufferPointer
    var usable = 0
    /// Each chunk's plaintext, in order, up to the first that did not open.
    var plaintexts: [Data?]
    /// Why the batch stops early: the refusal, after the plaintexts before it are written.
    var failure: AgeError?

    private static let sealedSize = AgePayload.chunkSize + AgePayload.tagSize

    init(width: Int, source: String) {
        self.width = width
        self.source = source
        sealed = UnsafeMutableRawBufferPointer.allocate(byteCount: width * Self.sealedSize + 1, alignment: 16)
        plaintexts = Array(repeating: nil, count: width)
    }

    deinit { sealed.deallocate() }

    /// Reads a batch (after the byte carried over from the previous one); returns how many
    /// chunks it holds (the last perhaps short) and whether it ends the input.
    func fill(from input: any AgeByteSource, carried: inout UInt8?) throws -> (count: Int, isFinal: Bool) {
        let batch = try AgePayload.fillBatch(sealed, from: input, carried: &carried)
        usable = batch.usable
        // Only the first batch can be empty: a later one starts with the carried byte.
        guard usable > 0 else {
            throw AgeError.payloadInvalid(source: source, detail: "the file ends right after the payload nonce, with no chunk (truncated)")
        }
        return ((usable + Self.sealedSize - 1) / Self.sealedSize, batch.isFinal)
    }

    /// Opens the batch's chunks concurrently; the chunks of a batch that does not end the input
    /// are all full and none is flagged last, and in the last batch only the last chunk is.
    func process(key: SymmetricKey, count: Int, firstCounter: UInt64, isFinal: Bool) {
        let sealed = UnsafeRawBufferPointer(rebasing: self.sealed[0..<usable])
        let results = UnsafeMutableBufferPointer<Data?>.allocate(capacity: count)
        results.initialize(repeating: nil)
        defer { results.deinitialize().deallocate() }
        let shared = OpenBuffers(sealed: sealed, results: results)
        DispatchQueue.concurrentPerform(iterations: count) { index in
            let lower = index * Self.sealedSize
            let chunk = UnsafeRawBufferPointer(rebasing: shared.sealed[lower..<min(lower + Self.sealedSize, shared.sealed.count)])
            shared.results[index] = AgePayload.open(
                chunk, key: key, counter: firstCounter + UInt64(index), last: isFinal && index == count - 1)
        }
        plaintexts = Array(results)
        failure = nil
        if let index = plaintexts.firstIndex(where: { $0 == nil }) {
            let diagnosis = diagnose(index: index, count: count, key: key, firstCounter: firstCounter, isFinal: isFinal)
            failure = diagnosis.error
            // Nothing after the first failure is released, even chunks that opened; the failing
            // chunk itself only when it authenticated under the other flag and the stream is
            // wrong after it (as a reader going chunk by chunk would have released it).
            for later in index..<count { plaintexts[later] = nil }
            plaintexts[index] = diagnosis.released
        } else if isFinal, count > 1 || firstCounter > 0, plaintexts[count - 1]?.isEmpty == true {
            let number = firstCounter + UInt64(count)
            failure = .payloadInvalid(
                source: source, detail: "chunk \(number), the last, is empty after \(number - 1) chunks of data; only an empty file ends with an empty chunk")
            plaintexts[count - 1] = nil
        }
    }

    /// Why chunk `index` did not open, in the words a chunk-by-chunk reader uses, and what of it
    /// such a reader would already have released: a full chunk that authenticates is released
    /// before the reader learns that the stream is wrong after it.
    private func diagnose(
        index: Int, count: Int, key: SymmetricKey, firstCounter: UInt64, isFinal: Bool
    ) -> (error: AgeError, released: Data?) {
        let number = firstCounter + UInt64(index) + 1
        let lower = index * Self.sealedSize
        let chunk = UnsafeRawBufferPointer(rebasing: sealed[lower..<min(lower + Self.sealedSize, usable)])
        let counter = firstCounter + UInt64(index)
        func invalid(_ detail: String) -> AgeError { .payloadInvalid(source: source, detail: detail) }
        if isFinal && index == count - 1 {
            if chunk.count < AgePayload.tagSize {
                return (invalid("chunk \(number) is \(chunk.count) bytes, shorter than its 16-byte tag (truncated)"), nil)
            }
            if let plaintext = AgePayload.open(chunk, key: key, counter: counter, last: false) {
                if chunk.count == Self.sealedSize {
                    return (invalid("the file ends after chunk \(number), which is not flagged last (truncated)"), plaintext)
                }
                return (invalid("chunk \(number) ends the file but is not flagged last (truncated)"), nil)
            }
            return (invalid("chunk \(number) does not authenticate (altered, or truncated inside it)"), nil)
        }
        if let plaintext = AgePayload.open(chunk, key: key, counter: counter, last: true) {
            return (invalid("data follows chunk \(number), which is flagged last"), plaintext)
        }
        return (invalid("chunk \(number) does not authenticate (altered, reordered, or truncated inside it)"), nil)
    }

    /// Writes the plaintexts that opened, in order, then throws the batch's failure, if any.
    func flush(to output: any AgeByteSink, firstCounter: UInt64) throws {
        for case let plaintext? in plaintexts {
            let written = plaintext.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
                Result { () throws in try output.write(buffer: buffer) }
            }
            try written.get()
        }
        plaintexts = []
        if let failure { throw failure }
    }

    private struct OpenBuffers: @unchecked Sendable {
        let sealed: UnsafeRawBufferPointer
        let results: UnsafeMutableBufferPointer<Data?>
    }
}
