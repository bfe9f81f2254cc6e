import Foundation
import SignetCore
import SignetTestSupport
import Testing

/// One test case from `Vectors/rfc4231-hmac.json` (RFC 4231 §4).
struct HMACVector: Decodable, Sendable, CustomTestStringConvertible {
    var name: String
    var key: String
    var data: String
    var hmacSHA256: String
    var hmacSHA512: String
    /// Test case 5 publishes only the leftmost bytes of each MAC.
    var truncateBytes: Int?

    var testDescription: String { name }

    func expectedHex(_ algorithm: MessageAuthenticator.Algorithm) -> String {
        switch algorithm {
        case .hmacSHA256: return hmacSHA256
        case .hmacSHA512: return hmacSHA512
        }
    }

    /// The computed tag cut to the length the RFC publishes.
    func comparable(_ tag: [UInt8]) -> [UInt8] {
        truncateBytes.map { Array(tag.prefix($0)) } ?? tag
    }

    static func loadAll() throws -> [HMACVector] {
        try TestVectors.decode(RFC4231File.self, "rfc4231-hmac.json", in: .module).tests
    }

    private struct RFC4231File: Decodable {
        var tests: [HMACVector]
    }
}

@Suite("HMAC (RFC 4231 known answers) and tag verification")
struct HMACVectorTests {
    @Test("the vector file holds the seven RFC 4231 cases, case 5 truncated to 128 bits")
    func vectorFileIsComplete() throws {
        let vectors = try HMACVector.loadAll()
        #expect(vectors.count == 7)
        #expect(vectors.filter { $0.truncateBytes != nil }.map(\.name) == ["RFC 4231 test case 5"])
        for vector in vectors {
            let published = vector.truncateBytes.map { $0 * 2 }
            #expect(vector.hmacSHA256.count == published ?? 64, "\(vector.name)")
            #expect(vector.hmacSHA512.count == published ?? 128, "\(vector.name)")
        }
    }

    @Test(
        "MessageAuthenticator gives the RFC 4231 MAC",
        arguments: try HMACVector.loadAll(), MessageAuthenticator.Algorithm.allCases)
    func knownAnswer(_ vector: HMACVector, _ algorithm: MessageAuthenticator.Algorithm) throws {
        let key = try TestVectors.bytes(hex: vector.key)
        let data = try TestVectors.bytes(hex: vector.data)
        let expected = try TestVectors.bytes(hex: vector.expectedHex(algorithm))

        var mac = try MessageAuthenticator(algorithm: algorithm, key: SecretBytes(key))
        #expect(mac.algorithm == algorithm)
        mac.update(data)
        let tag = mac.finalize()
        #expect(tag.count == algorithm.tagByteCount)
        #expect(vector.comparable(tag) == expected)
        // matches: the whole tag (the published one when it is not truncated), and nothing
        // else (a changed bit, a truncated tag).
        #expect(mac.matches(tag))
        if expected.count == tag.count { #expect(mac.matches(expected)) }
        #expect(!mac.matches(Array(tag.dropLast())))
        #expect(!mac.matches(tag + [0]))
        for bit in [0, 9, tag.count * 8 - 1] {
            var changed = tag
            changed[bit / 8] ^= UInt8(1) << UInt8(bit % 8)
            #expect(!mac.matches(changed), "bit \(bit)")
        }

        // The same tag whatever the pieces the data arrives in.
        for size in [1, 7, 64, 129] {
            var pieces = try MessageAuthenticator(algorithm: algorithm, key: SecretBytes(key))
            var offset = 0
            while offset < data.count {
                let end = min(offset + size, data.count)
                data[offset..<end].withUnsafeBytes { pieces.update(bufferPointer: $0) }
                offset = end
            }
            #expect(pieces.finalize() == tag, "pieces of \(size) bytes")
        }

        // The published (possibly truncated) value verifies against the computed one.
        #expect(throws: Never.self) {
            try MessageAuthenticator.verify(tag: vector.comparable(tag), expected: expected, subject: vector.name)
        }
    }

