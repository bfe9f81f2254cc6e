import Foundation
import SignetCore
@testable import SignetHTTP
import SignetTestSupport
import Testing

/// One digest of `Vectors/rfc9530.json`.
struct RFC9530Vector: Decodable, Sendable, CustomTestStringConvertible {
    var id: String
    var algorithm: String
    var digestHeaderValue: String
    var body: String?
    var bodyHex: String?

    var testDescription: String { "\(id) (\(algorithm))" }

    var isSupported: Bool { ContentDigest.Algorithm(rawValue: algorithm) != nil }

    var bodyBytes: [UInt8] {
        get throws {
            if let body { return Array(body.utf8) }
            let hex = try #require(bodyHex, "\(id) has neither body nor bodyHex")
            return try TestVectors.bytes(hex: hex.filter { $0 != " " })
        }
    }
}

struct RFC9530File: Decodable, Sendable {
    struct MultiMember: Decodable, Sendable {
        var id: String
        var bodyHex: String
        var fieldValue: String
    }

    var vectors: [RFC9530Vector]
    var multiMemberFieldValues: [MultiMember]

    static func load() throws -> RFC9530File {
        try JSONDecoder().decode(RFC9530File.self, from: TestVectors.data("rfc9530.json", in: .module))
    }
}

/// A Content-Digest field value that must be refused, and how.
struct MalformedDigestCase: Sendable, CustomTestStringConvertible {
    let name: String
    let value: String
    let expected: SignetErrorCode<HTTPSignatureError>

    var testDescription: String { name }

    static let sha256OfSample = "X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE="
    static let sha512OfSample = "WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew=="

    static let all: [MalformedDigestCase] = [
        MalformedDigestCase(name: "a bare byte sequence, not a dictionary", value: ":\(sha256OfSample):", expected: "malformedField"),
        MalformedDigestCase(name: "an unterminated byte sequence", value: "sha-256=:\(sha256OfSample)", expected: "malformedField"),
        MalformedDigestCase(name: "sha-256 with 64 bytes", value: "sha-256=:\(sha512OfSample):", expected: "malformedField"),
        MalformedDigestCase(name: "sha-512 with 32 bytes", value: "sha-512=:\(sha256OfSample):", expected: "malformedField"),
        MalformedDigestCase(name: "sha-256 as a string", value: "sha-256=\"\(sha256OfSample)\"", expected: "malformedField"),
        MalformedDigestCase(name: "sha-256 as an integer", value: "sha-256=42", expected: "malformedField"),
        MalformedDigestCase(name: "sha-256 as a bare key (true)", value: "sha-256", expected: "malformedField"),
        MalformedDigestCase(name: "sha-256 as an inner list", value: "sha-256=(:\(sha256OfSample):)", expected: "malformedField"),
        MalformedDigestCase(name: "sha-256 with an empty byte sequence", value: "sha-256=::", expected: "malformedField"),
        MalformedDigestCase(
            name: "sha-256 twice (a checker could read either)", value: "sha-256=:\(sha256OfSample):, sha-256=:\(sha256OfSample):", expected: "malformedField"),
        // RFC 9530 B.5/B.6/B.11/C.1 print this value with one '=' too many (see the vector file).
        MalformedDigestCase(
            name: "the RFC's misprinted extra padding", value: "sha-256=:RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg==:", expected: "malformedField"),
        MalformedDigestCase(name: "only unknown algorithms", value: "md5=:Sd/dVLAcvNLSq16eXua5uQ==:, crc32c=:Q3lHIA==:", expected: "contentDigest"),
        MalformedDigestCase(name: "an empty field", value: "", expected: "contentDigest"),
        MalformedDigestCase(
            name: "more than 4096 bytes", value: "sha-256=:\(sha256OfSample):, x=" + String(repeating: "a", count: 4096), expected: "tooLarge"),
    ]
}

@Suite("RFC 9530 Content-Digest")
struct ContentDigestTests {
    @Test("the vector file holds 19 sha-256/sha-512 digests and 6 of algorithms Signet does not compute")
    func vectorFile() throws {
        let vectors = try RFC9530File.load().vectors
        #expect(vectors.count == 25)
        #expect(vectors.filter(\.isSupported).count == 19)
        #expect(Set(vectors.map(\.algorithm)) == ["sha-256", "sha-512", "md5", "sha", "unixsum", "unixcksum", "adler", "crc32c"])
    }

