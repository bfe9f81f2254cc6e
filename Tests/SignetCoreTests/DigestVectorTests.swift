import Foundation
import SignetCore
import SignetTestSupport
import Testing

/// One known answer from `Vectors/nist-sha2.json`.
struct DigestVector: Decodable, Sendable, CustomTestStringConvertible {
    var algorithm: String
    var name: String
    var source: String
    /// The message length in bits, as the `.rsp` files give it.
    var len: Int
    /// The message in hex; absent when `repeatText`/`count` describe it.
    var msg: String?
    /// The message is `count` copies of this ASCII string (the million-'a' example).
    var repeatText: String?
    var count: Int?
    var md: String

    enum CodingKeys: String, CodingKey {
        case algorithm, name, source, len, msg, count, md
        case repeatText = "repeat"
    }

    var testDescription: String { "\(algorithm) \(name)" }

    var isLarge: Bool { len > 100_000 * 8 }

    /// The few vectors also run through ``FileDigester``: the empty file, the FIPS examples and
    /// the LongMsg entries.
    var isFileCase: Bool { len == 0 || source.hasPrefix("FIPS") || source.hasSuffix("LongMsg.rsp") }

    func digestAlgorithm() throws -> DigestAlgorithm {
        guard let algorithm = DigestAlgorithm(rawValue: algorithm) else {
            throw VectorError(description: "\(name): unknown algorithm \(algorithm)")
        }
        return algorithm
    }

    func message() throws -> [UInt8] {
        if let msg { return try TestVectors.bytes(hex: msg) }
        guard let repeatText, let count else {
            throw VectorError(description: "\(name): has neither msg nor repeat/count")
        }
        return Array(String(repeating: repeatText, count: count).utf8)
    }

    static func loadAll() throws -> [DigestVector] {
        try TestVectors.decode(NISTFile.self, "nist-sha2.json", in: .module).vectors
    }

    private struct NISTFile: Decodable {
        var vectors: [DigestVector]
    }
}

/// Feeds `message` to a fresh hasher `pieceSize` bytes at a time.
private func streamedHex(_ message: [UInt8], _ algorithm: DigestAlgorithm, pieceSize: Int) -> String {
    var hasher = algorithm.makeHasher()
    var offset = 0
    while offset < message.count {
        let end = min(offset + pieceSize, message.count)
        hasher.update(Array(message[offset..<end]))
        offset = end
    }
    return hasher.finalize().hex
}

@Suite("SHA-2 known answers (FIPS 180 examples and NIST SHAVS)")
struct DigestVectorTests {
    @Test("the vector file holds the empty message, SHAVS entries and the million 'a' for each SHA-2")
    func vectorFileIsComplete() throws {
        let vectors = try DigestVector.loadAll()
        for algorithm in [DigestAlgorithm.sha256, .sha384, .sha512] {
            let own = vectors.filter { $0.algorithm == algorithm.rawValue }
            #expect(own.count >= 12, "\(algorithm)")
            #expect(own.contains { $0.len == 0 }, "\(algorithm): empty message")
            #expect(own.contains { $0.count == 1_000_000 && $0.repeatText == "a" }, "\(algorithm): million a")
            #expect(own.filter { $0.source.hasSuffix("ShortMsg.rsp") }.count >= 6, "\(algorithm): ShortMsg")
            #expect(own.contains { $0.source.hasSuffix("LongMsg.rsp") }, "\(algorithm): LongMsg")
            #expect(own.allSatisfy { $0.md.count == algorithm.byteCount * 2 }, "\(algorithm): digest lengths")
        }
    }

    @Test("DigestAlgorithm.hash gives the published digest", arguments: try DigestVector.loadAll())
    func oneShot(_ vector: DigestVector) throws {
        let algorithm = try vector.digestAlgorithm()
        let message = try vector.message()
        #expect(message.count * 8 == vector.len, "the vector's Len does not match its message")
        let expected = try TestVectors.bytes(hex: vector.md)

        let digest = algorithm.hash(message)
        #expect(digest.algorithm == algorithm)
        #expect(digest.bytes.count == algorithm.byteCount)
        #expect(digest.bytes == expected)
        #expect(digest.hex == vector.md)
        #expect(digest.description == "\(algorithm.rawValue):\(vector.md)")
    }

