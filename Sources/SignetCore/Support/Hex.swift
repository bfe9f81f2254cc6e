import Foundation

/// Lower-case hexadecimal encoding and strict decoding.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Encodes bytes as lower-case hex.
    public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var out = [UInt8]()
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Encodes an array as lower-case hex (the generic version runs unspecialised from other
    /// modules; manifests of 10,000 files call this 10,000 times).
    public static func encode(_ bytes: [UInt8]) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { buffer in
            for (index, byte) in bytes.enumerated() {
                buffer[2 * index] = digits[Int(byte >> 4)]
                buffer[2 * index + 1] = digits[Int(byte & 0x0f)]
            }
            return bytes.count * 2
        }
    }

    /// Decodes hex (either case). Returns nil for odd lengths or non-hex characters.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = digitValue(utf8[index]), let low = digitValue(utf8[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    /// Decodes lower-case hex only, as canonical formats write it (manifests, state files).
    /// Returns nil for odd lengths, upper case or non-hex characters. Concrete, for hot paths:
    /// the generic ``decode(_:)`` runs unspecialised across modules.
    public static func decodeLowercase(_ text: String) -> [UInt8]? {
        let utf8 = text.utf8
        guard utf8.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count / 2)
        var high: UInt8?
        for byte in utf8 {
            let value: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte &- UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = byte &- UInt8(ascii: "a") &+ 10
            default: return nil
            }
            if let first = high {
                out.append(first << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return out
    }

    /// The value of one hex digit (either case), or nil.
    public static func digitValue(_ char: UInt8) -> UInt8? {
        switch char {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return char - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return char - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return char - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

/// Base64 helpers: standard and URL-safe (RFC 4648 §5, as JWK uses) alphabets, strict decoding.
///
/// Decoding is canonical: padding only at the end and only as much as the length needs, and
/// the unused bits of the last character must be zero, so one byte string has one encoding.
public enum Base64 {
    /// Decodes standard base64 with padding, ignoring ASCII white space (space, tab, CR, LF).
    /// Returns nil for anything else, including empty input.
    public static func decode(_ text: String) -> [UInt8]? {
        // The concrete overload: the generic one runs unspecialised across modules.
        decodeStandard(text.utf8)
    }

    /// Decodes standard base64 with padding, ignoring ASCII white space (space, tab, CR, LF).
    /// Returns nil for anything else, including empty input.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        decodeStandard(text.utf8)
    }

    private static func decodeStandard(_ utf8: some Collection<UInt8>) -> [UInt8]? {
        var compact: [UInt8] = []
        compact.reserveCapacity(utf8.count)
        for byte in utf8 where byte != 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D { compact.append(byte) }
        guard compact.count % 4 == 0 else { return nil }
        return decodeCanonical(compact, plus: UInt8(ascii: "+"), slash: UInt8(ascii: "/"))
    }

    /// Encodes bytes as standard base64 with padding, on one line.
    public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        Data(bytes).base64EncodedString()
    }

    /// Encodes as standard base64 without padding, as PHC strings use it.
    public static func encodeUnpadded<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        encode(bytes).replacingOccurrences(of: "=", with: "")
    }

    /// Decodes standard base64 written without padding (PHC strings). Returns nil for
    /// anything else, including padding, white space and empty input.
    public static func decodeUnpadded(_ text: some StringProtocol) -> [UInt8]? {
        var characters = Array(text.utf8)
        guard characters.count % 4 != 1, !characters.contains(UInt8(ascii: "=")) else { return nil }
        if characters.count % 4 != 0 {
            characters += Array(repeating: UInt8(ascii: "="), count: 4 - characters.count % 4)
        }
        return decodeCanonical(characters, plus: UInt8(ascii: "+"), slash: UInt8(ascii: "/"))
    }

    /// Encodes as base64url without padding (RFC 7515 §2).
    public static func encodeURL<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        encode(bytes).replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes base64url, with or without (correct) padding. Returns nil for anything else,
    /// including empty input.
    public static func decodeURL(_ text: String) -> [UInt8]? {
        var characters = Array(text.utf8)
        if characters.count % 4 != 0 {
            guard characters.count % 4 != 1, !characters.contains(UInt8(ascii: "=")) else { return nil }
            characters += Array(repeating: UInt8(ascii: "="), count: 4 - characters.count % 4)
        }
        return decodeCanonical(characters, plus: UInt8(ascii: "-"), slash: UInt8(ascii: "_"))
    }

    /// Decodes groups of four characters; `plus` and `slash` are the alphabet's last two.
    private static func decodeCanonical(_ characters: [UInt8], plus: UInt8, slash: UInt8) -> [UInt8]? {
        guard !characters.isEmpty, characters.count % 4 == 0 else { return nil }
        var padding = 0
        while padding < 3, characters[characters.count - 1 - padding] == UInt8(ascii: "=") { padding += 1 }
        guard padding <= 2 else { return nil }
        return decodeGroups(characters, count: characters.count - padding, table: plus == UInt8(ascii: "-") ? urlValues : standardValues)
    }

    // MARK: Byte-level forms (age's header and armor)

    /// Decodes canonical unpadded standard base64 given as bytes; the empty input decodes to
    /// no bytes. Nil for anything else: `=`, a byte outside the alphabet (white space
    /// included), a length of 1 modulo 4, or unused bits that are not zero.
    public static func decodeCanonicalUnpadded<Characters: Collection>(_ characters: Characters) -> [UInt8]? where Characters.Element == UInt8 {
        guard characters.count % 4 != 1 else { return nil }
        return decodeGroups(characters, count: characters.count, table: standardValues)
    }

    /// Decodes canonical padded standard base64 given as bytes (at least one group). Nil for
    /// anything else: a length that is not a multiple of 4, padding anywhere but the end or more
    /// than the length needs, a byte outside the alphabet, or unused bits that are not zero.
    public static func decodeCanonicalPadded(_ characters: [UInt8]) -> [UInt8]? {
        guard !characters.isEmpty, characters.count % 4 == 0 else { return nil }
        var padding = 0
        while padding < 2, characters[characters.count - 1 - padding] == UInt8(ascii: "=") { padding += 1 }
        return decodeGroups(characters, count: characters.count - padding, table: standardValues)
    }

    /// Appends the standard base64 encoding of `bytes` to `output`, with or without padding.
    public static func appendEncoded<Bytes: Collection>(_ bytes: Bytes, padded: Bool, to output: inout [UInt8]) where Bytes.Element == UInt8 {
        var iterator = bytes.makeIterator()
        while let first = iterator.next() {
            let second = iterator.next()
            let third = second == nil ? nil : iterator.next()
            let group = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
            output.append(standardAlphabet[Int(group >> 18 & 0x3F)])
            output.append(standardAlphabet[Int(group >> 12 & 0x3F)])
            if second != nil {
                output.append(standardAlphabet[Int(group >> 6 & 0x3F)])
            } else if padded {
                output.append(UInt8(ascii: "="))
            }
            if third != nil {
                output.append(standardAlphabet[Int(group & 0x3F)])
            } else if padded {
                output.append(UInt8(ascii: "="))
            }
        }
    }

    private static let standardAlphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// The value of each byte in the standard alphabet, 0xFF for any other byte.
    private static let standardValues: [UInt8] = valueTable(plus: UInt8(ascii: "+"), slash: UInt8(ascii: "/"))
    /// The same for base64url.
    private static let urlValues: [UInt8] = valueTable(plus: UInt8(ascii: "-"), slash: UInt8(ascii: "_"))

    private static func valueTable(plus: UInt8, slash: UInt8) -> [UInt8] {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in standardAlphabet.enumerated() { table[Int(character)] = UInt8(index) }
        table[Int(UInt8(ascii: "+"))] = 0xFF
        table[Int(UInt8(ascii: "/"))] = 0xFF
        table[Int(plus)] = 62
        table[Int(slash)] = 63
        return table
    }

    /// Decodes the first `count` characters, which must all be in the table's alphabet, with
    /// zero unused bits at the end (the canonical encoding, RFC 4648 §3.5). One loop for every
    /// form above.
    private static func decodeGroups<Characters: Collection>(
        _ characters: Characters, count: Int, table: [UInt8]
    ) -> [UInt8]? where Characters.Element == UInt8 {
        var output: [UInt8] = []
        output.reserveCapacity(count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        var consumed = 0
        for character in characters {
            guard consumed < count else { break }
            consumed += 1
            let value = table[Int(character)]
            guard value != 0xFF else { return nil }  // includes "=" anywhere but the end
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        guard accumulator == 0 else { return nil }
        return output
    }
}
