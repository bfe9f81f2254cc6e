import Crypto
import Foundation
import SignetCore

/// An age X25519 recipient: a Curve25519 public key, written `age1…` (age-encryption.org/v1).
///
/// Files encrypted to it carry a stanza `-> X25519 <ephemeral share>` that only the matching
/// ``X25519Identity`` opens; the stanza does not reveal which recipient it is for.
public struct X25519Recipient: AgeRecipient, Hashable, CustomStringConvertible {
    /// The human-readable part of a recipient's Bech32 encoding.
    static let humanReadablePart = "age"
    /// The stanza type.
    static let stanzaType = "X25519"
    /// The detail for a string that is no kind of age recipient.
    static let notARecipient = "not an age recipient (age1…)"
    /// A recipient line longer than this is refused before decoding (as age does, 8 KiB).
    static let maximumLength = 8 << 10

    /// The Curve25519 public key.
    public let publicKey: Curve25519.KeyAgreement.PublicKey
    /// The key's 32 bytes, for the HKDF salt, the encoding and comparisons.
    let rawKey: [UInt8]

    /// A recipient from its `age1…` encoding, lowercase as age writes it.
    ///
    /// - Throws: ``AgeError/invalidKey(source:detail:)`` for anything that is not an `age1…`
    ///   X25519 recipient (``AgeKeyFile/recipient(_:source:)`` also takes OpenSSH keys);
    ///   ``AgeError/unsupported(source:detail:)`` for kinds of recipient that Signet does not
    ///   encrypt to (post-quantum `age1pq1…`, tagged and plugin recipients).
    public init(_ string: String) throws {
        try self.init(string, source: X25519Recipient.quoted(string))
    }

    /// ``init(_:)`` with `source` naming the input in messages.
    init(_ string: String, source: String) throws {
        if string.utf8.count > Self.maximumLength {
            throw AgeError.invalidKey(source: source, detail: "longer than \(Self.maximumLength / 1024) KiB: not an age recipient")
        }
        if AgeSSH.looksLikeSSHKey(string) {
            throw AgeError.invalidKey(source: source, detail: "an OpenSSH public key, not an X25519 (age1…) recipient")
        }
        if string.uppercased().hasPrefix("AGE-SECRET-KEY-") || string.uppercased().hasPrefix("AGE-PLUGIN-") {
            throw AgeError.invalidKey(source: source, detail: "this is an identity (a secret key), not a recipient; keep it private and give its public key (age1…) instead")
        }
        guard string.lowercased().hasPrefix("age1") else {
            throw AgeError.invalidKey(source: source, detail: Self.notARecipient)
        }
        var decoded = try Bech32.decode(string, source: source)
        defer { SecretBytes.zero(&decoded.data) }
        let prefix = decoded.humanReadablePart
        if prefix.lowercased() == MLKEM768X25519Recipient.humanReadablePart {
            throw AgeError.invalidKey(source: source, detail: "a post-quantum (age1pq1…) recipient, not an X25519 one")
        }
        if let kind = Self.otherKind(humanReadablePart: prefix.lowercased()) {
            throw AgeError.unsupported(source: source, detail: "\(kind) recipients (age1… X25519, age1pq1… and SSH recipients are)")
        }
        guard prefix == Self.humanReadablePart else {
            // age writes and reads recipients in lowercase only; so do we.
            let detail = prefix == "AGE" ? "an age recipient is written in lowercase (age1…)" : "not an age recipient (age1…)"
            throw AgeError.invalidKey(source: source, detail: detail)
        }
        guard decoded.data.count == 32 else {
            throw AgeError.invalidKey(source: source, detail: "an X25519 recipient holds 32 bytes, not \(decoded.data.count)")
        }
        let key: Curve25519.KeyAgreement.PublicKey
        do {
            key = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: decoded.data)
        } catch {
            throw AgeError.invalidKey(source: source, detail: "not an X25519 public key (\(error))")
        }
        self.init(publicKey: key)
    }

    /// The recipient of a Curve25519 public key.
    public init(publicKey: Curve25519.KeyAgreement.PublicKey) {
        self.publicKey = publicKey
        self.rawKey = Array(publicKey.rawRepresentation)
    }

    /// The `age1…` encoding, lowercase, as age writes it.
    public var string: String {
        Bech32.encode(humanReadablePart: Self.humanReadablePart, data: rawKey)
    }

    /// The `age1…` encoding.
    public var description: String { string }

    /// Wraps `fileKey` in an `X25519` stanza under a fresh ephemeral key.
    ///
    /// - Throws: ``AgeError/invalidKey(source:detail:)`` when this recipient is a low-order
    ///   point, for which the shared secret is all zero and anyone could open the stanza.
    public func wrap(fileKey: SecretBytes) throws -> [AgeStanza] {
        let ephemeral = Curve25519.KeyAgreement.PrivateKey()
        let share = Array(ephemeral.publicKey.rawRepresentation)
        guard let wrapKey = X25519Recipient.wrapKey(privateKey: ephemeral, peer: publicKey, salt: share + rawKey) else {
            throw AgeError.invalidKey(
                source: Self.quoted(string), detail: "a low-order point, not a usable public key: anyone could open what is encrypted to it")
        }
        let body = try FileKeyWrap.seal(fileKey, with: wrapKey)
        return [AgeStanza(type: Self.stanzaType, arguments: [Base64.encodeUnpadded(share)], body: body)]
    }

    /// Whether two recipients are the same public key.
    public static func == (lhs: X25519Recipient, rhs: X25519Recipient) -> Bool { lhs.rawKey == rhs.rawKey }

    /// Hashes the public key.
    public func hash(into hasher: inout Hasher) { hasher.combine(rawKey) }

    /// HKDF-SHA-256 of the X25519 shared secret of `privateKey` and `peer`, with `salt` and
    /// age's label; nil when the shared secret is all zero (`peer` is a low-order point), which
    /// the spec requires refusing.
    static func wrapKey(
        privateKey: Curve25519.KeyAgreement.PrivateKey, peer: Curve25519.KeyAgreement.PublicKey, salt: [UInt8]
    ) -> SymmetricKey? {
        let secret: SharedSecret
        do {
            secret = try privateKey.sharedSecretFromKeyAgreement(with: peer)
        } catch {
            // CryptoKit may refuse a low-order point itself.
            return nil
        }
        let allZero = secret.withUnsafeBytes { bytes in bytes.reduce(UInt8(0)) { $0 | $1 } == 0 }
        guard !allZero else { return nil }
        return secret.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: salt, sharedInfo: Array("age-encryption.org/v1/X25519".utf8), outputByteCount: 32)
    }

    /// The kind of a recognised recipient that is not X25519, from the lowercase human-readable
    /// part of its valid Bech32 encoding (`age1pq`, `age1tag`, `age1yubikey`), or nil.
    private static func otherKind(humanReadablePart prefix: String) -> String? {
        guard prefix.hasPrefix("age1") else { return nil }
        switch prefix {
        case "age1tag", "age1tagpq": return "tagged (P-256) hardware-key"
        default: return "plugin (\(PrintableText.escaped(String(prefix.dropFirst(4)), limit: 40, marksCut: true)))"
        }
    }

    /// A recipient string quoted for messages: escaped and cut short.
    static func quoted(_ string: String) -> String {
        if string.uppercased().hasPrefix("AGE-SECRET-KEY-") { return "AGE-SECRET-KEY-1…" }
        return "\"" + PrintableText.escaped(string, limit: 80, marksCut: true) + "\""
    }
}