    @Test("StreamingHasher fed in odd-size pieces gives the published digest", arguments: try DigestVector.loadAll())
    func streamed(_ vector: DigestVector) throws {
        let algorithm = try vector.digestAlgorithm()
        let message = try vector.message()
        // Pieces around the 64-byte (SHA-256) and 128-byte (SHA-384/512) block sizes; coarser
        // ones for the million 'a' so the test stays quick.
        let sizes = vector.isLarge ? [999, 4096, 65_537] : [1, 63, 64, 65, 127, 128, 129]
        for size in sizes {
            #expect(streamedHex(message, algorithm, pieceSize: size) == vector.md, "pieces of \(size) bytes")
        }

        // Irregular pieces through the raw-buffer entry point, empty updates included.
        let pattern = [0, 1, 63, 0, 64, 65, 2, 127, 128, 129]
        var hasher = algorithm.makeHasher()
        var offset = 0
        var step = 0
        while offset < message.count {
            let end = min(offset + pattern[step % pattern.count], message.count)
            message[offset..<end].withUnsafeBytes { hasher.update(bufferPointer: $0) }
            offset = end
            step += 1
        }
        hasher.update([])
        #expect(hasher.finalize().hex == vector.md, "irregular pieces")
    }

    @Test("a copied hasher continues independently, and finalize does not end the computation")
    func hasherValueSemantics() {
        var first = DigestAlgorithm.sha256.makeHasher()
        first.update(Array("ab".utf8))
        var second = first
        first.update(Array("c".utf8))
        second.update(Array("d".utf8))
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        #expect(first.finalize().hex == abc)
        #expect(second.finalize().hex == "a52d159f262b2c6ddb724a61840befc36eb30c88877a4030b65cbe86298449c9")
        #expect(first.finalize().hex == abc, "finalizing twice")
        first.update(Array("d".utf8))
        #expect(first.finalize().hex == "88d4266fd4e6338d13b845fcf289579d209c897823b9217da3e161936f031589")
    }

    @Test("MD5 and SHA-1 (legacy) give their published digests and are marked insecure")
    func legacyAlgorithms() {
        #expect(DigestAlgorithm.md5.hash(Array("abc".utf8)).hex == "900150983cd24fb0d6963f7d28e17f72")
        #expect(DigestAlgorithm.md5.hash([UInt8]()).hex == "d41d8cd98f00b204e9800998ecf8427e")
        #expect(DigestAlgorithm.sha1.hash(Array("abc".utf8)).hex == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(DigestAlgorithm.sha1.hash([UInt8]()).hex == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(DigestAlgorithm.allCases.filter(\.isInsecure) == [.md5, .sha1])
        for algorithm in DigestAlgorithm.allCases {
            #expect(algorithm.hash([UInt8]()).bytes.count == algorithm.byteCount, "\(algorithm)")
        }
    }

    @Test("an algorithm is inferred from a digest length among the candidates only")
    func inference() {
        let all = DigestAlgorithm.allCases
        #expect(DigestAlgorithm.inferred(fromByteCount: 32, among: all) == .sha256)
        #expect(DigestAlgorithm.inferred(fromByteCount: 48, among: all) == .sha384)
        #expect(DigestAlgorithm.inferred(fromByteCount: 64, among: all) == .sha512)
        #expect(DigestAlgorithm.inferred(fromByteCount: 20, among: all) == .sha1)
        #expect(DigestAlgorithm.inferred(fromByteCount: 16, among: all) == .md5)
        #expect(DigestAlgorithm.inferred(fromByteCount: 33, among: all) == nil)
        #expect(DigestAlgorithm.inferred(fromByteCount: 16, among: [.sha256, .sha512]) == nil)
        #expect(DigestAlgorithm.allCases.map(\.tagName) == ["SHA256", "SHA384", "SHA512", "MD5", "SHA1"])
    }
}

