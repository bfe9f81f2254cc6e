import SwiftASN1

/// The object identifiers of the key and encryption structures we read and write.
enum OID {
    static let rsaEncryption: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 1, 1]
    static let rsassaPSS: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 1, 10]
    static let ecPublicKey: ASN1ObjectIdentifier = [1, 2, 840, 10_045, 2, 1]
    static let prime256v1: ASN1ObjectIdentifier = [1, 2, 840, 10_045, 3, 1, 7]
    static let secp384r1: ASN1ObjectIdentifier = [1, 3, 132, 0, 34]
    static let ed25519: ASN1ObjectIdentifier = [1, 3, 101, 112]

    static let pbes2: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 5, 13]
    static let pbkdf2: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 5, 12]
    static let hmacWithSHA1: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 2, 7]
    static let hmacWithSHA256: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 2, 9]
    static let hmacWithSHA384: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 2, 10]
    static let hmacWithSHA512: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 2, 11]
    static let aes128CBC: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 1, 2]
    static let aes192CBC: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 1, 22]
    static let aes256CBC: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 1, 42]

    /// Names for identifiers we recognise but do not support, so errors can name them.
    static let knownNames: [ASN1ObjectIdentifier: String] = [
        [1, 3, 132, 0, 35]: "the curve secp521r1 (P-521)",
        [1, 3, 132, 0, 10]: "the curve secp256k1",
        [1, 3, 101, 110]: "X25519 (a key-agreement key, not a signing key)",
        [1, 3, 101, 111]: "X448",
        [1, 3, 101, 113]: "Ed448",
        [1, 2, 840, 10_040, 4, 1]: "DSA",
        [1, 2, 840, 113_549, 1, 1, 10]: "RSASSA-PSS-restricted RSA",
        [1, 3, 6, 1, 4, 1, 11_591, 4, 11]: "the scrypt key derivation in PBES2",
        [1, 2, 840, 113_549, 1, 5, 3]: "PBES1 (pbeWithMD5AndDES-CBC)",
        [1, 2, 840, 113_549, 1, 5, 10]: "PBES1 (pbeWithSHA1AndDES-CBC)",
        [1, 2, 840, 113_549, 1, 12, 1, 3]: "PKCS#12 PBE with 3DES",
        [1, 2, 840, 113_549, 3, 7]: "DES-EDE3-CBC",
    ]

    static func describe(_ oid: ASN1ObjectIdentifier) -> String {
        knownNames[oid] ?? "the algorithm with OID \(oid)"
    }
}
