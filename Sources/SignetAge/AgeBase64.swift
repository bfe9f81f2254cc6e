import SignetCore

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
    /// Encodes `bytes` without padding (the header's form).
    static func encodeUnpadded<Bytes: Collection>(_ bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        Base64.appendEncoded(bytes, padded: false, to: &output)
        return output
    }

    /// Encodes `bytes` with padding (the armor's form).
    static func encodePadded<Bytes: Collection>(_ bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        Base64.appendEncoded(bytes, padded: true, to: &output)
        return output
    }

    /// Appends the encoding of `bytes` to `output`.
    static func append<Bytes: Collection>(_ bytes: Bytes, padded: Bool, to output: inout [UInt8]) where Bytes.Element == UInt8 {
        Base64.appendEncoded(bytes, padded: padded, to: &output)
    }

    /// Decodes canonical unpadded base64; the empty string decodes to no bytes.
    static func decodeUnpadded<Characters: Collection>(_ characters: Characters) -> [UInt8]? where Characters.Element == UInt8 {
        Base64.decodeCanonicalUnpadded(characters)
    }

    /// Decodes canonical padded base64 (at least one group).
    static func decodePadded(_ characters: [UInt8]) -> [UInt8]? {
        Base64.decodeCanonicalPadded(characters)
    }
}
