import Crypto
import CryptoExtras
import SignetCore

/// An age `ssh-rsa` recipient: an OpenSSH RSA public key (age-encryption.org/v1, the
/// reference implementation's `agessh` package).
///
/// The stanza is `-> ssh-rsa TAG` with TAG the first four bytes of SHA-256 over the key's SSH
/// wire format (so the stanza shows which key it is for), and a body that is the file key
/// under RSAES-OAEP with SHA-256 and the label `age-encryption.org/v1/ssh-rsa`.
public struct SSHRSARecipient: AgeRecipient, CustomStringConvertible {
    /// The stanza type.
    static let stanzaType = "ssh-rsa"
    /// The OAEP label.
    static let label = Array("age-encryption.org/v1/ssh-rsa".utf8)
    /// The smallest modulus age encrypts to.
    public static let minimumBits = 2048

    private let publicKey: _RSA.Signing.PublicKey
    /// The key's SSH wire format, whose hash tags the stanzas.
    let wireFormat: [UInt8]
    /// The OpenSSH line, `ssh-rsa AAAA…`.
    public let string: String

    /// A recipient for `key`, which must be an RSA key of at least 2048 bits.
    ///
    /// - Throws: ``AgeError/invalidKey(source:detail:)`` for another kind of key or a smaller one.
    public init(publicKey key: PublicKey, source: String) throws {
        guard let rsa = key.rsaKey else {
            throw AgeError.invalidKey(source: source, detail: "not an RSA key (an ssh-rsa recipient needs one)")
        }
        guard rsa.keySizeInBits >= Self.minimumBits else {
            throw AgeError.invalidKey(
                source: source, detail: "an RSA key of \(rsa.keySizeInBits) bits is too small: age requires \(Self.minimumBits) or more")
        }
        publicKey = rsa
        wireFormat = key.openSSHWireFormat
        string = key.openSSHLine()
    }

    /// The OpenSSH line.
    public var description: String { string }

    /// Wraps `fileKey` in an `ssh-rsa` stanza.
    public func wrap(fileKey: SecretBytes) throws -> [AgeStanza] {
        let body: [UInt8]
        do {
            body = try RSAOAEP.encrypt(fileKey.bytes, label: Self.label, publicKey: publicKey)
        } catch {
            throw AgeError.invalidKey(source: AgeSSH.quoted(string), detail: "RSA-OAEP encryption failed: \(error)")
        }
        return [AgeStanza(type: Self.stanzaType, arguments: [AgeSSH.tag(wireFormat)], body: body)]
    }
}

/// An age `ssh-rsa` identity: an RSA private key (from any format Signet reads, including
/// OpenSSH's `openssh-key-v1`), which opens the `ssh-rsa` stanzas tagged with its public key.
public struct SSHRSAIdentity: AgeKeyPairIdentity, CustomStringConvertible {
    private let rawKey: RSAOAEP.RawKey
    private let wireFormat: [UInt8]
    /// The matching recipient's OpenSSH line, `ssh-rsa AAAA…`.
    public let recipientString: String

    /// The identity of `key`, which must be an RSA key.
    ///
    /// - Throws: ``AgeError/invalidKey(source:detail:)`` for another kind of key.
    public init(privateKey key: PrivateKey, source: String) throws {
        guard let rsa = key.rsaKey else {
            throw AgeError.invalidKey(source: source, detail: "not an RSA key (an ssh-rsa identity needs one)")
        }
        do {
            rawKey = try RSAOAEP.rawKey(rsa)
        } catch {
            throw AgeError.invalidKey(source: source, detail: "the RSA private key cannot be used for decryption")
        }
        wireFormat = key.publicKey.openSSHWireFormat
        recipientString = key.publicKey.openSSHLine()
    }

    /// Shows the public key, never the secret.
    public var description: String { "SSHRSAIdentity(\(recipientString))" }

    /// The file key from the first `ssh-rsa` stanza tagged for this key that decrypts, or nil.
    ///
    /// A stanza must have exactly one argument, its tag; a stanza tagged for another key (or
    /// with a tag no key has) is skipped without any RSA operation, as the reference does. A
    /// body tagged for this key that does not decrypt is an error, as in age: the file was
    /// altered.
    ///
    /// - Throws: ``AgeError/malformedHeader(source:detail:)`` for a malformed `ssh-rsa` stanza;
    ///   ``AgeError/stanzaDoesNotOpen(source:detail:)`` for one of this key that does not decrypt.
    public func unwrap(stanzas: [AgeStanza], source: String) throws -> SecretBytes? {
        let ours = AgeSSH.tag(wireFormat)
        for stanza in stanzas where stanza.type == SSHRSARecipient.stanzaType {
            guard stanza.arguments.count == 1 else {
                throw AgeError.malformedHeader(
                    source: source, detail: "an ssh-rsa stanza has \(stanza.arguments.count) arguments after its type, not 1")
            }
            guard stanza.arguments[0] == ours else { continue }
            let fileKey: SecretBytes
            do {
                fileKey = try RSAOAEP.decrypt(stanza.body, label: SSHRSARecipient.label, rawKey: rawKey)
            } catch RSAOAEP.Failure.unusableKey(let detail) {
                throw AgeError.invalidKey(source: AgeSSH.quoted(recipientString), detail: detail)
            } catch {
                throw AgeSSH.doesNotOpen(type: SSHRSARecipient.stanzaType, source: source)
            }
            guard fileKey.count == FileKeyWrap.fileKeyCount else {
                throw AgeError.malformedHeader(source: source, detail: "the ssh-rsa stanza holds \(fileKey.count) bytes, not a 16-byte file key")
            }
            return fileKey
        }
        return nil
    }
}
