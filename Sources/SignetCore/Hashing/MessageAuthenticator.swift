import Crypto

/// HMAC over files and streams, with constant-time verification.
public struct MessageAuthenticator: Sendable {
    /// The MAC algorithms: `hmac-sha256` and `hmac-sha512`.
    public enum Algorithm: String, CaseIterable, Sendable {
        /// HMAC (RFC 2104) with SHA-256: a 32-byte tag, as `openssl dgst -sha256 -hmac` makes.
        case hmacSHA256 = "hmac-sha256"
        /// HMAC (RFC 2104) with SHA-512: a 64-byte tag, as `openssl dgst -sha512 -hmac` makes.
        case hmacSHA512 = "hmac-sha512"

        /// Tag length in bytes.
        public var tagByteCount: Int { self == .hmacSHA256 ? 32 : 64 }
    }

    private enum State: Sendable {
        case sha256(HMAC<SHA256>), sha512(HMAC<SHA512>)
        /// Held only during `update`, so the MAC's hash state is uniquely referenced and
        /// updated in place rather than copied (see ``StreamingHasher``).
        case updating
    }

    private var state: State
    /// The algorithm in use.
    public let algorithm: Algorithm

    /// The key schedules a ``SecretBytes`` keeps: the MAC's state after the key, made on first
    /// use. A MAC started from one copies it (the hash states are copied on write).
    struct Prepared: Sendable {
        var sha256: HMAC<SHA256>?
        var sha512: HMAC<SHA512>?
    }

    /// Starts a MAC computation under `key`. An empty key is refused: it is always a mistake.
    ///
    /// The key schedule is made once per `key` and kept with it (a server checks every request
    /// under the same few keys); it goes when `key` does.
    public init(algorithm: Algorithm, key: SecretBytes) throws {
        guard !key.isEmpty else { throw SignetCoreError.invalidArgument(detail: "the HMAC key is empty") }
        self.algorithm = algorithm
        switch algorithm {
        case .hmacSHA256: state = .sha256(Self.prepared(key, \.sha256))
        case .hmacSHA512: state = .sha512(Self.prepared(key, \.sha512))
        }
    }

    /// The MAC state after `key` for one hash, made once and kept in `key`.
    private static func prepared<H: HashFunction>(_ key: SecretBytes, _ slot: WritableKeyPath<Prepared, HMAC<H>?>) -> HMAC<H> {
        key.preparedMACs.withLock { prepared in
            if let mac = prepared[keyPath: slot] { return mac }
            let mac = HMAC<H>(key: key.withUnsafeBytes { SymmetricKey(data: $0) })
            prepared[keyPath: slot] = mac
            return mac
        }
    }

    /// Feeds more input.
    public mutating func update(bufferPointer buffer: UnsafeRawBufferPointer) {
        let current = state
        state = .updating
        switch consume current {
        case .sha256(var mac): mac.update(data: buffer); state = .sha256(mac)
        case .sha512(var mac): mac.update(data: buffer); state = .sha512(mac)
        case .updating: preconditionFailure("MessageAuthenticator is restored at the end of every update")
        }
    }

    /// Feeds more input.
    public mutating func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        if let contiguous = bytes.withContiguousStorageIfAvailable({ update(bufferPointer: UnsafeRawBufferPointer($0)) }) {
            return contiguous
        }
        Array(bytes).withUnsafeBytes { update(bufferPointer: $0) }
    }

    /// Whether the tag of everything fed in equals `expected`, compared in constant time
    /// (``ConstantTime``) without copying the tag out: what a verifier needs, not the tag.
    public func matches(_ expected: [UInt8]) -> Bool {
        expected.withUnsafeBytes { expected in withTag { ConstantTime.equals($0, expected) } }
    }

    /// Finishes and returns the tag.
    public func finalize() -> [UInt8] {
        withTag { Array($0) }
    }

    /// Finishes and lends the tag, still in the buffer that made it.
    private func withTag<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        switch state {
        case .sha256(let mac): return mac.finalize().withUnsafeBytes(body)
        case .sha512(let mac): return mac.finalize().withUnsafeBytes(body)
        case .updating: preconditionFailure("MessageAuthenticator is restored at the end of every update")
        }
    }

    /// Computes the tag of a whole file (or `-`) in constant memory.
    public static func authenticate(
        path: String, algorithm: Algorithm, key: SecretBytes, progress: FileDigester.Progress? = nil
    ) throws -> [UInt8] {
        var mac = try MessageAuthenticator(algorithm: algorithm, key: key)
        let input = try FileInput(path: path)
        try input.stream(progress: progress) { mac.update(bufferPointer: $0) }
        return mac.finalize()
    }

    /// Checks `expected` against the computed `tag` in constant time; throws
    /// ``SignetCoreError/mismatch(detail:)`` when they differ.
    public static func verify(tag: [UInt8], expected: [UInt8], subject: String) throws {
        guard ConstantTime.equals(tag, expected) else {
            throw SignetCoreError.mismatch(detail: "\(subject): HMAC does not match")
        }
    }
}