@Suite("FileDigester")
struct FileDigesterTests {
    @Test(
        "hashing a file gives the published digest",
        arguments: try DigestVector.loadAll().filter(\.isFileCase))
    func file(_ vector: DigestVector) throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let path = try scratch.write("message.bin", try vector.message())
        let digest = try FileDigester.digest(path: path, algorithm: try vector.digestAlgorithm())
        #expect(digest.hex == vector.md)
    }

    @Test("a file of several read chunks is hashed whole, and progress adds up to its size")
    func multiChunkFile() throws {
        // 2 MiB + 12 345 bytes from a fixed LCG, so reads cross FileInput's 1 MiB chunks.
        // The expected digests were computed independently (Python hashlib).
        let size = 2 * 1_048_576 + 12_345
        var state: UInt32 = 0x1234_5678
        let content = (0..<size).map { _ -> UInt8 in
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: state >> 24)
        }
        #expect(Array(content.prefix(8)) == [0x75, 0xcd, 0x25, 0x4b, 0x84, 0xe2, 0xea, 0xf2])

        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let path = try scratch.write("large.bin", content)

        let counter = ByteCounter()
        let sha256 = try FileDigester.digest(path: path, algorithm: .sha256, progress: { counter.add($0) })
        #expect(sha256.hex == "0e76ee336cf79e4a75fdd83cb2592c7b9efa4c3393a71ec489f9f27d917aa74b")
        #expect(counter.total == size)

        let sha512 = try FileDigester.digest(path: path, algorithm: .sha512)
        #expect(sha512.hex == "0ecbcd8288609efdca6eea855ab38e7213d152583d454fda4ad8e0caf3167c82"
            + "1cfe08c31b399efc254ec3222fcbbb974afdf96763fcb00c287ec457a2a91de7")
    }

    @Test("a missing file is an environment error naming the path")
    func missingFile() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let missing = scratch.file("absent.bin")
        let error = #expect(throws: SignetCoreError.self) {
            try FileDigester.digest(path: missing, algorithm: .sha256)
        }
        #expect(error == .io(path: missing, detail: "no such file or directory"))
        #expect(error?.category == .environment)
    }

    @Test("a directory is refused")
    func directory() throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let error = #expect(throws: SignetCoreError.self) {
            try FileDigester.digest(path: scratch.url.path, algorithm: .sha256)
        }
        #expect(error == .io(path: scratch.url.path, detail: "is a directory, not a file"))
    }

    @Test("many files are reported in the order given, failures included")
    func manyFilesInOrder() async throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let empty = try scratch.write("empty", [UInt8]())
        let abc = try scratch.write("abc", Array("abc".utf8))
        let missing = scratch.file("missing")
        let big = try scratch.write("big", [UInt8](repeating: 0x61, count: 1_000_000))
        let paths = [big, empty, missing, abc]

        var order: [Int] = []
        var results: [Int: Result<MessageDigest, any Error>] = [:]
        await FileDigester.digest(
            paths: paths, algorithm: .sha256, concurrency: 2,
            onResult: { index, result in
                order.append(index)
                results[index] = result
            })

        #expect(order == [0, 1, 2, 3])
        let expected: [Int: String] = [
            0: "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
            1: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            3: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        ]
        for (index, hex) in expected {
            if case .success(let digest)? = results[index] {
                #expect(digest.hex == hex, "file \(index)")
            } else {
                Issue.record("file \(index): expected a digest, got \(String(describing: results[index]))")
            }
        }
        if case .failure(let error)? = results[2] {
            #expect(error as? SignetCoreError == .io(path: missing, detail: "no such file or directory"))
        } else {
            Issue.record("the missing file should fail, got \(String(describing: results[2]))")
        }
    }
}
