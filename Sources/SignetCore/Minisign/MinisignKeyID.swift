import Crypto

/// The 8 random bytes that name a minisign key pair: stored in the public key, the secret key
/// and every signature, so that a signature made by another key is recognised before any
/// cryptography runs.
///
/// minisign prints it as the bytes read as a little-endian 64-bit number, in upper-case hex
/// without leading zeros (`minisign public key 3C2F983C4E58F09E`); ``description`` does the same.
public struct MinisignKeyID: Sendable, Hashable, CustomStringConvertible {
    /// The 8 bytes, in file order.
    public let bytes: [UInt8]

    /// The length of a key id, in bytes.
    public static let byteCount = 8

    /// Wraps 8 bytes; nil for any other length.
    public init?(bytes: [UInt8]) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = bytes
    }

    /// A new random key id.
    public static func random() -> MinisignKeyID {
        MinisignKeyID(checked: RandomBytes.make(byteCount))
    }

    /// The key id Signet gives an Ed25519 key that has none of its own (a key on a token, which
    /// minisign never made): the first 8 bytes of SHA-256 over the raw 32-byte public key, so
    /// that the signatures and the public key file written for it agree without storing
    /// anything.
    public static func derived(fromEd25519 rawKey: [UInt8]) -> MinisignKeyID {
        MinisignKeyID(checked: Array(SHA256.hash(data: rawKey).prefix(byteCount)))
    }

    init(checked bytes: [UInt8]) {
        precondition(bytes.count == Self.byteCount)
        self.bytes = bytes
    }

    /// The id as minisign prints it (`%" PRIX64`): the little-endian value in upper-case hex
    /// without leading zeros, so `0F31…` is written `F31…` — as in minisign's own key files.
    public var description: String {
        let digits = Hex.encode(bytes.reversed()).uppercased().drop { $0 == "0" }
        return digits.isEmpty ? "0" : String(digits)
    }
}
