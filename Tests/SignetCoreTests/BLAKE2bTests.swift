import Foundation
import SignetCore
import SignetTestSupport
import Testing

/// One known answer from `Vectors/rfc7693.json`.
struct BLAKE2bVector: Decodable, Sendable, CustomTestStringConvertible {
    var name: String
    /// The message as text, as hex, or as the bytes 00 01 02 … of this length (the BLAKE2
    /// reference package's KAT inputs).
    var text: String?
    var hex: String?
    var sequenceLength: Int?
    var digestLength: Int
    var digest: String

    var testDescription: String { name }

    func message() throws -> [UInt8] {
        if let text { return Array(text.utf8) }
        if let hex { return try TestVectors.bytes(hex: hex) }
        if let sequenceLength { return (0..<sequenceLength).map { UInt8(truncatingIfNeeded: $0) } }
        throw VectorError(description: "\(name): no message")
    }

    static func loadAll() throws -> [BLAKE2bVector] {
        try TestVectors.decode(File.self, "rfc7693.json", in: .module).vectors
    }

    private struct File: Decodable {
        var vectors: [BLAKE2bVector]
    }
}

/// BLAKE2b digests of many messages from python3's `hashlib.blake2b`, one process for all.
enum PythonBLAKE2b {
    /// The digest (hex) of `message(length)` for each length in `lengths`.
    static func digests(lengths: ClosedRange<Int>, digestLength: Int) throws -> [String] {
        try run("""
            import hashlib, sys
            for n in range(\(lengths.lowerBound), \(lengths.upperBound + 1)):
                m = bytes((i * 7 + 3) % 256 for i in range(n))
                print(hashlib.blake2b(m, digest_size=\(digestLength)).hexdigest())
            """)
    }

    /// The digest (hex) of a file, read by python.
    static func digest(file: String, digestLength: Int) throws -> String {
        try run("""
            import hashlib
            print(hashlib.blake2b(open(\"\(file)\", "rb").read(), digest_size=\(digestLength)).hexdigest())
            """)[0]
    }

    static func message(_ length: Int) -> [UInt8] { (0..<length).map { UInt8(($0 * 7 + 3) % 256) } }

    private static func run(_ script: String) throws -> [String] {
        try Python.runOK(script).out.split(separator: "\n").map(String.init)
    }
}

@Suite("BLAKE2b: RFC 7693 vectors and python's hashlib")
struct BLAKE2bTests {
    @Test("published digests", arguments: try BLAKE2bVector.loadAll())
    func knownAnswer(_ vector: BLAKE2bVector) throws {
        let message = try vector.message()
        let expected = try TestVectors.bytes(hex: vector.digest)
        #expect(expected.count == vector.digestLength)
        #expect(try BLAKE2b.hash(message, digestLength: vector.digestLength) == expected)
        // Byte by byte through the streaming interface.
        var hasher = try BLAKE2b(digestLength: vector.digestLength)
        for byte in message { hasher.update([byte]) }
        #expect(hasher.finalize() == expected)
    }

    @Test("the vector file holds RFC 7693's example")
    func vectorFileHasTheRFCExample() throws {
        let vectors = try BLAKE2bVector.loadAll()
        #expect(vectors.contains { $0.text == "abc" && $0.digestLength == 64 && $0.digest.hasPrefix("ba80a53f981c4d0d") })
        #expect(vectors.count >= 6)
    }

    @Test("every length from 0 to 300 bytes matches python, for 64- and 32-byte digests", arguments: [64, 32])
    func lengthsMatchPython(digestLength: Int) throws {
        let expected = try PythonBLAKE2b.digests(lengths: 0...300, digestLength: digestLength)
        try #require(expected.count == 301)
        for length in 0...300 {
            let digest = try BLAKE2b.hash(PythonBLAKE2b.message(length), digestLength: digestLength)
            #expect(Hex.encode(digest) == expected[length], "length \(length)")
        }
    }

    @Test("a message split in two at every offset gives the same digest")
    func everySplit() throws {
        let message = PythonBLAKE2b.message(300)
        let expected = try BLAKE2b.hash(message)
        for split in 0...message.count {
            var hasher = BLAKE2b()
            hasher.update(message[0..<split])
            hasher.update([])
            message[split...].withUnsafeBytes { hasher.update(bufferPointer: $0) }
            #expect(hasher.finalize() == expected, "split at \(split)")
        }
    }

    @Test("digest lengths 1…64 are accepted, 0 and 65 refused")
    func digestLengths() throws {
        for length in [1, 20, 32, 48, 63, 64] {
            #expect(try BLAKE2b.hash([1, 2, 3], digestLength: length).count == length)
        }
        for length in [0, -1, 65] {
            #expect(throws: SignetCoreError.self) { _ = try BLAKE2b(digestLength: length) }
        }
        // The digest length is a parameter of the hash, not a truncation.
        #expect(try BLAKE2b.hash([1], digestLength: 32) != Array(try BLAKE2b.hash([1]).prefix(32)))
    }

    @Test("a multi-MiB file streams to python's digest, with progress", arguments: [64, 32])
    func streamedFile(digestLength: Int) throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        // 5 MiB and a bit: several FileInput chunks, a partial last block.
        let size = 5 << 20 + 77
        let bytes = (0..<size).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 11) }
        let path = try scratch.write("big.bin", bytes)
        let counter = ByteCounter()
        let digest = try BLAKE2b.hash(path: path, digestLength: digestLength, progress: { counter.add($0) })
        #expect(counter.total == size)
        #expect(Hex.encode(digest) == (try PythonBLAKE2b.digest(file: path, digestLength: digestLength)))
        #expect(digest == (try BLAKE2b.hash(bytes, digestLength: digestLength)))
    }

    @Test("a missing file is an I/O error naming it")
    func missingFile() {
        #expect {
            _ = try BLAKE2b.hash(path: "/nonexistent/signet-blake2b")
        } throws: { error in
            guard case SignetCoreError.io(let path, _) = error else { return false }
            return path == "/nonexistent/signet-blake2b"
        }
    }
}