    @Test("Signet computes and checks each sha-256 and sha-512 digest RFC 9530 prints", arguments: try RFC9530File.load().vectors.filter(\.isSupported))
    func knownAnswer(_ vector: RFC9530Vector) throws {
        let algorithm = try #require(ContentDigest.Algorithm(rawValue: vector.algorithm))
        let body = try vector.bodyBytes
        #expect(ContentDigest.fieldValue(for: body, algorithm: algorithm) == vector.digestHeaderValue)
        try ContentDigest.verify(fieldValue: vector.digestHeaderValue, body: body)
        let parsed = try ContentDigest.parse(vector.digestHeaderValue)
        #expect(Array(parsed.keys) == [algorithm])
        var hasher = ContentDigest.Hasher(algorithms: [algorithm])
        hasher.update(body)
        #expect(parsed == hasher.finalize())
        let error = try #require(throws: HTTPSignatureError.self) {
            try ContentDigest.verify(fieldValue: vector.digestHeaderValue, body: body + [0x0A])
        }
        #expect(error.code == "contentDigest")
    }

    @Test(
        "a digest whose algorithm Signet does not compute is refused alone and ignored next to sha-256",
        arguments: try RFC9530File.load().vectors.filter({ !$0.isSupported }))
    func unsupportedAlgorithm(_ vector: RFC9530Vector) throws {
        let alone = try #require(throws: HTTPSignatureError.self) { try ContentDigest.parse(vector.digestHeaderValue) }
        #expect(alone.code == "contentDigest")
        let body = try vector.bodyBytes
        let sha256 = ContentDigest.fieldValue(for: body, algorithm: .sha256)
        for mixed in [vector.digestHeaderValue + ", " + sha256, sha256 + ", " + vector.digestHeaderValue] {
            #expect(try Array(ContentDigest.parse(mixed).keys) == [.sha256], "\(mixed)")
            try ContentDigest.verify(fieldValue: mixed, body: body)
            // The known digest still catches other content.
            let error = try #require(throws: HTTPSignatureError.self) { try ContentDigest.verify(fieldValue: mixed, body: body + [0x20]) }
            #expect(error.code == "contentDigest")
        }
    }

    @Test("an unknown algorithm's member is ignored whatever its value")
    func unknownMemberValue() throws {
        let sha256 = "sha-256=:\(MalformedDigestCase.sha256OfSample):"
        for unknown in ["md5=\"not bytes\"", "crc32c=7", "sha=(a b)", "unixsum"] {
            #expect(try Array(ContentDigest.parse(unknown + ", " + sha256).keys) == [.sha256], "\(unknown)")
        }
    }

    @Test("B.6: a two-member field (no space after the comma) has both digests checked; Signet writes it with a space")
    func multiMember() throws {
        let member = try #require(try RFC9530File.load().multiMemberFieldValues.first)
        let body = try TestVectors.bytes(hex: member.bodyHex.filter { $0 != " " })
        let parsed = try ContentDigest.parse(member.fieldValue)
        #expect(Set(parsed.keys) == [.sha256, .sha512])
        try ContentDigest.verify(fieldValue: member.fieldValue, body: body)
        var hasher = ContentDigest.Hasher()
        hasher.update(body)
        #expect(ContentDigest.fieldValue(hasher.finalize()) == member.fieldValue.replacingOccurrences(of: ":,sha-512=", with: ":, sha-512="))
        // sha-256 right, sha-512 of other content: refused.
        let halfRight = ContentDigest.fieldValue(for: body, algorithm: .sha256) + ", " + ContentDigest.fieldValue(for: body + [1], algorithm: .sha512)
        let error = try #require(throws: HTTPSignatureError.self) { try ContentDigest.verify(fieldValue: halfRight, body: body) }
        #expect(error.code == "contentDigest")
    }

    @Test("streaming in odd-sized pieces gives the one-shot digests (and python3 hashlib's)")
    func streaming() throws {
        let body: [UInt8] = (0..<10_240).map { UInt8(truncatingIfNeeded: $0) }  // bytes(range(256)) * 40
        let expected =
            "sha-256=:6WdgqHdocXvOvP0l3cfUa028laSwAU3vCAwIU599kNA=:, "
            + "sha-512=:rTonddq3L5BfnsG1NIOy32xCq/UPd21zLTCSRRSXee4BGvJSY1tSWcmaHng2SI/ltMcKakd+iudRYTnmOGNktg==:"
        var oneShot = ContentDigest.Hasher()
        oneShot.update(body)
        let digests = oneShot.finalize()
        #expect(ContentDigest.fieldValue(digests) == expected)
        #expect(ContentDigest.fieldValue(for: body) == "sha-512=:rTonddq3L5BfnsG1NIOy32xCq/UPd21zLTCSRRSXee4BGvJSY1tSWcmaHng2SI/ltMcKakd+iudRYTnmOGNktg==:")

        for sizes in [[1], [7], [13, 1, 4097], [64, 0, 3], [4096], [10_239, 1], [333, 1001]] {
            var hasher = ContentDigest.Hasher()
            var offset = 0
            var turn = 0
            while offset < body.count {
                let size = min(sizes[turn % sizes.count], body.count - offset)
                hasher.update(body[offset..<offset + size])
                offset += size
                turn += 1
            }
            #expect(hasher.finalize() == digests, "pieces of \(sizes)")
        }

        var viaPointer = ContentDigest.Hasher()
        body.withUnsafeBytes { viaPointer.update($0) }
        #expect(viaPointer.finalize() == digests)
        var viaSequence = ContentDigest.Hasher()
        viaSequence.update(body.lazy.map { $0 })  // not contiguous: the copying path
        #expect(viaSequence.finalize() == digests)
        var only256 = ContentDigest.Hasher(algorithms: [.sha256])
        only256.update(body)
        let sha256 = try #require(digests[.sha256])
        #expect(only256.finalize() == [.sha256: sha256])
    }

    @Test("content that does not match is refused: a wrong digest, one of two wrong, a stated digest not computed")
    func mismatch() throws {
        let body = HTTPTestSupport.sampleBody
        let other = Array("{\"hello\": \"World\"}".utf8)
        #expect(ContentDigest.fieldValue(for: body) == HTTPTestSupport.sampleBodyContentDigest)
        let wrong = try #require(throws: HTTPSignatureError.self) {
            try ContentDigest.verify(fieldValue: ContentDigest.fieldValue(for: other), body: body)
        }
        #expect(wrong.code == "contentDigest")

        let stated = try ContentDigest.parse(HTTPTestSupport.sampleBodyContentDigest)
        var only256 = ContentDigest.Hasher(algorithms: [.sha256])
        only256.update(body)
        let notComputed = try #require(throws: HTTPSignatureError.self) { try ContentDigest.verify(stated: stated, computed: only256.finalize()) }
        #expect(notComputed.code == "contentDigest")
        var both = ContentDigest.Hasher()
        both.update(body)
        try ContentDigest.verify(stated: stated, computed: both.finalize())
        // Empty content has a digest too (RFC 9530 B.2).
        try ContentDigest.verify(fieldValue: "sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:", body: [UInt8]())
        #expect(throws: HTTPSignatureError.self) {
            try ContentDigest.verify(fieldValue: "sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:", body: body)
        }
    }

    @Test("malformed Content-Digest fields are refused", arguments: MalformedDigestCase.all)
    func malformed(_ c: MalformedDigestCase) throws {
        let error = try #require(throws: HTTPSignatureError.self) { try ContentDigest.parse(c.value) }
        #expect(error.code == c.expected, "got \(error)")
        if c.expected == "malformedField" {
            #expect(error.malformedFieldName == "Content-Digest")
        }
        if c.expected == "tooLarge" {
            #expect(error == .tooLarge(what: "the Content-Digest field", limit: 4096))
        }
        // verify(fieldValue:body:) refuses it the same way.
        let viaVerify = try #require(throws: HTTPSignatureError.self) { try ContentDigest.verify(fieldValue: c.value, body: HTTPTestSupport.sampleBody) }
        #expect(viaVerify == error)
    }

    @Test("a field of exactly 4096 bytes is read")
    func sizeLimit() throws {
        let prefix = "sha-256=:\(MalformedDigestCase.sha256OfSample):, x="
        let exact = prefix + String(repeating: "a", count: 4096 - prefix.utf8.count)
        #expect(exact.utf8.count == 4096)
        #expect(try Array(ContentDigest.parse(exact).keys) == [.sha256])
        try ContentDigest.verify(fieldValue: exact, body: HTTPTestSupport.sampleBody)
        let error = try #require(throws: HTTPSignatureError.self) { try ContentDigest.parse(exact + "a") }
        #expect(error == .tooLarge(what: "the Content-Digest field", limit: 4096))
    }
}
