import Crypto
import SignetCore

/// An age `ssh-ed25519` recipient: an OpenSSH Ed25519 public key (age-encryption.org/v1, the
/// reference implementation's `agessh` package).
///
/// The Ed25519 key is mapped to X25519 (``Ed25519Montgomery``); the stanza is
/// `-> ssh-ed25519 TAG SHARE`, where TAG is the first four bytes of SHA-256 over the key's SSH
/// wire format and SHARE an ephemeral X25519 public key. The shared secret is multiplied by a
/// tweak, HKDF-SHA-256 of nothing salted with the wire format, so that it is bound to the SSH
/// key; the wrap key is HKDF-SHA-256 of that, salted with SHARE and the X25519 public key.
public struct SSHEd25519Recipient: AgeRecipient, CustomStringConvertible {
    /// The stanza type, and the HKDF label.
    static let stanzaType = "ssh-ed25519"
    static let label = Array("age-encryption.org/v1/ssh-ed25519".utf8)

    private let montgomery: Curve25519.KeyAgreement.PublicKey
    private let montgomeryBytes: [UInt8]
    private let wireFormat: [UInt8]
    /// The OpenSSH line, `ssh-ed25519 AAAA…`.
    public let string: String

    /// A recipient for `key`, which must be an Ed25519 key whose encoding is a curve point.
    ///
    /// - Throws: ``AgeError/invalidKey(source:detail:)`` for another kind of key, or 32 bytes
    ///   that are not a point.
    public init(publicKey key: PublicKey, source: String) throws {
        guard let ed25519 = key.ed25519Key else {
            throw AgeError.invalidKey(source: source, detail: "not an Ed25519 key (an ssh-ed25519 recipient needs one)")
        }
        guard let u = Ed25519Montgomery.publicKey(edwards: Array(ed25519.rawRepresentation)),
            let point = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: u)
        else {
            throw AgeError.invalidKey(source: source, detail: "the Ed25519 public key is not a point on the curve")
        }
        montgomery = point
        montgomeryBytes = u
        wireFormat = key.openSSHWireFormat
        string = key.openSSHLine()
    }

    /// The OpenSSH line.
    public var description: String { string }

    /// Wraps `fileKey` in an `ssh-ed25519` stanza under a fresh ephemeral key.
    ///
    /// - Throws: ``AgeError/invalidKey(source:detail:)`` when the key maps to a low-order
    ///   X25519 point (an all-zero shared secret).
    public func wrap(fileKey: SecretBytes) throws -> [AgeStanza] {
        let ephemeral = Curve25519.KeyAgreement.PrivateKey()
        let share = Array(ephemeral.publicKey.rawRepresentation)
        guard let wrapKey = Self.wrapKey(
            privateKey: ephemeral, peer: montgomery, wireFormat: wireFormat, salt: share + montgomeryBytes)
        else {
            throw AgeError.invalidKey(
                source: AgeSSH.quoted(string), detail: "a low-order point, not a usable public key: anyone could open what is encrypted to it")
        }
        let body = try FileKeyWrap.seal(fileKey, with: wrapKey)
        return [AgeStanza(type: Self.stanzaType, arguments: [AgeSSH.tag(wireFormat), Base64.encodeUnpadded(share)], body: body)]
    }

    /// The wrap key, or nil for an all-zero shared secret: X25519 of `privateKey` and `peer`,
    /// multiplied by the tweak of `wireFormat`, then HKDF-SHA-256 with `salt` and the label.
    static func wrapKey(
        privateKey: Curve25519.KeyAgreement.PrivateKey, peer: Curve25519.KeyAgreement.PublicKey, wireFormat: [UInt8], salt: [UInt8]
    ) -> SymmetricKey? {
        var tweak = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: [UInt8]()), salt: wireFormat, info: label, outputByteCount: 32
        ).withUnsafeBytes { Array($0) }
        defer { SecretBytes.zero(&tweak) }
        var first: [UInt8] = []
        defer { SecretBytes.zero(&first) }
        do {
            first = try privateKey.sharedSecretFromKeyAgreement(with: peer).withUnsafeBytes { Array($0) }
            guard first.contains(where: { $0 != 0 }) else { return nil }
            let tweaked = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: tweak)
                .sharedSecretFromKeyAgreement(with: Curve25519.KeyAgreement.PublicKey(rawRepresentation: first))
            let allZero = tweaked.withUnsafeBytes { bytes in bytes.reduce(UInt8(0)) { $0 | $1 } == 0 }
            guard !allZero else { return nil }
            return tweaked.hkdfDerivedSymmetricKey(using: SHA256.self, salt: salt, sharedInfo: label, outputByteCount: 32)
        } catch {
            // swift-crypto refuses low-order points itself.
            return nil
        }
    }
}