    @Test(
        "one key used again and again — interleaved, both algorithms, from many tasks at once — gives the RFC 4231 MAC every time (its kept key schedule is never changed by a use)",
        arguments: try HMACVector.loadAll())
    func keptKeySchedule(_ vector: HMACVector) async throws {
        let key = SecretBytes(try TestVectors.bytes(hex: vector.key))
        let data = try TestVectors.bytes(hex: vector.data)
        for algorithm in MessageAuthenticator.Algorithm.allCases {
            let expected = try TestVectors.bytes(hex: vector.expectedHex(algorithm))
            // Two MACs under one key at once: feeding one leaves the other (and the key) alone.
            var first = try MessageAuthenticator(algorithm: algorithm, key: key)
            var second = try MessageAuthenticator(algorithm: algorithm, key: key)
            first.update(data)
            second.update([0x00])
            #expect(vector.comparable(first.finalize()) == expected, "\(algorithm)")
            var fresh = try MessageAuthenticator(algorithm: algorithm, key: SecretBytes(try TestVectors.bytes(hex: vector.key)))
            fresh.update([0x00])
            #expect(second.finalize() == fresh.finalize(), "\(algorithm)")
            let tags = try await withThrowingTaskGroup(of: [UInt8].self) { group in
                for _ in 0..<32 {
                    group.addTask {
                        var mac = try MessageAuthenticator(algorithm: algorithm, key: key)
                        mac.update(data)
                        return vector.comparable(mac.finalize())
                    }
                }
                return try await group.reduce(into: [[UInt8]]()) { $0.append($1) }
            }
            #expect(tags.count == 32 && tags.allSatisfy { $0 == expected }, "\(algorithm)")
        }
    }

    @Test("authenticating a file gives the RFC 4231 MAC", arguments: try HMACVector.loadAll())
    func file(_ vector: HMACVector) throws {
        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let path = try scratch.write("data.bin", try TestVectors.bytes(hex: vector.data))
        let key = SecretBytes(try TestVectors.bytes(hex: vector.key))
        for algorithm in MessageAuthenticator.Algorithm.allCases {
            let counter = ByteCounter()
            let tag = try MessageAuthenticator.authenticate(
                path: path, algorithm: algorithm, key: key, progress: { counter.add($0) })
            let expected = try TestVectors.bytes(hex: vector.expectedHex(algorithm))
            #expect(vector.comparable(tag) == expected, "\(algorithm)")
            #expect(counter.total == vector.data.count / 2)
        }
    }

    @Test("the algorithm names are the ones the CLI accepts")
    func algorithmNames() {
        #expect(MessageAuthenticator.Algorithm(rawValue: "hmac-sha256") == .hmacSHA256)
        #expect(MessageAuthenticator.Algorithm(rawValue: "hmac-sha512") == .hmacSHA512)
        #expect(MessageAuthenticator.Algorithm(rawValue: "sha256") == nil)
        #expect(MessageAuthenticator.Algorithm.hmacSHA256.tagByteCount == 32)
        #expect(MessageAuthenticator.Algorithm.hmacSHA512.tagByteCount == 64)
    }

    @Test("an empty key is refused as a usage error", arguments: MessageAuthenticator.Algorithm.allCases)
    func emptyKey(_ algorithm: MessageAuthenticator.Algorithm) throws {
        let error = #expect(throws: SignetCoreError.self) {
            try MessageAuthenticator(algorithm: algorithm, key: SecretBytes([UInt8]()))
        }
        guard case .invalidArgument(_)? = error else {
            Issue.record("expected invalidArgument, got \(String(describing: error))")
            return
        }
        #expect(error?.category == .usage)

