import Crypto
import SignetCore
import SwiftASN1

/// The password-based key derivation of RFC 7292 Appendix B, which PKCS#12 uses for its MAC
/// key (always) and for the keys and IVs of its legacy ciphers (3DES, RC2).
///
/// It is built on swift-crypto's hash functions exactly as B.2 describes it; `v` is the hash's
/// block size (64 bytes for SHA-1 and SHA-256, 128 for SHA-384 and SHA-512, as OpenSSL takes it)
/// and `u` its output size.
enum PKCS12KDF {
    /// What the derived bytes are for: the diversifier `ID` of B.3.
    enum Purpose: UInt8 {
        /// Key material for a cipher.
        case key = 1
        /// An initialisation vector.
        case iv = 2
        /// The key of the MAC over the authenticated safe.
        case mac = 3
    }

    /// The passphrase as B.1 formats passwords: its UTF-8 decoded and written as a BMPString
    /// (UTF-16 big-endian; characters beyond the BMP as surrogate pairs, as OpenSSL writes them)
    /// followed by two zero bytes, so an empty passphrase is `00 00`. Nil when the passphrase is
    /// not valid UTF-8. The caller owns zeroing the result.
    static func bmpPassword(_ passphrase: SecretBytes) -> [UInt8]? {
        passphrase.withUnsafeBytes { raw -> [UInt8]? in
            var encoded: [UInt8] = []
            encoded.reserveCapacity(raw.count * 2 + 2)
            // Transcoded without an intermediate String, so no copy of the secret is left behind.
            let failed = transcode(raw.makeIterator(), from: UTF8.self, to: UTF16.self, stoppingOnError: true) { unit in
                encoded.append(UInt8(truncatingIfNeeded: unit >> 8))
                encoded.append(UInt8(truncatingIfNeeded: unit))
            }
            if failed {
                SecretBytes.zero(&encoded)
                return nil
            }
            encoded.append(0)
            encoded.append(0)
            return encoded
        }
    }

    /// `byteCount` bytes derived from `password` (already a BMPString, see ``bmpPassword(_:)``)
    /// and `salt` with `iterations` rounds of `H`, for `purpose` (RFC 7292 B.2, steps 1 to 7).
    /// The caller validates `iterations` (at least 1) and owns zeroing the result.
    static func derive<H: HashFunction>(
        _ hash: H.Type, password: [UInt8], salt: [UInt8], purpose: Purpose, iterations: Int, byteCount: Int
    ) -> [UInt8] {
        let v = H.blockByteCount
        let u = H.Digest.byteCount
        // 1. D: the ID repeated to v bytes. 2-4. I = S || P, each repeated to a multiple of v.
        let diversifier = [UInt8](repeating: purpose.rawValue, count: v)
        var input = repeated(salt, toMultipleOf: v) + repeated(password, toMultipleOf: v)
        defer { SecretBytes.zero(&input) }
        var output: [UInt8] = []
        output.reserveCapacity(byteCount + u)
        // 5-6. c = ceil(n / u) blocks A_i = H^r(D || I), updating I after each but the last.
        while output.count < byteCount {
            var hasher = H()
            hasher.update(data: diversifier)
            hasher.update(data: input)
            var block = hasher.finalize().withUnsafeBytes { Array($0) }
            if iterations > 1 {
                for _ in 1..<iterations {
                    let next = H.hash(data: block).withUnsafeBytes { Array($0) }
                    SecretBytes.zero(&block)
                    block = next
                }
            }
            output += block
            if output.count < byteCount {
                // 6B-6C. B = A_i repeated to v bytes; every v-byte block I_j becomes
                // (I_j + B + 1) mod 2^(8v), big-endian.
                var b = (0..<v).map { block[$0 % u] }
                var start = 0
                while start < input.count {
                    var carry: UInt16 = 1
                    var index = start + v - 1
                    while index >= start {
                        let sum = UInt16(input[index]) + UInt16(b[index - start]) + carry
                        input[index] = UInt8(truncatingIfNeeded: sum)
                        carry = sum >> 8
                        index -= 1
                    }
                    start += v
                }
                SecretBytes.zero(&b)
            }
            SecretBytes.zero(&block)
        }
        // 7. The first n bytes of A_1 || … || A_c.
        let result = Array(output[0..<byteCount])
        SecretBytes.zero(&output)
        return result
    }