/// An age `ssh-ed25519` identity: an Ed25519 private key (from any format Signet reads,
/// including OpenSSH's `openssh-key-v1`), which opens the `ssh-ed25519` stanzas tagged with
/// its public key.
public struct SSHEd25519Identity: AgeKeyPairIdentity, CustomStringConvertible {
    private let privateKey: Curve25519.KeyAgreement.PrivateKey
    private let montgomeryBytes: [UInt8]
    private let wireFormat: [UInt8]
    /// The matching recipient's OpenSSH line, `ssh-ed25519 AAAA…`.
    public let recipientString: String

    /// The identity of `key`, which must be an Ed25519 key.
    ///
    /// - Throws: ``AgeError/invalidKey(source:detail:)`` for another kind of key.
    public init(privateKey key: PrivateKey, source: String) throws {
        guard let ed25519 = key.ed25519Key else {
            throw AgeError.invalidKey(source: source, detail: "not an Ed25519 key (an ssh-ed25519 identity needs one)")
        }
        var seed = Array(ed25519.rawRepresentation)
        defer { SecretBytes.zero(&seed) }
        guard let converted = try? Ed25519Montgomery.privateKey(seed: seed),
            let u = Ed25519Montgomery.publicKey(edwards: Array(ed25519.publicKey.rawRepresentation))
        else {
            throw AgeError.invalidKey(source: source, detail: "the Ed25519 key cannot be converted to X25519")
        }
        privateKey = converted
        montgomeryBytes = u
        wireFormat = key.publicKey.openSSHWireFormat
        recipientString = key.publicKey.openSSHLine()
    }

    /// Shows the public key, never the secret.
    public var description: String { "SSHEd25519Identity(\(recipientString))" }

    /// The file key from the first `ssh-ed25519` stanza tagged for this key that opens, or nil.
    ///
    /// A stanza must have exactly two arguments, the second the canonical unpadded base64 of a
    /// 32-byte share; one tagged for another key is then skipped before any computation, as the
    /// reference implementation does; one tagged for this key must have a 32-byte body. One tagged for this key whose body does not open is an error, as in
    /// age: the file was altered.
    ///
    /// - Throws: ``AgeError/malformedHeader(source:detail:)`` for a malformed stanza, or a
    ///   share that is a low-order point; ``AgeError/stanzaDoesNotOpen(source:detail:)`` for
    ///   one of this key that does not open.
    public func unwrap(stanzas: [AgeStanza], source: String) throws -> SecretBytes? {
        let ours = AgeSSH.tag(wireFormat)
        let type = SSHEd25519Recipient.stanzaType
        for stanza in stanzas where stanza.type == type {
            guard stanza.arguments.count == 2 else {
                throw AgeError.malformedHeader(
                    source: source, detail: "an ssh-ed25519 stanza has \(stanza.arguments.count) arguments after its type, not 2")
            }
            guard let share = Base64.decodeUnpadded(stanza.arguments[1]), share.count == 32,
                let sharePoint = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: share)
            else {
                throw AgeError.malformedHeader(
                    source: source, detail: "the ephemeral share of an ssh-ed25519 stanza is not the canonical unpadded base64 of 32 bytes")
            }
            // As the reference does: a stanza tagged for another key is not this identity's,
            // whatever its tag looks like; the body is checked once the stanza is ours.
            guard stanza.arguments[0] == ours else { continue }
            guard stanza.body.count == FileKeyWrap.bodyCount else {
                throw AgeError.malformedHeader(
                    source: source, detail: "the body of an ssh-ed25519 stanza is \(stanza.body.count) bytes, not \(FileKeyWrap.bodyCount)")
            }
            guard let wrapKey = SSHEd25519Recipient.wrapKey(
                privateKey: privateKey, peer: sharePoint, wireFormat: wireFormat, salt: share + montgomeryBytes)
            else {
                throw AgeError.malformedHeader(
                    source: source, detail: "the ephemeral share of an ssh-ed25519 stanza is a low-order point (an all-zero shared secret)")
            }
            guard let fileKey = FileKeyWrap.open(stanza.body, with: wrapKey) else {
                throw AgeSSH.doesNotOpen(type: type, source: source)
            }
            return fileKey
        }
        return nil
    }
}
