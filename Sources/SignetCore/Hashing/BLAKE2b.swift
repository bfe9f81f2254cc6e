/// BLAKE2b (RFC 7693), unkeyed, with a digest of 1 to 64 bytes: what libsodium's
/// `crypto_generichash` computes, and what minisign hashes files and checksums keys with.
///
/// swift-crypto has no BLAKE2, so this is a direct implementation of RFC 7693 §3, checked
/// against the RFC's vectors and python's `hashlib.blake2b`.
///
/// ```swift
/// var hasher = BLAKE2b()                 // 64-byte digest
/// hasher.update(Array("ab".utf8))
/// hasher.update(Array("c".utf8))
/// let digest = hasher.finalize()         // ba80a53f…
/// let short = try BLAKE2b.hash(Array("abc".utf8), digestLength: 32)
/// ```
///
/// A hasher is used once: ``finalize()`` returns the digest and wipes the state.
public struct BLAKE2b: Sendable {
    /// The largest (and default) digest length, in bytes.
    public static let maximumDigestLength = 64
    /// The size of a block, in bytes.
    public static let blockSize = 128

    /// The digest length this hasher produces.
    public let digestLength: Int

    /// The chaining value h and the byte counter t.
    private var state: State
    /// Input not yet compressed: up to one whole block, because the last block is
    /// compressed differently and is only known to be last in ``finalize()``.
    private var buffer = [UInt8](repeating: 0, count: BLAKE2b.blockSize)
    private var buffered = 0
    private var finalized = false

    private static let iv: [UInt64] = [
        0x6a09_e667_f3bc_c908, 0xbb67_ae85_84ca_a73b, 0x3c6e_f372_fe94_f82b, 0xa54f_f53a_5f1d_36f1,
        0x510e_527f_ade6_82d1, 0x9b05_688c_2b3e_6c1f, 0x1f83_d9ab_fb41_bd6b, 0x5be0_cd19_137e_2179,
    ]

    /// A hasher with the full 64-byte digest (BLAKE2b-512).
    public init() {
        self.init(validLength: Self.maximumDigestLength)
    }

    /// A hasher with a digest of `digestLength` bytes (1 to 64; BLAKE2b-256 is 32).
    public init(digestLength: Int) throws {
        guard (1...Self.maximumDigestLength).contains(digestLength) else {
            throw SignetCoreError.invalidArgument(detail: "BLAKE2b digest length must be from 1 to 64 bytes, not \(digestLength)")
        }
        self.init(validLength: digestLength)
    }

    private init(validLength: Int) {
        digestLength = validLength
        let iv = Self.iv
        // Parameter block word 0: digest length, key length 0, fanout 1, depth 1.
        state = State(
            h0: iv[0] ^ (0x0101_0000 | UInt64(validLength)), h1: iv[1], h2: iv[2], h3: iv[3], h4: iv[4], h5: iv[5], h6: iv[6], h7: iv[7])
    }

    /// Adds bytes to the message.
    public mutating func update(bufferPointer bytes: UnsafeRawBufferPointer) {
        precondition(!finalized, "BLAKE2b: update after finalize")
        guard var source = bytes.baseAddress, bytes.count > 0 else { return }
        var remaining = bytes.count
        // Fill the buffer; compress it only when more input follows.
        if buffered > 0 || remaining <= Self.blockSize {
            let take = min(Self.blockSize - buffered, remaining)
            buffer.withUnsafeMutableBytes { ($0.baseAddress! + buffered).copyMemory(from: source, byteCount: take) }
            buffered += take
            source += take
            remaining -= take
            guard remaining > 0 else { return }
            state.count(Self.blockSize)
            buffer.withUnsafeBytes { Self.compress(&state, $0.baseAddress!, isLast: false) }
            buffered = 0
        }
        // Whole blocks straight from the input, keeping at least one byte back for the end.
        while remaining > Self.blockSize {
            state.count(Self.blockSize)
            Self.compress(&state, source, isLast: false)
            source += Self.blockSize
            remaining -= Self.blockSize
        }
        buffer.withUnsafeMutableBytes { $0.baseAddress!.copyMemory(from: source, byteCount: remaining) }
        buffered = remaining
    }

