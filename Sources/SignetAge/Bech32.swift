import SignetCore

/// Bech32 (BIP 173, not Bech32m) as age-encryption.org/v1 uses it for keys: `age1…` recipients
/// and `AGE-SECRET-KEY-1…` identities.
///
/// Two departures from BIP 173, both age's: there is no limit on the length of the string
/// (post-quantum recipients run to nearly 2,000 characters), and the data part is always
/// 8-bit bytes packed into 5-bit groups with zero padding (refused when not zero, or when longer
/// than four bits). As in BIP 173, a string is all lowercase or all uppercase, never mixed, and
/// its checksum is computed over the lowercase form.
///
/// Decoding zeroes the intermediate buffers it makes, because the data of an identity is a
/// secret key; the caller owns zeroing the ``Decoded/data`` it receives.
public enum Bech32 {
    /// A decoded Bech32 string.
    public struct Decoded: Sendable, Equatable {
        /// The human-readable part, before the last `1`, in the case it was written in
        /// (`age`, `AGE-SECRET-KEY-`).
        public var humanReadablePart: String
        /// The data part as bytes, without the checksum.
        public var data: [UInt8]

        /// A decoded string of its parts.
        public init(humanReadablePart: String, data: [UInt8]) {
            self.humanReadablePart = humanReadablePart
            self.data = data
        }
    }

    /// The 32 data characters; a character's index is its 5-bit value.
    static let alphabet: [UInt8] = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l".utf8)

    /// The value of each ASCII lowercase character, or -1 when it is not in ``alphabet``.
    private static let valueTable: [Int8] = {
        var table = [Int8](repeating: -1, count: 128)
        for (index, character) in Bech32.alphabet.enumerated() { table[Int(character)] = Int8(index) }
        return table
    }()

    private static let generator: [UInt32] = [0x3b6a_57b2, 0x2650_8e6d, 0x1ea1_19fa, 0x3d42_33dd, 0x2a14_62b3]