        let scratch = try TemporaryFolder()
        defer { scratch.remove() }
        let path = try scratch.write("data.bin", Array("data".utf8))
        let fileError = #expect(throws: SignetCoreError.self) {
            try MessageAuthenticator.authenticate(path: path, algorithm: algorithm, key: SecretBytes([UInt8]()))
        }
        #expect(fileError?.category == .usage)
    }

    @Test("a one-byte key is accepted (only the empty key is refused)")
    func oneByteKey() throws {
        let key: [UInt8] = [0x00]
        var mac = try MessageAuthenticator(algorithm: .hmacSHA256, key: SecretBytes(key))
        mac.update(Array("x".utf8))
        #expect(mac.finalize().count == 32)
    }

    @Test("verify accepts an identical tag", arguments: MessageAuthenticator.Algorithm.allCases)
    func verifyEqual(_ algorithm: MessageAuthenticator.Algorithm) throws {
        let tag = try Self.sampleTag(algorithm)
        #expect(throws: Never.self) {
            try MessageAuthenticator.verify(tag: tag, expected: Array(tag), subject: "archive.tar")
        }
    }

    @Test("verify throws mismatch for every single-bit change", arguments: MessageAuthenticator.Algorithm.allCases)
    func verifyOneBitChange(_ algorithm: MessageAuthenticator.Algorithm) throws {
        let tag = try Self.sampleTag(algorithm)
        for bit in 0..<(tag.count * 8) {
            var expected = tag
            expected[bit / 8] ^= UInt8(1) << UInt8(bit % 8)
            let error = #expect(throws: SignetCoreError.self, "bit \(bit)") {
                try MessageAuthenticator.verify(tag: tag, expected: expected, subject: "archive.tar")
            }
            Self.checkMismatch(error, subject: "archive.tar")
        }
    }

    @Test("verify throws mismatch when the lengths differ", arguments: MessageAuthenticator.Algorithm.allCases)
    func verifyLengthChange(_ algorithm: MessageAuthenticator.Algorithm) throws {
        let tag = try Self.sampleTag(algorithm)
        let others: [[UInt8]] = [[], Array(tag.dropLast()), tag + [0x00], Array(tag.prefix(16)), tag + tag]
        for expected in others {
            let error = #expect(throws: SignetCoreError.self, "expected length \(expected.count)") {
                try MessageAuthenticator.verify(tag: tag, expected: expected, subject: "report.pdf")
            }
            Self.checkMismatch(error, subject: "report.pdf")
        }
    }

    @Test("a different key or different data gives a different tag")
    func sensitivity() throws {
        let data = Array("The quick brown fox".utf8)
        func tag(_ key: [UInt8], _ data: [UInt8]) throws -> [UInt8] {
            var mac = try MessageAuthenticator(algorithm: .hmacSHA256, key: SecretBytes(key))
            mac.update(data)
            return mac.finalize()
        }
        let reference = try tag([1, 2, 3, 4], data)
        let otherKey = try tag([1, 2, 3, 5], data)
        let otherData = try tag([1, 2, 3, 4], data + [0])
        let again = try tag([1, 2, 3, 4], data)
        #expect(otherKey != reference)
        #expect(otherData != reference)
        #expect(again == reference)
    }

    // MARK: - Helpers

    /// The RFC 4231 case 2 MAC ("Jefe"), full length.
    private static func sampleTag(_ algorithm: MessageAuthenticator.Algorithm) throws -> [UInt8] {
        var mac = try MessageAuthenticator(algorithm: algorithm, key: SecretBytes(Array("Jefe".utf8)))
        mac.update(Array("what do ya want for nothing?".utf8))
        return mac.finalize()
    }

    private static func checkMismatch(_ error: SignetCoreError?, subject: String) {
        guard case .mismatch(let detail)? = error else {
            Issue.record("expected mismatch, got \(String(describing: error))")
            return
        }
        #expect(detail.contains(subject))
        #expect(error?.category == .checkFailed)
    }
}
