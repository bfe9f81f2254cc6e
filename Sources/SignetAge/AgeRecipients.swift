import SignetCore

/// One stanza of an age header: `-> TYPE ARG…` and its body (age-encryption.org/v1).
public struct AgeStanza: Sendable, Equatable {
    /// The first argument: `X25519`, `scrypt`, `ssh-rsa`, `ssh-ed25519`, or one Signet does not know.
    public var type: String
    /// The further arguments.
    public var arguments: [String]
    /// The body, decoded from its unpadded base64 lines.
    public var body: [UInt8]

    /// A stanza of its parts.
    public init(type: String, arguments: [String], body: [UInt8]) {
        self.type = type
        self.arguments = arguments
        self.body = body
    }
}

/// Something a file can be encrypted to: it wraps the 16-byte file key into stanzas.
public protocol AgeRecipient: Sendable {
    /// The stanzas that carry `fileKey` for this recipient.
    func wrap(fileKey: SecretBytes) throws -> [AgeStanza]
    /// Whether this is a passphrase (scrypt) recipient, which must be a file's only one.
    var isPassphrase: Bool { get }
    /// Whether this recipient resists quantum computers (`mlkem768x25519`); such recipients
    /// are not mixed with others in one file, as the spec asks.
    var isPostQuantum: Bool { get }
}

extension AgeRecipient {
    /// Most recipients are not passphrases.
    public var isPassphrase: Bool { false }
    /// Most recipients are classical.
    public var isPostQuantum: Bool { false }
}

/// Something that can open files: it unwraps the file key from the stanzas meant for it.
public protocol AgeIdentity: Sendable {
    /// The file key from the first stanza this identity can open; nil when no stanza is for it.
    /// A stanza of its type that is malformed throws; one for another key of the same type is skipped.
    func unwrap(stanzas: [AgeStanza], source: String) throws -> SecretBytes?
}

/// An identity that is the private half of a key pair, so its recipient can be shown (what
/// `age-keygen -y` prints): X25519, `ssh-rsa` and `ssh-ed25519` identities, not passphrases.
public protocol AgeKeyPairIdentity: AgeIdentity {
    /// The recipient that files for this identity are encrypted to: `age1…`, or an OpenSSH
    /// public key line (`ssh-ed25519 AAAA…`).
    var recipientString: String { get }
}
