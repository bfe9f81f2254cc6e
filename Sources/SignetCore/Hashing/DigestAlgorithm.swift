import Crypto

/// The hash functions Signet computes. MD5 and SHA-1 exist only for legacy interoperability
/// (Gravatar, old checksum lists) and are marked insecure.
public enum DigestAlgorithm: String, CaseIterable, Sendable, Codable {
    /// SHA-2 (FIPS 180-4) with a 256-, 384- or 512-bit digest; SHA-256 is the default.
    case sha256, sha384, sha512
    /// Broken for collision resistance; for legacy uses only.
    case md5
    /// Broken for collision resistance; for legacy uses only.
    case sha1

    /// Whether the algorithm is unfit for security (collisions are practical).
    public var isInsecure: Bool { self == .md5 || self == .sha1 }

    /// Digest length in bytes.
    public var byteCount: Int {
        switch self {
        case .sha256: return 32
        case .sha384: return 48
        case .sha512: return 64
        case .md5: return 16
        case .sha1: return 20
        }
    }

    /// The name as coreutils' BSD-style (`--tag`) lines and openssl print it: `SHA256`, `MD5`.
    public var tagName: String {
        switch self {
        case .sha256: return "SHA256"
        case .sha384: return "SHA384"
        case .sha512: return "SHA512"
        case .md5: return "MD5"
        case .sha1: return "SHA1"
        }
    }

    /// Finds the algorithm whose digest has `byteCount` bytes among `candidates`.
    public static func inferred(fromByteCount byteCount: Int, among candidates: [DigestAlgorithm]) -> DigestAlgorithm? {
        candidates.first { $0.byteCount == byteCount }
    }

    /// A fresh streaming hasher for this algorithm.
    public func makeHasher() -> StreamingHasher { StreamingHasher(self) }

    /// Hashes bytes held in memory.
    public func hash<Bytes: Sequence>(_ bytes: Bytes) -> MessageDigest where Bytes.Element == UInt8 {
        var hasher = makeHasher()
        hasher.update(Array(bytes))
        return hasher.finalize()
    }
}

/// An incremental hash computation over any of the ``DigestAlgorithm``s.
public struct StreamingHasher: Sendable {
    private enum State: Sendable {
        case sha256(SHA256), sha384(SHA384), sha512(SHA512)
        case md5(Insecure.MD5), sha1(Insecure.SHA1)
        /// Held only during `update`, so the hash function is uniquely referenced and
        /// swift-crypto updates it in place instead of copying its context each time.
        case updating
    }

    private var state: State
    /// The algorithm being computed.
    public let algorithm: DigestAlgorithm

    init(_ algorithm: DigestAlgorithm) {
        self.algorithm = algorithm
        switch algorithm {
        case .sha256: state = .sha256(SHA256())
        case .sha384: state = .sha384(SHA384())
        case .sha512: state = .sha512(SHA512())
        case .md5: state = .md5(Insecure.MD5())
        case .sha1: state = .sha1(Insecure.SHA1())
        }
    }

    /// Feeds more input.
    public mutating func update(bufferPointer buffer: UnsafeRawBufferPointer) {
        let current = state
        state = .updating
        switch consume current {
        case .sha256(var h): h.update(bufferPointer: buffer); state = .sha256(h)
        case .sha384(var h): h.update(bufferPointer: buffer); state = .sha384(h)
        case .sha512(var h): h.update(bufferPointer: buffer); state = .sha512(h)
        case .md5(var h): h.update(bufferPointer: buffer); state = .md5(h)
        case .sha1(var h): h.update(bufferPointer: buffer); state = .sha1(h)
        case .updating: preconditionFailure("StreamingHasher is restored at the end of every update")
        }
    }

    /// Feeds more input.
    public mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update(bufferPointer: $0) }
    }

    /// Finishes the computation.
    public func finalize() -> MessageDigest {
        switch state {
        case .sha256(let h): return MessageDigest(.sha256(h.finalize()))
        case .sha384(let h): return MessageDigest(.sha384(h.finalize()))
        case .sha512(let h): return MessageDigest(.sha512(h.finalize()))
        case .md5(let h): return MessageDigest(.md5(h.finalize()))
        case .sha1(let h): return MessageDigest(.sha1(h.finalize()))
        case .updating: preconditionFailure("StreamingHasher is restored at the end of every update")
        }
    }
}

/// The result of hashing: the digest bytes and the algorithm that made them.
///
/// Values come only from ``StreamingHasher``, never from loose bytes, so a signer can rely on
/// the digest really being of the algorithm it claims (RSA's DigestInfo depends on it).
public struct MessageDigest: Sendable, Equatable, CustomStringConvertible {
    enum Concrete: Sendable, Equatable {
        case sha256(SHA256Digest), sha384(SHA384Digest), sha512(SHA512Digest)
        case md5(Insecure.MD5Digest), sha1(Insecure.SHA1Digest)
    }

    let concrete: Concrete

    init(_ concrete: Concrete) { self.concrete = concrete }

    /// The algorithm that produced this digest.
    public var algorithm: DigestAlgorithm {
        switch concrete {
        case .sha256: return .sha256
        case .sha384: return .sha384
        case .sha512: return .sha512
        case .md5: return .md5
        case .sha1: return .sha1
        }
    }

    /// The digest bytes.
    public var bytes: [UInt8] {
        switch concrete {
        case .sha256(let d): return Array(d)
        case .sha384(let d): return Array(d)
        case .sha512(let d): return Array(d)
        case .md5(let d): return Array(d)
        case .sha1(let d): return Array(d)
        }
    }

    /// Lower-case hex, as `sha256sum` prints it.
    public var hex: String { Hex.encode(bytes) }

    /// The algorithm and the hex digest for messages, such as `sha256:e3b0c442…`.
    public var description: String { "\(algorithm.rawValue):\(hex)" }
}
