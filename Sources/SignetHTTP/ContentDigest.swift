import Crypto
import Foundation
import RawStructuredFieldValues
import SignetCore

/// RFC 9530 `Content-Digest`: `sha-256=:…:, sha-512=:…:` over the message content.
public enum ContentDigest {
    /// The digest algorithms of RFC 9530 that Signet computes (the insecure ones are refused).
    public enum Algorithm: String, Sendable, CaseIterable {
        /// SHA-256, written under the key `sha-256`.
        case sha256 = "sha-256"
        /// SHA-512, written under the key `sha-512`.
        case sha512 = "sha-512"
    }

    /// A streaming computation: feed the body in pieces of any size, then take the field value.
    public struct Hasher: Sendable {
        private var sha256: SHA256?
        private var sha512: SHA512?
        /// How many body bytes were fed.
        public private(set) var byteCount = 0

        /// Starts a digest with the given algorithms (both by default).
        public init(algorithms: Set<Algorithm> = [.sha256, .sha512]) {
            sha256 = algorithms.contains(.sha256) ? SHA256() : nil
            sha512 = algorithms.contains(.sha512) ? SHA512() : nil
        }

        /// Feeds more of the body.
        public mutating func update(_ bytes: UnsafeRawBufferPointer) {
            byteCount += bytes.count
            sha256?.update(bufferPointer: bytes)
            sha512?.update(bufferPointer: bytes)
        }

        /// Feeds more of the body.
        public mutating func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
            if bytes.withContiguousStorageIfAvailable({ update(UnsafeRawBufferPointer($0)) }) == nil {
                Array(bytes).withUnsafeBytes { update($0) }
            }
        }

        /// The digests computed, by algorithm.
        public func finalize() -> [Algorithm: [UInt8]] {
            var result: [Algorithm: [UInt8]] = [:]
            if let sha256 { result[.sha256] = Array(sha256.finalize()) }
            if let sha512 { result[.sha512] = Array(sha512.finalize()) }
            return result
        }
    }

    /// The digests of a body (both by default, as the verifier takes them); nil for an empty
    /// body (a message without content).
    public static func digests(of body: some Sequence<UInt8>, algorithms: Set<Algorithm> = [.sha256, .sha512]) -> [Algorithm: [UInt8]]? {
        var hasher = Hasher(algorithms: algorithms)
        hasher.update(body)
        return hasher.byteCount == 0 ? nil : hasher.finalize()
    }

    /// The `Content-Digest` field value for `body` with one algorithm (SHA-512 by default),
    /// e.g. `sha-512=:WZDPaVn…:`.
    public static func fieldValue(for body: some Sequence<UInt8>, algorithm: Algorithm = .sha512) -> String {
        var hasher = Hasher(algorithms: [algorithm])
        hasher.update(body)
        return fieldValue(hasher.finalize())
    }

    /// The field value for digests already computed, in a fixed order (sha-256 first).
    public static func fieldValue(_ digests: [Algorithm: [UInt8]]) -> String {
        Algorithm.allCases.compactMap { algorithm in
            digests[algorithm].map { "\(algorithm.rawValue)=:\(Base64.encode($0)):" }
        }.joined(separator: ", ")
    }

    /// The digests a field value states, for the algorithms Signet knows (others are
    /// ignored, as RFC 9530 §2 allows). Throws when the field does not parse or states none
    /// that Signet knows.
    public static func parse(_ fieldValue: String) throws -> [Algorithm: [UInt8]] {
        guard fieldValue.utf8.count <= 4096 else { throw HTTPSignatureError.tooLarge(what: "the Content-Digest field", limit: 4096) }
        let parsed: StructuredDictionaryParser.Parsed
        do {
            // RFC 9530 registers a handful of algorithms: more members than that are no digest list.
            parsed = try StructuredDictionaryParser.parse(fieldValue, limits: .init(members: 16, innerListItems: 16, parameters: 16))
        } catch StructuredDictionaryParser.Failure.tooManyMembers {
            throw HTTPSignatureError.tooLarge(what: "the number of Content-Digest members", limit: 16)
        } catch StructuredDictionaryParser.Failure.innerListTooLong, StructuredDictionaryParser.Failure.tooManyParameters {
            throw HTTPSignatureError.malformedField(field: "Content-Digest", detail: "not a list of digests")
        } catch {
            throw HTTPSignatureError.malformedField(field: "Content-Digest", detail: "not a structured dictionary")
        }
        // Two values for one algorithm: which one a checker reads would be its own choice.
        if let repeated = parsed.repeatedKey { throw HTTPSignatureError.malformedField(field: "Content-Digest", detail: "\(repeated) appears twice") }
        let dictionary = parsed.members
        var digests: [Algorithm: [UInt8]] = [:]
        for (name, member) in dictionary {
            guard let algorithm = Algorithm(rawValue: name) else { continue }
            guard case .item(let item) = member, case .undecodedByteSequence(let text) = item.rfc9651BareItem,
                let bytes = Base64.decode(text)
            else { throw HTTPSignatureError.malformedField(field: "Content-Digest", detail: "\(name) must be a byte sequence (:base64:)") }
            let expected = algorithm == .sha256 ? 32 : 64
            guard bytes.count == expected else {
                throw HTTPSignatureError.malformedField(field: "Content-Digest", detail: "\(name) must be \(expected) bytes, not \(bytes.count)")
            }
            digests[algorithm] = bytes
        }
        guard !digests.isEmpty else {
            throw HTTPSignatureError.contentDigest(detail: "no sha-256 or sha-512 digest (the field names \(dictionary.map(\.0).joined(separator: ", ")))")
        }
        return digests
    }

    /// Checks `body` against a `Content-Digest` field value: every digest stated with an
    /// algorithm Signet knows must match.
    public static func verify(fieldValue: String, body: some Sequence<UInt8>) throws {
        let stated = try parse(fieldValue)
        var hasher = Hasher(algorithms: Set(stated.keys))
        hasher.update(body)
        try verify(stated: stated, computed: hasher.finalize())
    }

    /// Compares stated and computed digests in constant time.
    public static func verify(stated: [Algorithm: [UInt8]], computed: [Algorithm: [UInt8]]) throws {
        for (algorithm, digest) in stated {
            guard let actual = computed[algorithm], ConstantTime.equals(actual, digest) else {
                throw HTTPSignatureError.contentDigest(detail: "the body does not match its \(algorithm.rawValue) digest")
            }
        }
    }
}
