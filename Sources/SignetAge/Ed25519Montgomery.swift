import BigInt
import Crypto
import Foundation
import SignetCore

/// The birational map from Ed25519 keys to X25519 keys that age's `ssh-ed25519` recipients use
/// (RFC 7748 §4.1: u = (1 + y) / (1 − y)), with the checks the reference implementation makes.
///
/// swift-crypto does not expose field arithmetic, so the public-key map is computed with
/// arbitrary-precision integers (attaswift/BigInt) modulo p = 2^255 − 19. Only public keys go
/// through it, so its running time may depend on its input. The private-key map needs no
/// arithmetic: the X25519 scalar is the first half of SHA-512 of the Ed25519 seed (RFC 8032
/// §5.1.5), which X25519 clamps itself.
enum Ed25519Montgomery {
    /// The field prime, 2^255 − 19.
    static let p: BigUInt = (BigUInt(1) << 255) - 19
    /// Edwards25519's d = −121665 / 121666 mod p.
    static let d: BigUInt = ((p - 121_665) * BigUInt(121_666).power(p - 2, modulus: p)) % p

    /// The X25519 public key (Montgomery u, 32 bytes little-endian) of the Ed25519 public key
    /// `edwards`, or nil when `edwards` is not the encoding of a point on the curve.
    ///
    /// As filippo.io/edwards25519 (which age uses): y is read modulo p (non-canonical encodings
    /// of valid points are accepted), the point is valid when (y² − 1) / (d·y² + 1) is a square,
    /// and the identity (y = 1) maps to u = 0, which X25519 then refuses as low order. The sign
    /// of x does not matter: u depends on y alone.
    static func publicKey(edwards: [UInt8]) -> [UInt8]? {
        guard edwards.count == 32 else { return nil }
        var bigEndian = Array(edwards.reversed())
        bigEndian[0] &= 0x7F
        let y = BigUInt(Data(bigEndian)) % p
        let ySquared = (y * y) % p
        let numerator = (ySquared + p - 1) % p
        let denominator = (d * ySquared + 1) % p
        let ratio = (numerator * denominator.power(p - 2, modulus: p)) % p
        guard ratio.isZero || ratio.power((p - 1) / 2, modulus: p) == 1 else { return nil }
        // 1 − y is zero only for the identity; then the inverse (a power p − 2) is zero as well.
        let inverse = ((1 + p - y) % p).power(p - 2, modulus: p)
        let u = ((1 + y) * inverse) % p
        return littleEndian(u)
    }

    /// The X25519 private key of the Ed25519 private key `seed`: SHA-512(seed)[0..<32].
    static func privateKey(seed: [UInt8]) throws -> Curve25519.KeyAgreement.PrivateKey {
        var digest = Array(SHA512.hash(data: seed))
        defer { SecretBytes.zero(&digest) }
        return try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: digest[0..<32])
    }

    /// `value` (< p) as 32 bytes, little-endian.
    private static func littleEndian(_ value: BigUInt) -> [UInt8] {
        let bigEndian = Array(value.serialize())
        return Array(bigEndian.reversed()) + [UInt8](repeating: 0, count: 32 - bigEndian.count)
    }
}
