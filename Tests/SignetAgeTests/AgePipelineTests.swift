import Foundation
@testable import SignetAge
import SignetCore
import SignetTestSupport
import Testing

/// The payload pipelines: batches of ``AgePayload/batchWidth`` chunks sealed and opened on
/// every core while the caller's reader and writer run, through both writer forms (arrays and
/// buffers), across batch boundaries; and what a failure part-way releases.
@Suite struct AgePipelineTests {
    static let chunk = AgePayload.chunkSize
    static let batch = AgePayload.batchWidth * AgePayload.chunkSize
    static let sizes = [batch - 1, batch, batch + 1, 2 * batch, 2 * batch + chunk, 3 * batch - 17]

    /// Encrypts `plaintext` through the buffer writer, reading in pieces of `piece` bytes.
    static func encryptWithBuffers(_ plaintext: [UInt8], piece: Int) throws -> [UInt8] {
        var offset = 0
        var file: [UInt8] = []
        try AgeEncryptor(recipients: [PlainRecipient()]).encrypt(
            read: { buffer in
                let count = min(buffer.count, piece, plaintext.count - offset)
                buffer.copyBytes(from: plaintext[offset..<(offset + count)])
                offset += count
                return count
            },
            writeBuffer: { buffer in file += buffer })
        return file
    }

    /// Decrypts `file` through the buffer writer; what was written, and the error if any.
    static func decryptWithBuffers(_ file: [UInt8]) -> (written: [UInt8], error: AgeError?) {
        var offset = 0
        var written: [UInt8] = []
        do {
            try AgeDecryptor(identities: [PlainIdentity()]).decrypt(
                read: { buffer in
                    let count = min(buffer.count, file.count - offset)
                    buffer.copyBytes(from: file[offset..<(offset + count)])
                    offset += count
                    return count
                },
                writeBuffer: { buffer in written += buffer }, source: "f.age")
            return (written, nil)
        } catch let error as AgeError {
            return (written, error)
        } catch {
            Issue.record("decrypting threw \(type(of: error)), not an AgeError: \(error)")
            return (written, nil)
        }
    }

    @Test("round trips across batch boundaries through the buffer writers, checked by the independent opener",
          arguments: AgePipelineTests.sizes)
    func bufferRoundTrip(size: Int) throws {
        let plaintext = patternBytes(size, seed: UInt64(size))
        let file = try Self.encryptWithBuffers(plaintext, piece: 300_000)
        let independent = try HandMade.open(file)
        #expect(independent.plaintext == plaintext)
        #expect(independent.chunks == (size + Self.chunk - 1) / Self.chunk)
        let decrypted = Self.decryptWithBuffers(file)
        #expect(decrypted.error == nil)
        #expect(decrypted.written == plaintext)
        #expect(try AgeDecryptor(identities: [PlainIdentity()]).decrypt(file, source: "f.age") == plaintext)
    }

    @Test("a chunk altered in the second batch: exactly the chunks before it are released")
    func alteredInSecondBatch() throws {
        let plaintext = patternBytes(2 * Self.batch + 5, seed: 3)
        var file = try Self.encryptWithBuffers(plaintext, piece: 1 << 20)
        let header = try #require(HandMade.headerLength(file))
        // Chunk 40 (index 39) is in the second batch; flip a byte of its ciphertext.
        let altered = 39
        file[header + 16 + altered * (Self.chunk + 16) + 100] ^= 0x01
        let outcome = Self.decryptWithBuffers(file)
        #expect(outcome.error?.code == "payloadInvalid")
        #expect(outcome.error?.description.contains("chunk 40 does not authenticate") == true, "\(String(describing: outcome.error))")
        #expect(outcome.written == Array(plaintext.prefix(altered * Self.chunk)))
    }

    @Test("a file cut at a batch boundary: everything before is released, then the truncation is reported")
    func cutAtBatchBoundary() throws {
        let plaintext = patternBytes(2 * Self.batch + 5, seed: 4)
        let file = try Self.encryptWithBuffers(plaintext, piece: 1 << 20)
        let header = try #require(HandMade.headerLength(file))
        let cut = Array(file.prefix(header + 16 + AgePayload.batchWidth * (Self.chunk + 16)))
        let outcome = Self.decryptWithBuffers(cut)
        #expect(outcome.error?.description.contains("not flagged last (truncated)") == true, "\(String(describing: outcome.error))")
        #expect(outcome.written == Array(plaintext.prefix(Self.batch)))
    }
}