/// An age X25519 identity: a Curve25519 private key, written `AGE-SECRET-KEY-1…` in uppercase
/// (age-encryption.org/v1), which opens the stanzas wrapped to its ``recipient``.
///
/// Its description never shows the secret: printing an identity shows its recipient.
public struct X25519Identity: AgeKeyPairIdentity, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The human-readable part of an identity's Bech32 encoding.
    static let humanReadablePart = "AGE-SECRET-KEY-"

    private let privateKey: Curve25519.KeyAgreement.PrivateKey
    /// The public key that files are encrypted to for this identity.
    public let recipient: X25519Recipient

    private init(privateKey: Curve25519.KeyAgreement.PrivateKey) {
        self.privateKey = privateKey
        self.recipient = X25519Recipient(publicKey: privateKey.publicKey)
    }

    /// A new identity from the system's secure random generator.
    public static func generate() -> X25519Identity {
        X25519Identity(privateKey: Curve25519.KeyAgreement.PrivateKey())
    }

    /// An identity from its `AGE-SECRET-KEY-1…` encoding, uppercase as age writes and requires it.
    ///
    /// - Throws: ``AgeError/invalidKey(source:detail:)``, whose message never quotes the text;
    ///   ``AgeError/unsupported(source:detail:)`` for post-quantum and plugin identities.
    public init(_ string: String) throws {
        try self.init(utf8: string.utf8, source: "AGE-SECRET-KEY-1…")
    }

    /// ``init(_:)`` on the UTF-8 bytes of a line, so that a key file's secret never becomes a
    /// `String`; `source` names the input in messages.
    init(utf8 text: some Collection<UInt8>, source: String) throws {
        // Matched on bytes: a secret line never becomes a String, not even in part.
        func starts(with prefix: String) -> Bool {
            let expected = Array(prefix.utf8)
            guard text.count >= expected.count else { return false }
            return zip(text, expected).allSatisfy { pair in
                ((97...122).contains(pair.0) ? pair.0 - 32 : pair.0) == pair.1
            }
        }
        if starts(with: "AGE-SECRET-KEY-PQ-1") {
            throw AgeError.invalidKey(source: source, detail: "a post-quantum (AGE-SECRET-KEY-PQ-1…) identity, not an X25519 one")
        }
        if starts(with: "AGE-PLUGIN-") {
            throw AgeError.unsupported(source: source, detail: "plugin identities (AGE-PLUGIN-…)")
        }
        if starts(with: "AGE1") {
            throw AgeError.invalidKey(source: source, detail: "a recipient (public key), not an identity (AGE-SECRET-KEY-1…)")
        }
        guard starts(with: "AGE-SECRET-KEY-1") else {
            throw AgeError.invalidKey(source: source, detail: "not an age identity (AGE-SECRET-KEY-1…)")
        }
        var decoded = try Bech32.decode(utf8: text, source: source)
        defer { SecretBytes.zero(&decoded.data) }
        guard decoded.humanReadablePart == Self.humanReadablePart else {
            // age writes and reads identities in uppercase only; so do we.
            throw AgeError.invalidKey(source: source, detail: "an age identity is written in uppercase (AGE-SECRET-KEY-1…)")
        }
        guard decoded.data.count == 32 else {
            throw AgeError.invalidKey(source: source, detail: "an X25519 identity holds 32 bytes, not \(decoded.data.count)")
        }
        let key: Curve25519.KeyAgreement.PrivateKey
        do {
            key = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: decoded.data)
        } catch {
            throw AgeError.invalidKey(source: source, detail: "not an X25519 private key (\(error))")
        }
        self.init(privateKey: key)
    }

    /// The `AGE-SECRET-KEY-1…` encoding, uppercase, as age writes it. It is the secret key:
    /// write it only where the user asked for it.
    public var string: String {
        // A copy we own: swift-crypto's `rawRepresentation` may share the key's own storage,
        // so zeroing it in place would zero the key itself.
        var raw = Array(privateKey.rawRepresentation)
        defer { SecretBytes.zero(&raw) }
        return Bech32.encode(humanReadablePart: Self.humanReadablePart, data: raw)
    }

    /// The recipient's `age1…` encoding.
    public var recipientString: String { recipient.string }

    /// Shows the recipient, never the secret.
    public var description: String { "X25519Identity(\(recipient.string))" }

    /// Shows the recipient, never the secret.
    public var debugDescription: String { description }

    /// Only the recipient, so that `dump` cannot print the secret.
    public var customMirror: Mirror { Mirror(self, children: ["recipient": recipient]) }

    /// The file key from the first `X25519` stanza this identity opens, or nil when none is for it.
    ///
    /// Stanzas of other types are ignored. An `X25519` stanza is checked before anything is
    /// computed: exactly one argument, the canonical unpadded base64 of 32 bytes, and a body
    /// of exactly 32 bytes (which blunts partitioning-oracle attacks).
    ///
    /// - Throws: ``AgeError/malformedHeader(source:detail:)`` for a malformed `X25519` stanza
    ///   or one whose ephemeral share is a low-order point (the spec requires aborting).
    public func unwrap(stanzas: [AgeStanza], source: String) throws -> SecretBytes? {
        for stanza in stanzas where stanza.type == X25519Recipient.stanzaType {
            guard stanza.arguments.count == 1 else {
                throw AgeError.malformedHeader(
                    source: source, detail: "an X25519 stanza has \(stanza.arguments.count) arguments after its type, not 1")
            }
            guard let share = Base64.decodeUnpadded(stanza.arguments[0]), share.count == 32 else {
                throw AgeError.malformedHeader(
                    source: source, detail: "the ephemeral share of an X25519 stanza is not the canonical unpadded base64 of 32 bytes")
            }
            guard stanza.body.count == FileKeyWrap.bodyCount else {
                throw AgeError.malformedHeader(
                    source: source, detail: "the body of an X25519 stanza is \(stanza.body.count) bytes, not \(FileKeyWrap.bodyCount)")
            }
            let sharePoint: Curve25519.KeyAgreement.PublicKey
            do {
                sharePoint = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: share)
            } catch {
                throw AgeError.malformedHeader(source: source, detail: "the ephemeral share of an X25519 stanza is not a Curve25519 point")
            }
            guard let wrapKey = X25519Recipient.wrapKey(privateKey: privateKey, peer: sharePoint, salt: share + recipient.rawKey)
            else {
                throw AgeError.malformedHeader(
                    source: source, detail: "the ephemeral share of an X25519 stanza is a low-order point (an all-zero shared secret)")
            }
            // A body that does not open is a stanza for another key: try the next.
            if let fileKey = FileKeyWrap.open(stanza.body, with: wrapKey) { return fileKey }
        }
        return nil
    }
}
