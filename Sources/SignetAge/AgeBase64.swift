/// The two base64 forms age uses (RFC 4648 §4, standard alphabet), both strict:
///
/// - **unpadded**, in the header (stanza arguments and bodies, the MAC): no `=`, a length that
///   is not 1 modulo 4, and zero unused bits in the last character;
/// - **padded**, in the armor: a length that is a multiple of 4, `=` only at the end and only as
///   much as the length needs, and zero unused bits.
///
/// Either way one byte string has exactly one encoding, so an encoded file is not malleable.
/// Stanza arguments that carry base64 (an X25519 share, an scrypt salt) decode with
/// ``decodeUnpadded(_:)`` too.
enum AgeBase64 {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// The value of each ASCII character in the alphabet, 0xFF for any other byte.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        return table
    }()

    /// Encodes `bytes` without padding (the header's form).
    static func encodeUnpadded<Bytes: Collection>(_ bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        append(bytes, padded: false, to: &output)
        return output
    }

    /// Encodes `bytes` with padding (the armor's form).
    static func encodePadded<Bytes: Collection>(_ bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        append(bytes, padded: true, to: &output)
        return output
    }

    /// Appends the encoding of `bytes` to `output`.
    static func append<Bytes: Collection>(_ bytes: Bytes, padded: Bool, to output: inout [UInt8]) where Bytes.Element == UInt8 {
        var iterator = bytes.makeIterator()
        while let first = iterator.next() {
            let second = iterator.next()
            let third = second == nil ? nil : iterator.next()
            let group = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
            output.append(alphabet[Int(group >> 18 & 0x3F)])
            output.append(alphabet[Int(group >> 12 & 0x3F)])
            if second != nil {
                output.append(alphabet[Int(group >> 6 & 0x3F)])
            } else if padded {
                output.append(UInt8(ascii: "="))
            }
            if third != nil {
                output.append(alphabet[Int(group & 0x3F)])
            } else if padded {
                output.append(UInt8(ascii: "="))
            }
        }
    }

    /// Decodes canonical unpadded base64; the empty string decodes to no bytes. Nil for
    /// anything else: `=`, a character outside the alphabet (white space included), a length of
    /// 1 modulo 4, or unused bits that are not zero.
    static func decodeUnpadded<Characters: Collection>(_ characters: Characters) -> [UInt8]? where Characters.Element == UInt8 {
        guard characters.count % 4 != 1 else { return nil }
        return decodeGroups(characters, count: characters.count)
    }

    /// Decodes canonical padded base64 (at least one group). Nil for anything else: a length
    /// that is not a multiple of 4, padding anywhere but the end or more than the length needs,
    /// a character outside the alphabet, or unused bits that are not zero.
    static func decodePadded(_ characters: [UInt8]) -> [UInt8]? {
        guard !characters.isEmpty, characters.count % 4 == 0 else { return nil }
        var padding = 0
        while padding < 2, characters[characters.count - 1 - padding] == UInt8(ascii: "=") { padding += 1 }
        return decodeGroups(characters, count: characters.count - padding)
    }

    /// Decodes the first `count` characters, which must all be in the alphabet, with zero
    /// unused bits at the end.
    private static func decodeGroups<Characters: Collection>(_ characters: Characters, count: Int) -> [UInt8]? where Characters.Element == UInt8 {
        var output: [UInt8] = []
        output.reserveCapacity(count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        var consumed = 0
        for character in characters {
            guard consumed < count else { break }
            consumed += 1
            let value = values[Int(character)]
            guard value != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        // What is left over must be zero bits: the canonical encoding (RFC 4648 §3.5).
        guard accumulator == 0 else { return nil }
        return output
    }
}