    /// Encodes `data` under `humanReadablePart`, in the case of the human-readable part:
    /// uppercase when it has uppercase letters (`AGE-SECRET-KEY-` gives `AGE-SECRET-KEY-1…`, as
    /// age writes identities), lowercase otherwise (`age` gives `age1…`).
    ///
    /// - Precondition: `humanReadablePart` is not empty, is printable ASCII (33–126) and is not
    ///   of mixed case. It is always a constant of the caller's, never input.
    public static func encode(humanReadablePart: String, data: some Collection<UInt8>) -> String {
        let prefix = Array(humanReadablePart.utf8)
        let hasUpper = prefix.contains { (65...90).contains($0) }
        let hasLower = prefix.contains { (97...122).contains($0) }
        precondition(!prefix.isEmpty && prefix.allSatisfy { (33...126).contains($0) } && !(hasUpper && hasLower),
                     "Bech32: invalid human-readable part")
        let lowerPrefix = prefix.map(lowercased)
        var words = regroup(data, from: 8, to: 5, pad: true) ?? []
        defer { SecretBytes.zero(&words) }
        var values = expand(lowerPrefix) + words + [0, 0, 0, 0, 0, 0]
        defer { SecretBytes.zero(&values) }
        let checksum = polymod(values) ^ 1

        var output = lowerPrefix
        output.reserveCapacity(prefix.count + 1 + words.count + 6)
        output.append(UInt8(ascii: "1"))
        for word in words { output.append(alphabet[Int(word)]) }
        for index in 0..<6 { output.append(alphabet[Int((checksum >> UInt32(5 * (5 - index))) & 31)]) }
        defer { SecretBytes.zero(&output) }
        if hasUpper {
            for index in output.indices { output[index] = uppercased(output[index]) }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes a Bech32 string: verifies its characters, case and checksum, and unpacks its data
    /// into bytes.
    ///
    /// - Parameters:
    ///   - string: The text, such as `age1…` or `AGE-SECRET-KEY-1…`.
    ///   - source: What the text is, for messages (it is never quoted: it may be a secret key).
    /// - Throws: ``AgeError/invalidKey(source:detail:)`` naming the problem.
    public static func decode(_ string: String, source: String) throws -> Decoded {
        try decode(utf8: string.utf8, source: source)
    }

    /// ``decode(_:source:)`` on the UTF-8 bytes of the text (a line of a key file), so that a
    /// secret key need never become a `String`.
    static func decode(utf8 text: some Collection<UInt8>, source: String) throws -> Decoded {
        func failure(_ detail: String) -> AgeError { .invalidKey(source: source, detail: "not valid Bech32: \(detail)") }

        var bytes = Array(text)
        defer { SecretBytes.zero(&bytes) }
        var hasUpper = false
        var hasLower = false
        for byte in bytes {
            guard (33...126).contains(byte) else {
                throw failure("a character outside printable ASCII (a space, a control character or non-ASCII text)")
            }
            if (65...90).contains(byte) { hasUpper = true } else if (97...122).contains(byte) { hasLower = true }
        }
        guard !(hasUpper && hasLower) else { throw failure("a mix of uppercase and lowercase letters") }
        guard let separator = bytes.lastIndex(of: UInt8(ascii: "1")) else { throw failure("no separator \"1\"") }
        guard separator > 0 else { throw failure("an empty human-readable part before the separator \"1\"") }
        guard bytes.count - separator - 1 >= 6 else { throw failure("shorter than its 6-character checksum") }

        let prefix = Array(bytes[..<separator])
        var values = expand(prefix.map(lowercased))
        defer { SecretBytes.zero(&values) }
        values.reserveCapacity(values.count + bytes.count - separator - 1)
        for byte in bytes[(separator + 1)...] {
            let digit = value(of: lowercased(byte))
            guard digit >= 0 else { throw failure("a character that is not in the Bech32 alphabet after the separator") }
            values.append(UInt8(digit))
        }
        guard polymod(values) == 1 else { throw failure("the checksum does not match (a character is mistyped or missing)") }

        let wordsStart = values.count - (bytes.count - separator - 1)
        var words = Array(values[wordsStart..<(values.count - 6)])
        defer { SecretBytes.zero(&words) }
        guard let data = regroup(words, from: 5, to: 8, pad: false) else {
            throw failure("the data does not end in zero padding of at most four bits")
        }
        return Decoded(humanReadablePart: String(decoding: prefix, as: UTF8.self), data: data)
    }

    /// The 5-bit value of a lowercase character, or -1.
    private static func value(of character: UInt8) -> Int8 {
        character < 128 ? valueTable[Int(character)] : -1
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (65...90).contains(byte) ? byte + 32 : byte
    }

    private static func uppercased(_ byte: UInt8) -> UInt8 {
        (97...122).contains(byte) ? byte - 32 : byte
    }

    /// BIP 173's expansion of the (lowercase) human-readable part for the checksum.
    private static func expand(_ prefix: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(prefix.count * 2 + 1)
        for byte in prefix { result.append(byte >> 5) }
        result.append(0)
        for byte in prefix { result.append(byte & 31) }
        return result
    }

    /// BIP 173's checksum function over 5-bit values.
    private static func polymod(_ values: [UInt8]) -> UInt32 {
        var checksum: UInt32 = 1
        for value in values {
            let top = checksum >> 25
            checksum = ((checksum & 0x1ff_ffff) << 5) ^ UInt32(value)
            for index in 0..<5 where (top >> UInt32(index)) & 1 == 1 {
                checksum ^= generator[index]
            }
        }
        return checksum
    }

    /// Regroups `data` from `from`-bit to `to`-bit values (BIP 173's `convertbits`). Without
    /// `pad`, the leftover must be fewer than `from` bits and all zero, else nil.
    static func regroup(_ data: some Collection<UInt8>, from: Int, to: Int, pad: Bool) -> [UInt8]? {
        var result: [UInt8] = []
        result.reserveCapacity((data.count * from + to - 1) / to)
        var accumulator: UInt32 = 0
        var bits = 0
        let mask = UInt32((1 << to) - 1)
        for value in data {
            guard Int(value) >> from == 0 else {
                SecretBytes.zero(&result)
                return nil
            }
            accumulator = (accumulator << UInt32(from)) | UInt32(value)
            bits += from
            while bits >= to {
                bits -= to
                result.append(UInt8((accumulator >> UInt32(bits)) & mask))
            }
            // Only the low `bits` bits are still needed; keeping them alone stops overflow.
            accumulator &= (1 << UInt32(bits)) - 1
        }
        if pad {
            if bits > 0 { result.append(UInt8((accumulator << UInt32(to - bits)) & mask)) }
        } else if bits >= from || accumulator != 0 {
            SecretBytes.zero(&result)
            return nil
        }
        return result
    }
}