    /// Adds bytes to the message.
    public mutating func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        if bytes.withContiguousStorageIfAvailable({ update(bufferPointer: UnsafeRawBufferPointer($0)) }) != nil {
            return
        }
        let array = Array(bytes)
        array.withUnsafeBytes { update(bufferPointer: $0) }
    }

    /// The digest of everything added. The state is wiped: the hasher cannot be used again.
    public mutating func finalize() -> [UInt8] {
        precondition(!finalized, "BLAKE2b: finalize called twice")
        finalized = true
        state.count(buffered)
        let used = buffered
        buffer.withUnsafeMutableBytes { block in
            (block.baseAddress! + used).initializeMemory(as: UInt8.self, repeating: 0, count: Self.blockSize - used)
            Self.compress(&state, block.baseAddress!, isLast: true)
        }
        var digest = [UInt8]()
        digest.reserveCapacity(Self.maximumDigestLength)
        for word in [state.h0, state.h1, state.h2, state.h3, state.h4, state.h5, state.h6, state.h7] {
            for shift in stride(from: 0, to: 64, by: 8) { digest.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
        }
        wipe()
        if digestLength < Self.maximumDigestLength {
            let result = Array(digest[0..<digestLength])
            SecretBytes.zero(&digest)
            return result
        }
        return digest
    }

    /// The digest of `message`.
    public static func hash<Bytes: Sequence>(_ message: Bytes, digestLength: Int = maximumDigestLength) throws -> [UInt8]
    where Bytes.Element == UInt8 {
        var hasher = try BLAKE2b(digestLength: digestLength)
        hasher.update(message)
        return hasher.finalize()
    }

    /// The digest of the file at `path` (`-`: standard input), read in chunks: constant memory
    /// whatever the size.
    public static func hash(
        path: String, digestLength: Int = maximumDigestLength, progress: FileDigester.Progress? = nil
    ) throws -> [UInt8] {
        try hash(input: FileInput(path: path), digestLength: digestLength, progress: progress)
    }

    /// The digest of everything `input` yields.
    public static func hash(
        input: FileInput, digestLength: Int = maximumDigestLength, progress: FileDigester.Progress? = nil
    ) throws -> [UInt8] {
        var hasher = try BLAKE2b(digestLength: digestLength)
        try input.stream(progress: progress) { hasher.update(bufferPointer: $0) }
        return hasher.finalize()
    }

    private struct State: Sendable {
        var h0, h1, h2, h3, h4, h5, h6, h7: UInt64
        /// Bytes compressed so far (RFC 7693's t, a 128-bit counter).
        var countLow: UInt64 = 0
        var countHigh: UInt64 = 0

        mutating func count(_ bytes: Int) {
            let (sum, overflow) = countLow.addingReportingOverflow(UInt64(bytes))
            countLow = sum
            if overflow { countHigh &+= 1 }
        }
    }

    private mutating func wipe() {
        state = State(h0: 0, h1: 0, h2: 0, h3: 0, h4: 0, h5: 0, h6: 0, h7: 0)
        SecretBytes.zero(&buffer)
        buffered = 0
    }

    /// RFC 7693 §3.2: F, on the 128-byte block at `block`, with the message schedule (σ)
    /// unrolled so that the message words stay in registers.
    private static func compress(_ state: inout State, _ block: UnsafeRawPointer, isLast: Bool) {
        @inline(__always) func word(_ index: Int) -> UInt64 {
            UInt64(littleEndian: block.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self))
        }
        let m0 = word(0), m1 = word(1), m2 = word(2), m3 = word(3), m4 = word(4), m5 = word(5), m6 = word(6), m7 = word(7)
        let m8 = word(8), m9 = word(9), m10 = word(10), m11 = word(11), m12 = word(12), m13 = word(13), m14 = word(14), m15 = word(15)
        var v0 = state.h0, v1 = state.h1, v2 = state.h2, v3 = state.h3
        var v4 = state.h4, v5 = state.h5, v6 = state.h6, v7 = state.h7
        var v8: UInt64 = 0x6a09_e667_f3bc_c908, v9: UInt64 = 0xbb67_ae85_84ca_a73b
        var v10: UInt64 = 0x3c6e_f372_fe94_f82b, v11: UInt64 = 0xa54f_f53a_5f1d_36f1
        var v12: UInt64 = 0x510e_527f_ade6_82d1 ^ state.countLow, v13: UInt64 = 0x9b05_688c_2b3e_6c1f ^ state.countHigh
        var v14: UInt64 = isLast ? ~0x1f83_d9ab_fb41_bd6b : 0x1f83_d9ab_fb41_bd6b, v15: UInt64 = 0x5be0_cd19_137e_2179
        // Round 0: σ[0]
        mix(&v0, &v4, &v8, &v12, m0, m1)
        mix(&v1, &v5, &v9, &v13, m2, m3)
        mix(&v2, &v6, &v10, &v14, m4, m5)
        mix(&v3, &v7, &v11, &v15, m6, m7)
        mix(&v0, &v5, &v10, &v15, m8, m9)
        mix(&v1, &v6, &v11, &v12, m10, m11)
        mix(&v2, &v7, &v8, &v13, m12, m13)
        mix(&v3, &v4, &v9, &v14, m14, m15)
        // Round 1: σ[1]
        mix(&v0, &v4, &v8, &v12, m14, m10)
        mix(&v1, &v5, &v9, &v13, m4, m8)
        mix(&v2, &v6, &v10, &v14, m9, m15)
        mix(&v3, &v7, &v11, &v15, m13, m6)
        mix(&v0, &v5, &v10, &v15, m1, m12)
        mix(&v1, &v6, &v11, &v12, m0, m2)
        mix(&v2, &v7, &v8, &v13, m11, m7)
        mix(&v3, &v4, &v9, &v14, m5, m3)
        // Round 2: σ[2]
        mix(&v0, &v4, &v8, &v12, m11, m8)
        mix(&v1, &v5, &v9, &v13, m12, m0)
        mix(&v2, &v6, &v10, &v14, m5, m2)
        mix(&v3, &v7, &v11, &v15, m15, m13)
        mix(&v0, &v5, &v10, &v15, m10, m14)
        mix(&v1, &v6, &v11, &v12, m3, m6)
        mix(&v2, &v7, &v8, &v13, m7, m1)
        mix(&v3, &v4, &v9, &v14, m9, m4)
        // Round 3: σ[3]
        mix(&v0, &v4, &v8, &v12, m7, m9)
        mix(&v1, &v5, &v9, &v13, m3, m1)
        mix(&v2, &v6, &v10, &v14, m13, m12)
        mix(&v3, &v7, &v11, &v15, m11, m14)
        mix(&v0, &v5, &v10, &v15, m2, m6)
        mix(&v1, &v6, &v11, &v12, m5, m10)
        mix(&v2, &v7, &v8, &v13, m4, m0)
        mix(&v3, &v4, &v9, &v14, m15, m8)
        // Round 4: σ[4]
        mix(&v0, &v4, &v8, &v12, m9, m0)
        mix(&v1, &v5, &v9, &v13, m5, m7)
        mix(&v2, &v6, &v10, &v14, m2, m4)
        mix(&v3, &v7, &v11, &v15, m10, m15)
        mix(&v0, &v5, &v10, &v15, m14, m1)
        mix(&v1, &v6, &v11, &v12, m11, m12)
        mix(&v2, &v7, &v8, &v13, m6, m8)
        mix(&v3, &v4, &v9, &v14, m3, m13)
        // Round 5: σ[5]
        mix(&v0, &v4, &v8, &v12, m2, m12)
        mix(&v1, &v5, &v9, &v13, m6, m10)
        mix(&v2, &v6, &v10, &v14, m0, m11)
        mix(&v3, &v7, &v11, &v15, m8, m3)
        mix(&v0, &v5, &v10, &v15, m4, m13)
        mix(&v1, &v6, &v11, &v12, m7, m5)
        mix(&v2, &v7, &v8, &v13, m15, m14)
        mix(&v3, &v4, &v9, &v14, m1, m9)
        // Round 6: σ[6]
        mix(&v0, &v4, &v8, &v12, m12, m5)
        mix(&v1, &v5, &v9, &v13, m1, m15)
        mix(&v2, &v6, &v10, &v14, m14, m13)
        mix(&v3, &v7, &v11, &v15, m4, m10)
        mix(&v0, &v5, &v10, &v15, m0, m7)
        mix(&v1, &v6, &v11, &v12, m6, m3)
        mix(&v2, &v7, &v8, &v13, m9, m2)
        mix(&v3, &v4, &v9, &v14, m8, m11)
        // Round 7: σ[7]
        mix(&v0, &v4, &v8, &v12, m13, m11)
        mix(&v1, &v5, &v9, &v13, m7, m14)
        mix(&v2, &v6, &v10, &v14, m12, m1)
        mix(&v3, &v7, &v11, &v15, m3, m9)
        mix(&v0, &v5, &v10, &v15, m5, m0)
        mix(&v1, &v6, &v11, &v12, m15, m4)
        mix(&v2, &v7, &v8, &v13, m8, m6)
        mix(&v3, &v4, &v9, &v14, m2, m10)
        // Round 8: σ[8]
        mix(&v0, &v4, &v8, &v12, m6, m15)
        mix(&v1, &v5, &v9, &v13, m14, m9)
        mix(&v2, &v6, &v10, &v14, m11, m3)
        mix(&v3, &v7, &v11, &v15, m0, m8)
        mix(&v0, &v5, &v10, &v15, m12, m2)
        mix(&v1, &v6, &v11, &v12, m13, m7)
        mix(&v2, &v7, &v8, &v13, m1, m4)
        mix(&v3, &v4, &v9, &v14, m10, m5)
        // Round 9: σ[9]
        mix(&v0, &v4, &v8, &v12, m10, m2)
        mix(&v1, &v5, &v9, &v13, m8, m4)
        mix(&v2, &v6, &v10, &v14, m7, m6)
        mix(&v3, &v7, &v11, &v15, m1, m5)
        mix(&v0, &v5, &v10, &v15, m15, m11)
        mix(&v1, &v6, &v11, &v12, m9, m14)
        mix(&v2, &v7, &v8, &v13, m3, m12)
        mix(&v3, &v4, &v9, &v14, m13, m0)
        // Round 10: σ[0]
        mix(&v0, &v4, &v8, &v12, m0, m1)
        mix(&v1, &v5, &v9, &v13, m2, m3)
        mix(&v2, &v6, &v10, &v14, m4, m5)
        mix(&v3, &v7, &v11, &v15, m6, m7)
        mix(&v0, &v5, &v10, &v15, m8, m9)
        mix(&v1, &v6, &v11, &v12, m10, m11)
        mix(&v2, &v7, &v8, &v13, m12, m13)
        mix(&v3, &v4, &v9, &v14, m14, m15)
        // Round 11: σ[1]
        mix(&v0, &v4, &v8, &v12, m14, m10)
        mix(&v1, &v5, &v9, &v13, m4, m8)
        mix(&v2, &v6, &v10, &v14, m9, m15)
        mix(&v3, &v7, &v11, &v15, m13, m6)
        mix(&v0, &v5, &v10, &v15, m1, m12)
        mix(&v1, &v6, &v11, &v12, m0, m2)
        mix(&v2, &v7, &v8, &v13, m11, m7)
        mix(&v3, &v4, &v9, &v14, m5, m3)
        state.h0 ^= v0 ^ v8; state.h1 ^= v1 ^ v9; state.h2 ^= v2 ^ v10; state.h3 ^= v3 ^ v11
        state.h4 ^= v4 ^ v12; state.h5 ^= v5 ^ v13; state.h6 ^= v6 ^ v14; state.h7 ^= v7 ^ v15
    }

    /// RFC 7693 §3.1: G, with rotations 32, 24, 16 and 63.
    @inline(__always)
    private static func mix(_ a: inout UInt64, _ b: inout UInt64, _ c: inout UInt64, _ d: inout UInt64, _ x: UInt64, _ y: UInt64) {
        a = a &+ b &+ x
        d = rotateRight(d ^ a, 32)
        c = c &+ d
        b = rotateRight(b ^ c, 24)
        a = a &+ b &+ y
        d = rotateRight(d ^ a, 16)
        c = c &+ d
        b = rotateRight(b ^ c, 63)
    }

    @inline(__always)
    private static func rotateRight(_ value: UInt64, _ count: UInt64) -> UInt64 {
        (value &>> count) | (value &<< (64 &- count))
    }
}
