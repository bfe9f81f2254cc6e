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
    /// Plain index loops: the generic `reversed()`/`dropLast` chains this replaced cost more
    /// than the decoding on the HTTP verification path (runtime metadata lookups).
    private static func decodeCanonical(_ characters: [UInt8], plus: UInt8, slash: UInt8) -> [UInt8]? {
        guard !characters.isEmpty, characters.count % 4 == 0 else { return nil }
        var padding = 0
        while padding < 3, characters[characters.count - 1 - padding] == UInt8(ascii: "=") { padding += 1 }
        guard padding <= 2 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(characters.count / 4 * 3)
        var accumulator: UInt32 = 0
        var bits = 0
        for index in 0..<(characters.count - padding) {
            let character = characters[index]
            let value: UInt8
            switch character {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = character - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = character - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = character - UInt8(ascii: "0") + 52
            case plus: value = 62
            case slash: value = 63
            default: return nil  // includes "=" anywhere but the end
            }
            accumulator = (accumulator << 6) | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        // Leftover bits must be zero (canonical encoding).
        guard accumulator == 0 else { return nil }
        return output
    }
}