    /// `bytes` repeated (the last copy cut short) to the smallest multiple of `v` that holds
    /// them; empty stays empty (B.2 steps 2 and 3).
    private static func repeated(_ bytes: [UInt8], toMultipleOf v: Int) -> [UInt8] {
        guard !bytes.isEmpty else { return [] }
        let length = v * ((bytes.count + v - 1) / v)
        return (0..<length).map { bytes[$0 % bytes.count] }
    }
}

/// The hash of a PKCS#12 MAC (`MacData.mac.digestAlgorithm`): HMAC with it, keyed by the
/// ``PKCS12KDF`` MAC key derived with the same hash.
enum PKCS12MACAlgorithm: Sendable, CaseIterable {
    /// SHA-1: what OpenSSL 1.x and `-legacy` write.
    case sha1
    /// SHA-256: what OpenSSL 3 writes by default.
    case sha256
    /// SHA-384.
    case sha384
    /// SHA-512.
    case sha512

    /// The algorithm a `DigestInfo`'s OID names, or nil.
    init?(oid: ASN1ObjectIdentifier) {
        switch oid {
        case PKCS12OID.sha1: self = .sha1
        case PKCS12OID.sha256: self = .sha256
        case PKCS12OID.sha384: self = .sha384
        case PKCS12OID.sha512: self = .sha512
        default: return nil
        }
    }

    /// The OID written in `DigestInfo`.
    var oid: ASN1ObjectIdentifier {
        switch self {
        case .sha1: return PKCS12OID.sha1
        case .sha256: return PKCS12OID.sha256
        case .sha384: return PKCS12OID.sha384
        case .sha512: return PKCS12OID.sha512
        }
    }

    /// The length of the MAC in bytes.
    var byteCount: Int {
        switch self {
        case .sha1: return Insecure.SHA1.Digest.byteCount
        case .sha256: return SHA256.Digest.byteCount
        case .sha384: return SHA384.Digest.byteCount
        case .sha512: return SHA512.Digest.byteCount
        }
    }

    /// The name in messages.
    var name: String {
        switch self {
        case .sha1: return "SHA-1"
        case .sha256: return "SHA-256"
        case .sha384: return "SHA-384"
        case .sha512: return "SHA-512"
        }
    }

    /// The MAC over `data`: HMAC keyed with the B.2 derivation (ID 3) of `password` (a
    /// BMPString) and `salt` over `iterations` rounds.
    func authenticationCode(password: [UInt8], salt: [UInt8], iterations: Int, data: [UInt8]) -> [UInt8] {
        switch self {
        case .sha1: return Self.code(Insecure.SHA1.self, password: password, salt: salt, iterations: iterations, data: data)
        case .sha256: return Self.code(SHA256.self, password: password, salt: salt, iterations: iterations, data: data)
        case .sha384: return Self.code(SHA384.self, password: password, salt: salt, iterations: iterations, data: data)
        case .sha512: return Self.code(SHA512.self, password: password, salt: salt, iterations: iterations, data: data)
        }
    }

    private static func code<H: HashFunction>(
        _ hash: H.Type, password: [UInt8], salt: [UInt8], iterations: Int, data: [UInt8]
    ) -> [UInt8] {
        var key = PKCS12KDF.derive(H.self, password: password, salt: salt, purpose: .mac, iterations: iterations, byteCount: H.Digest.byteCount)
        defer { SecretBytes.zero(&key) }
        return Array(HMAC<H>.authenticationCode(for: data, using: SymmetricKey(data: key)))
    }
}
