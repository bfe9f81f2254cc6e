import Crypto
import Foundation
import SignetCore

/// age's hybrid post-quantum recipient: an MLKEM768-X25519 (X-Wing) public key, written
/// `age1pq1…` (C2SP age.md, "The MLKEM768-X25519 hybrid post-quantum recipient type").
///
/// The file key is sealed with HPKE (RFC 9180) in base mode: KEM MLKEM768-X25519 (X-Wing,
/// 0x647a), KDF HKDF-SHA256, AEAD ChaCha20-Poly1305, info `age-encryption.org/mlkem768x25519`,
/// all from swift-crypto. The stanza is `-> mlkem768x25519 ENC` with the 1,120-byte
/// encapsulated key, and the 32-byte HPKE ciphertext as its body.
///
/// The spec asks that files for this recipient be for post-quantum recipients only, so
/// ``AgeEncryptor`` refuses to mix it with X25519, SSH or passphrase recipients.
public struct MLKEM768X25519Recipient: AgeRecipient, Hashable, CustomStringConvertible {
    static let humanReadablePart = "age1pq"
    static let stanzaType = "mlkem768x25519"
    static let info = Data("age-encryption.org/mlkem768x25519".utf8)
    static let ciphersuite = HPKE.Ciphersuite(kem: .XWingMLKEM768X25519, kdf: .HKDF_SHA256, aead: .chaChaPoly)
    /// The sizes of a public key and of an encapsulated key.
    static let publicKeyCount = 1216
    static let encapsulatedKeyCount = 1120

    let publicKey: XWingMLKEM768X25519.PublicKey
    let rawKey: [UInt8]

    /// A recipient from its `age1pq1…` encoding, lowercase as age writes it.
    ///
    /// - Throws: ``AgeError/invalidKey(source:detail:)`` for anything else.
    public init(_ string: String, source: String? = nil) throws {
        let source = source ?? X25519Recipient.quoted(string)
        var decoded = try Bech32.decode(string, source: source)
        defer { SecretBytes.zero(&decoded.data) }
        guard decoded.humanReadablePart == Self.humanReadablePart else {
            let detail = decoded.humanReadablePart.lowercased() == Self.humanReadablePart
                ? "an age recipient is written in lowercase (age1pq1…)" : "not a post-quantum age recipient (age1pq1…)"
            throw AgeError.invalidKey(source: source, detail: detail)
        }
        guard decoded.data.count == Self.publicKeyCount else {
            throw AgeError.invalidKey(
                source: source, detail: "an MLKEM768-X25519 recipient holds \(Self.publicKeyCount) bytes, not \(decoded.data.count)")
        }
        do {
            self.init(publicKey: try XWingMLKEM768X25519.PublicKey(rawRepresentation: decoded.data))
        } catch {
            throw AgeError.invalidKey(source: source, detail: "not an MLKEM768-X25519 public key (\(error))")
        }
    }

    /// The recipient of an X-Wing public key.
    public init(publicKey: XWingMLKEM768X25519.PublicKey) {
        self.publicKey = publicKey
        self.rawKey = Array(publicKey.rawRepresentation)
    }

    /// The `age1pq1…` encoding, lowercase.
    public var string: String { Bech32.encode(humanReadablePart: Self.humanReadablePart, data: rawKey) }

    /// The `age1pq1…` encoding.
    public var description: String { string }

    /// Post-quantum: files for it must not also be for classical recipients.
    public var isPostQuantum: Bool { true }

    /// Seals `fileKey` to this recipient with HPKE.
    public func wrap(fileKey: SecretBytes) throws -> [AgeStanza] {
        do {
            var sender = try HPKE.Sender(recipientKey: publicKey, ciphersuite: Self.ciphersuite, info: Self.info)
            let body = try fileKey.withUnsafeBytes { bytes in try sender.seal(bytes) }
            return [AgeStanza(type: Self.stanzaType, arguments: [Base64.encodeUnpadded(Array(sender.encapsulatedKey))], body: Array(body))]
        } catch {
            throw AgeError.invalidKey(source: Self.abbreviated(string), detail: "HPKE encapsulation failed (\(error))")
        }
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.rawKey == rhs.rawKey }
    public func hash(into hasher: inout Hasher) { hasher.combine(rawKey) }

    /// A 1,900-character recipient cut short for messages.
    static func abbreviated(_ string: String) -> String { "\"" + string.prefix(20) + "…\"" }
}

/// An MLKEM768-X25519 identity: a 32-byte X-Wing seed, written `AGE-SECRET-KEY-PQ-1…`.
///
/// Its description never shows the secret.
public struct MLKEM768X25519Identity: AgeKeyPairIdentity, CustomStringConvertible {
    static let humanReadablePart = "AGE-SECRET-KEY-PQ-"

    private let privateKey: XWingMLKEM768X25519.PrivateKey
    /// The public key files are encrypted to for this identity.
    public let recipient: MLKEM768X25519Recipient

    private init(privateKey: XWingMLKEM768X25519.PrivateKey) {
        self.privateKey = privateKey
        self.recipient = MLKEM768X25519Recipient(publicKey: privateKey.publicKey)
    }

