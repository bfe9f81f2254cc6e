import Crypto
import CryptoExtras

/// The swift-crypto keys underneath, for operations SignetCore does not wrap itself (such as
/// SignetAge's `ssh-rsa` and `ssh-ed25519` recipients, which encrypt to signing keys).
extension PrivateKey {
    /// The RSA key, when this is one.
    public var rsaKey: _RSA.Signing.PrivateKey? {
        if case .rsa(let key) = storage { return key }
        return nil
    }

    /// The Ed25519 key, when this is one.
    public var ed25519Key: Curve25519.Signing.PrivateKey? {
        if case .ed25519(let key) = storage { return key }
        return nil
    }
}

extension PublicKey {
    /// The RSA key, when this is one.
    public var rsaKey: _RSA.Signing.PublicKey? {
        if case .rsa(let key) = storage { return key }
        return nil
    }

    /// The Ed25519 key, when this is one.
    public var ed25519Key: Curve25519.Signing.PublicKey? {
        if case .ed25519(let key) = storage { return key }
        return nil
    }

    /// The key in the SSH wire format (RFC 4253 §6.6, RFC 5656 §3.1, RFC 8709 §4): the blob
    /// that an OpenSSH public key line carries in base64, and what SSH fingerprints hash.
    public var openSSHWireFormat: [UInt8] { OpenSSHPublicKey.blob(self) }

    /// The OpenSSH one-line form, `TYPE BASE64` and ` COMMENT` when one is given, without a
    /// line end (as in `authorized_keys`).
    public func openSSHLine(comment: String? = nil) -> String {
        var line = OpenSSHPublicKey.encode(self, comment: comment)
        if line.hasSuffix("\n") { line.removeLast() }
        return line
    }
}
