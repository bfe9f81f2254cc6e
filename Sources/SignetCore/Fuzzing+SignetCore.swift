import Foundation

/// Entry points for the libFuzzer targets (`SignetFuzzTargets`): each key format's decoder on
/// its own, which the public ``KeyDecoder`` reaches only after detecting the format. Not API:
/// `package`, for the fuzz targets and their replay tests only.
package enum CoreFuzzing {
    /// A key format whose decoder can be called directly.
    package enum KeyFormat: String, CaseIterable, Sendable {
        /// A PEM document (any label ``KeyDecoder`` reads).
        case pem
        /// DER, its structure detected from the types of its first fields.
        case der
        /// PKCS#1 `RSAPrivateKey`, else `RSAPublicKey`.
        case pkcs1
        /// PKCS#8 `PrivateKeyInfo`.
        case pkcs8
        /// SEC1 `ECPrivateKey` (naming its curve).
        case sec1
        /// `SubjectPublicKeyInfo`.
        case spki
        /// An OpenSSH public key line.
        case openssh
        /// An OpenSSH `openssh-key-v1` private key (PEM armoured).
        case opensshPrivate
        /// A JSON Web Key.
        case jwk
        /// iOS's raw form: base64 text, or the raw bytes themselves.
        case ios
    }

    /// Decodes `bytes` with the decoder of `format` alone.
    package static func decodeKey(_ bytes: [UInt8], as format: KeyFormat, policy: KeyPolicy) throws -> DecodedKey {
        let source = "fuzz input"
        switch format {
        case .pem:
            return try KeyDecoder.decodePEM(String(decoding: bytes, as: UTF8.self), source: source, policy: policy)
        case .der:
            return try KeyDecoder.decodeDER(bytes, source: source, policy: policy)
        case .pkcs1:
            do {
                return .privateKey(try KeyMaterial.rsaPrivateKey(pkcs1: bytes, source: source, policy: policy))
            } catch {
                return .publicKey(try KeyMaterial.rsaPublicKey(pkcs1: bytes, source: source, policy: policy))
            }
        case .pkcs8:
            return .privateKey(try KeyMaterial.privateKey(pkcs8: bytes, source: source, policy: policy))
        case .sec1:
            return .privateKey(try KeyMaterial.ecPrivateKey(sec1: bytes, curve: nil, source: source))
        case .spki:
            return .publicKey(try KeyMaterial.publicKey(spki: bytes, source: source, policy: policy))
        case .openssh:
            return .publicKey(try OpenSSHPublicKey.decode(trimmedText(bytes), source: source, policy: policy))
        case .opensshPrivate:
            // The PEM armour, then the openssh-key-v1 reader alone, whatever the label says.
            let blocks = try PEM.decode(String(decoding: bytes, as: UTF8.self), source: source)
            return .privateKey(try OpenSSHPrivateKey.decode(blocks[0].der, source: source, policy: policy))
        case .jwk:
            return try JWK.decode(trimmedText(bytes), source: source, policy: policy)
        case .ios:
            if let raw = Base64.decode(trimmedText(bytes)) {
                return try KeyDecoder.decodeRaw(raw, source: source, policy: policy, wasBase64: true)
            }
            return try KeyDecoder.decodeRaw(bytes, source: source, policy: policy, wasBase64: false)
        }
    }

    /// The text as ``KeyDecoder`` hands it to the text decoders: trimmed of white space.
    private static func trimmedText(_ bytes: [UInt8]) -> String {
        String(decoding: bytes, as: UTF8.self).trimmed.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Decrypts an encrypted PKCS#8 key with `passphrase` when its PBKDF2 iteration count is at
    /// most `maximumIterations` (so that a fuzzer's input cannot stall it); nil when it is higher.
    package static func decrypt(
        _ key: EncryptedPrivateKey, passphrase: SecretBytes, maximumIterations: Int, policy: KeyPolicy
    ) throws -> DecodedKey? {
        guard key.iterations <= maximumIterations else { return nil }
        return try DecodedKey.encryptedPrivateKey(key).decrypt(passphrase: passphrase, source: "fuzz input", policy: policy)
    }
}
