/// What a key file turned out to hold.
public enum DecodedKey: Sendable {
    /// An unencrypted private key, ready to sign with.
    case privateKey(PrivateKey)
    /// A public key only: it can verify signatures but not make them.
    case publicKey(PublicKey)
    /// An encrypted PKCS#8 key: call ``decrypt(passphrase:source:policy:)``.
    case encryptedPrivateKey(EncryptedPrivateKey)

    /// Whether a passphrase is needed to get at the key.
    public var needsPassphrase: Bool {
        if case .encryptedPrivateKey = self { return true }
        return false
    }

    /// Decrypts an encrypted key; other cases are returned unchanged.
    public func decrypt(passphrase: SecretBytes, source: String, policy: KeyPolicy = .strict) throws -> DecodedKey {
        guard case .encryptedPrivateKey(let encrypted) = self else { return self }
        var der = try encrypted.decrypt(passphrase: passphrase, source: source)
        defer { SecretBytes.zero(&der) }
        return .privateKey(try KeyMaterial.privateKey(pkcs8: der, source: source, policy: policy))
    }
}
