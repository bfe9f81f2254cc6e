import Crypto

/// A decrypted minisign secret key: an Ed25519 key pair and its ``MinisignKeyID``.
///
/// Read one with ``MinisignSecretKeyFile`` (which decrypts it); write one with
/// ``fileContents(passphrase:parameters:comment:)``.
public struct MinisignSecretKey: Sendable {
    /// The key pair's id.
    public let keyID: MinisignKeyID
    let key: Curve25519.Signing.PrivateKey

    init(keyID: MinisignKeyID, key: Curve25519.Signing.PrivateKey) {
        self.keyID = keyID
        self.key = key
    }

    /// A new key pair with a random key id.
    public static func generate() -> MinisignSecretKey {
        MinisignSecretKey(keyID: .random(), key: Curve25519.Signing.PrivateKey())
    }

    /// The matching public key.
    public var publicKey: MinisignPublicKey {
        // A 32-byte raw Ed25519 key always parses.
        try! MinisignPublicKey(keyID: keyID, rawKey: Array(key.publicKey.rawRepresentation))
    }

    /// A ``Signer`` over this key (Ed25519, signing whole messages), for ``MinisignFile/sign(path:signer:keyID:options:progress:)``.
    public var signer: SoftwareSigner {
        // An Ed25519 key always fits the ed25519 algorithm.
        try! SoftwareSigner(key: PrivateKey(.ed25519(key)), algorithm: .ed25519)
    }

    /// The secret key file, as minisign writes it: a comment line, then base64 of
    /// `"Ed"` ‖ kdf ‖ `"B2"` ‖ salt ‖ opslimit ‖ memlimit ‖ (key id ‖ Ed25519 secret key ‖
    /// BLAKE2b-256 checksum), the last 104 bytes XORed with scrypt's output when a
    /// passphrase is given (kdf `"Sc"`), in the clear otherwise (kdf two zero bytes, as
    /// `minisign -G -W` writes).
    ///
    /// - Parameters:
    ///   - passphrase: encrypts the key; nil leaves it unencrypted.
    ///   - parameters: the scrypt cost written into the file (minisign's by default).
    ///   - comment: the untrusted first line's text (default: what minisign writes).
    public func fileContents(
        passphrase: SecretBytes?, parameters: MinisignKDFParameters = .sensitive, comment: String? = nil
    ) throws -> [UInt8] {
        let commentText = comment ?? (passphrase == nil ? "minisign unencrypted secret key" : "minisign encrypted secret key")
        try MinisignText.checkComment(commentText, kind: "untrusted", maximumLength: MinisignText.maximumUntrustedLineLength - 19)
        var material = keyMaterial()
        defer { SecretBytes.zero(&material) }
        var header = MinisignPublicKey.algorithm
        var salt = [UInt8](repeating: 0, count: MinisignSecretKeyFile.saltLength)
        if let passphrase {
            salt = RandomBytes.make(MinisignSecretKeyFile.saltLength)
            let stream = try parameters.keyStream(passphrase: passphrase, salt: salt, length: material.count, source: "the new secret key")
            stream.withUnsafeBytes { stream in
                for index in material.indices { material[index] ^= stream[index] }
            }
            header += MinisignSecretKeyFile.scryptAlgorithm
        } else {
            header += MinisignSecretKeyFile.noKDF
        }
        header += MinisignSecretKeyFile.checksumAlgorithm + salt
        let limits = passphrase == nil ? (UInt64(0), UInt64(0)) : (parameters.opsLimit, parameters.memLimit)
        for value in [limits.0, limits.1] {
            for shift in stride(from: 0, to: 64, by: 8) { header.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
        }
        var decoded = header + material
        defer { SecretBytes.zero(&decoded) }
        var encoded = Array("untrusted comment: \(commentText)\n".utf8)
        encoded += Array(Base64.encode(decoded).utf8)
        encoded.append(UInt8(ascii: "\n"))
        return encoded
    }

    /// Key id ‖ Ed25519 secret key (seed ‖ public key) ‖ checksum: the 104 bytes minisign
    /// encrypts. The caller zeroes it.
    func keyMaterial() -> [UInt8] {
        var secret = keyID.bytes + Array(key.rawRepresentation) + Array(key.publicKey.rawRepresentation)
        var checksum = Self.checksum(keyIDAndSecret: secret)
        defer { SecretBytes.zero(&checksum) }
        secret += checksum
        return secret
    }

    /// minisign's checksum: BLAKE2b-256 over `"Ed"` ‖ key id ‖ the 64-byte secret key.
    static func checksum(keyIDAndSecret: some Collection<UInt8>) -> [UInt8] {
        var hasher = try! BLAKE2b(digestLength: 32)
        hasher.update(MinisignPublicKey.algorithm)
        hasher.update(keyIDAndSecret)
        return hasher.finalize()
    }
}
