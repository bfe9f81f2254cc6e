/// RFC 4648 base32 (`A–Z 2–7`), the alphabet of TOTP secrets in `otpauth://` URIs.
public enum Base32 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// The encoding of `bytes`, upper case, with `=` padding when `padded`.
    public static func encode(_ bytes: [UInt8], padded: Bool = false) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 4) / 5 * 8)
        var buffer: UInt64 = 0
        var bits = 0
        for byte in bytes {
            buffer = buffer << 8 | UInt64(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                output.append(alphabet[Int(buffer >> UInt64(bits) & 31)])
            }
        }
        if bits > 0 { output.append(alphabet[Int(buffer << UInt64(5 - bits) & 31)]) }
        if padded { while output.count % 8 != 0 { output.append(UInt8(ascii: "=")) } }
        return String(decoding: output, as: UTF8.self)
    }

    /// The bytes `text` encodes: either case, `=` padding optional (when present, it must be
    /// right), no other characters; the unused bits at the end must be zero (so every text has
    /// one meaning). Nil otherwise.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var characters = Array(text.utf8)
        if let first = characters.firstIndex(of: UInt8(ascii: "=")) {
            guard characters.count % 8 == 0, characters[first...].allSatisfy({ $0 == UInt8(ascii: "=") }) else { return nil }
            characters.removeSubrange(first...)
        }
        // Valid lengths mod 8: 0, 2, 4, 5, 7 (1, 3 and 6 leave a partial byte of nothing).
        guard ![1, 3, 6].contains(characters.count % 8) else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(characters.count * 5 / 8)
        var buffer: UInt64 = 0
        var bits = 0
        for character in characters {
            guard let value = Self.value(character) else { return nil }
            buffer = buffer << 5 | UInt64(value)
            bits += 5
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: buffer >> UInt64(bits)))
            }
        }
        guard buffer & ((1 << UInt64(bits)) - 1) == 0 else { return nil }
        return output
    }

    static func value(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return character - UInt8(ascii: "a")
        case UInt8(ascii: "2")...UInt8(ascii: "7"): return character - UInt8(ascii: "2") + 26
        default: return nil
        }
    }
}
