import Crypto
import Foundation
@testable import SignetAge
import SignetCore
import SignetTestSupport
import Testing

/// One vector of the C2SP CCTV age test kit (`Vectors/cctv`, `Vectors/README.md`).
struct CCTVVector: Sendable, CustomTestStringConvertible {
    var name: String
    /// `success`, `payload failure`, `HMAC failure`, `header failure`, `armor failure` or `no match`.
    var expect: String
    /// The SHA-256 (hex) of all the plaintext released, even when decryption fails.
    var payloadHash: String?
    var fileKey: String?
    var identities: [String] = []
    var passphrases: [String] = []
    var armored = false
    var compressed = false
    var file: [UInt8]

    var testDescription: String { name }

    /// Whether Signet has every identity type the vector needs: X25519, post-quantum
    /// (`AGE-SECRET-KEY-PQ-1…`) and passphrases; the kit has no other kind.
    var isSupported: Bool { identities.allSatisfy { $0.hasPrefix("AGE-SECRET-KEY-1") || $0.hasPrefix("AGE-SECRET-KEY-PQ-1") } }

    static func loadAll() throws -> [CCTVVector] {
        let folder = try TestVectors.url("cctv", in: .module)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { !$0.hasPrefix(".") }.sorted()
        var vectors: [CCTVVector] = []
        for name in names {
            vectors.append(try parse(name: name, Array(try Data(contentsOf: folder.appendingPathComponent(name)))))
        }
        return vectors
    }

    /// The vectors whose identities Signet has.
    static func supported() throws -> [CCTVVector] {
        try loadAll().filter { $0.isSupported }
    }

    /// The binary vectors whose header parses (all but header, HMAC, armor and no-match failures).
    static func parsableHeaders() throws -> [CCTVVector] {
        try loadAll().filter { !$0.armored && ($0.expect == "success" || $0.expect == "payload failure") }
    }

    static func parse(name: String, _ bytes: [UInt8]) throws -> CCTVVector {
        var vector = CCTVVector(name: name, expect: "", file: [])
        var offset = 0
        while true {
            guard let newline = bytes[offset...].firstIndex(of: 0x0A) else {
                throw VectorError(description: "\(name): no empty line after the vector's keys")
            }
            let line = String(decoding: bytes[offset..<newline], as: UTF8.self)
            offset = newline + 1
            if line.isEmpty { break }
            guard let colon = line.range(of: ": ") else { throw VectorError(description: "\(name): bad key line \(line)") }
            let key = String(line[..<colon.lowerBound])
            let value = String(line[colon.upperBound...])
            switch key {
            case "expect": vector.expect = value
            case "payload": vector.payloadHash = value
            case "file key": vector.fileKey = value
            case "identity": vector.identities.append(value)
            case "passphrase": vector.passphrases.append(value)
            case "armored": vector.armored = value == "yes"
            case "compressed":
                guard value == "zlib" else { throw VectorError(description: "\(name): unknown compression \(value)") }
                vector.compressed = true
            case "comment": break
            default: throw VectorError(description: "\(name): unknown key \(key)")
            }
        }
        vector.file = Array(bytes[offset...])
        return vector
    }

    /// The age file, inflated when compressed (with python3's zlib: Foundation on Linux has none).
    func ageFile() throws -> [UInt8] {
        guard compressed else { return file }
        let inflate = "import sys, zlib; sys.stdout.buffer.write(zlib.decompress(sys.stdin.buffer.read()))"
        return Array(try Python.runOK(inflate, stdin: Data(file)).stdout)
    }

    /// The vector's X25519 identities, then its passphrases.
    func makeIdentities() throws -> [any AgeIdentity] {
        var result: [any AgeIdentity] = []
        for identity in identities {
            if identity.hasPrefix("AGE-SECRET-KEY-PQ-1") {
                result.append(try MLKEM768X25519Identity(identity))
            } else {
                result.append(try X25519Identity(identity))
            }
        }
        for passphrase in passphrases { result.append(ScryptIdentity(passphrase: SecretBytes(Array(passphrase.utf8)))) }
        return result
    }
}

@Suite("age test kit (C2SP CCTV)")
struct AgeVectorTests {
    @Test("the kit is complete, and every vector applies, the post-quantum ones included")
    func kit() throws {
        let vectors = try CCTVVector.loadAll()
        #expect(vectors.count >= 140)
        let supported = vectors.filter { $0.isSupported }
        #expect(supported.count == vectors.count)
        #expect(supported.filter { $0.identities.contains { $0.hasPrefix("AGE-SECRET-KEY-PQ-1") } }.count >= 17)
        for expectation in ["success", "payload failure", "HMAC failure", "header failure", "armor failure", "no match"] {
            #expect(supported.contains { $0.expect == expectation }, "\(expectation)")
        }
        #expect(supported.contains { $0.compressed })
        #expect(supported.contains { !$0.passphrases.isEmpty })
    }

    @Test("each vector decrypts, or fails at the step the kit names, releasing exactly the plaintext it names",
          arguments: try CCTVVector.supported())
    func vector(_ vector: CCTVVector) throws {
        let file = try vector.ageFile()
        let outcome = streamingDecrypt(file, identities: try vector.makeIdentities(), source: vector.name)
        let released = Array(SHA256.hash(data: outcome.written))
        let code = outcome.error?.code
        let got = outcome.error.map { "\($0)" } ?? "success"
        switch vector.expect {
        case "success":
            #expect(outcome.error == nil, "\(got)")
            let expected = try TestVectors.bytes(hex: try #require(vector.payloadHash))
            #expect(released == expected, "the plaintext differs")
        case "payload failure":
            #expect(code == "payloadInvalid", "\(got)")
            if let hash = vector.payloadHash {
                let expected = try TestVectors.bytes(hex: hash)
                #expect(released == expected, "released \(outcome.written.count) bytes, not the authenticated prefix")
            }
        case "HMAC failure":
            #expect(code == "headerMACMismatch", "\(got)")
            #expect(outcome.written.isEmpty)
        case "header failure":
            let codes: [SignetErrorCode<AgeError>] = ["malformedHeader", "unsupported", "workFactorTooHigh"]
            let matched = code.map { codes.contains($0) } ?? false
            #expect(matched, "\(got)")
            #expect(outcome.written.isEmpty)
        case "armor failure":
            #expect(code == "malformedHeader", "\(got)")
        case "no match":
            let codes: [SignetErrorCode<AgeError>] = ["noMatchingIdentity", "wrongPassphrase"]
            let matched = code.map { codes.contains($0) } ?? false
            #expect(matched, "\(got)")
            #expect(outcome.written.isEmpty)
        default:
            Issue.record("unknown expectation \(vector.expect)")
        }
    }

    @Test("every header that parses re-encodes to its own bytes (wrapping, empty last lines, grease)",
          arguments: try CCTVVector.parsableHeaders())
    func headerRoundTrip(_ vector: CCTVVector) throws {
        let file = try vector.ageFile()
        let header = try AgeHeader.parse(file, source: vector.name)
        let fileKey = try TestVectors.bytes(hex: try #require(vector.fileKey))
        let encoded = try AgeHeader.encode(stanzas: header.stanzas, fileKey: SecretBytes(fileKey))
        #expect(Array(file.prefix(encoded.count)) == encoded)
    }
}