    /// A new identity from the system's secure random generator.
    public static func generate() throws -> MLKEM768X25519Identity {
        do {
            return MLKEM768X25519Identity(privateKey: try XWingMLKEM768X25519.PrivateKey.generate())
        } catch {
            throw AgeError.invalidArgument(detail: "generating an MLKEM768-X25519 key failed (\(error))")
        }
    }

    /// An identity from its `AGE-SECRET-KEY-PQ-1…` encoding, uppercase.
    public init(_ string: String) throws {
        try self.init(utf8: string.utf8, source: "AGE-SECRET-KEY-PQ-1…")
    }

    /// ``init(_:)`` on the bytes of a key file's line, which never becomes a `String`.
    init(utf8 text: some Collection<UInt8>, source: String) throws {
        var decoded = try Bech32.decode(utf8: text, source: source)
        defer { SecretBytes.zero(&decoded.data) }
        guard decoded.humanReadablePart == Self.humanReadablePart else {
            throw AgeError.invalidKey(source: source, detail: "an age identity is written in uppercase (AGE-SECRET-KEY-PQ-1…)")
        }
        guard decoded.data.count == 32 else {
            throw AgeError.invalidKey(source: source, detail: "an MLKEM768-X25519 identity holds 32 bytes, not \(decoded.data.count)")
        }
        do {
            self.init(privateKey: try XWingMLKEM768X25519.PrivateKey(seedRepresentation: decoded.data, publicKey: nil))
        } catch {
            throw AgeError.invalidKey(source: source, detail: "not an MLKEM768-X25519 seed (\(error))")
        }
    }

    /// The `AGE-SECRET-KEY-PQ-1…` encoding: the secret key.
    public var string: String {
        var seed = Array(privateKey.seedRepresentation)
        defer { SecretBytes.zero(&seed) }
        return Bech32.encode(humanReadablePart: Self.humanReadablePart, data: seed)
    }

    /// The recipient's `age1pq1…` encoding.
    public var recipientString: String { recipient.string }

    /// Shows the start of the recipient, never the secret.
    public var description: String { "MLKEM768X25519Identity(\(MLKEM768X25519Recipient.abbreviated(recipient.string)))" }

    /// The file key from the first `mlkem768x25519` stanza this identity opens, or nil.
    ///
    /// A stanza must have exactly one argument after its type, the canonical unpadded base64 of
    /// a 1,120-byte encapsulated key, and a 32-byte body, checked before anything is computed.
    /// An encapsulated key whose X25519 part is a low-order point (an all-zero shared secret)
    /// is refused, as the spec requires; one that does not open is a stanza for another key.
    ///
    /// - Throws: ``AgeError/malformedHeader(source:detail:)`` for a malformed stanza.
    public func unwrap(stanzas: [AgeStanza], source: String) throws -> SecretBytes? {
        let type = MLKEM768X25519Recipient.stanzaType
        for stanza in stanzas where stanza.type == type {
            guard stanza.arguments.count == 1 else {
                throw AgeError.malformedHeader(
                    source: source, detail: "an \(type) stanza has \(stanza.arguments.count) arguments after its type, not 1")
            }
            guard let encapsulated = Base64.decodeUnpadded(stanza.arguments[0]),
                encapsulated.count == MLKEM768X25519Recipient.encapsulatedKeyCount
            else {
                throw AgeError.malformedHeader(
                    source: source,
                    detail: "the encapsulated key of an \(type) stanza is not the canonical unpadded base64 of \(MLKEM768X25519Recipient.encapsulatedKeyCount) bytes")
            }
            guard stanza.body.count == FileKeyWrap.bodyCount else {
                throw AgeError.malformedHeader(
                    source: source, detail: "the body of an \(type) stanza is \(stanza.body.count) bytes, not \(FileKeyWrap.bodyCount)")
            }
            guard !Self.isLowOrder(Array(encapsulated.suffix(32))) else {
                throw AgeError.malformedHeader(
                    source: source, detail: "the X25519 part of an \(type) stanza is a low-order point (an all-zero shared secret)")
            }
            do {
                var recipient = try HPKE.Recipient(
                    privateKey: privateKey, ciphersuite: MLKEM768X25519Recipient.ciphersuite, info: MLKEM768X25519Recipient.info,
                    encapsulatedKey: Data(encapsulated))
                var opened = try recipient.open(stanza.body)
                defer { opened.withUnsafeMutableBytes { SecretBytes.zero($0) } }
                return SecretBytes(opened)
            } catch {
                continue
            }
        }
        return nil
    }

    /// Whether the X25519 point `u` is of low order: X25519 of any clamped scalar (a multiple
    /// of the cofactor) with it is then all zero, which X-Wing itself does not check.
    static func isLowOrder(_ u: [UInt8]) -> Bool {
        do {
            let probe = Curve25519.KeyAgreement.PrivateKey()
            let secret = try probe.sharedSecretFromKeyAgreement(with: Curve25519.KeyAgreement.PublicKey(rawRepresentation: u))
            return secret.withUnsafeBytes { bytes in bytes.allSatisfy { $0 == 0 } }
        } catch {
            return true
        }
    }
}
