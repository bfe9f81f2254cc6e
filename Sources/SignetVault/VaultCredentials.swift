import SignetCore

/// What unlocks a vault: a passphrase, the content of a key file, or both.
///
/// A passphrase is stretched with scrypt; a key file (at least 32 bytes, ideally random) is
/// hashed with SHA-256. With both, both are needed: the key file is something you have, the
/// passphrase something you know.
public struct VaultCredentials: Sendable {
    /// The passphrase, when the vault uses one.
    public var passphrase: SecretBytes?
    /// The bytes of the key file, when the vault uses one.
    public var keyFile: SecretBytes?

    /// The shortest key file accepted.
    public static let minimumKeyFileLength = 32
    /// The longest key file read.
    public static let maximumKeyFileLength = 1 << 20

    /// Credentials of a passphrase, a key file's content, or both. They are checked when used: at
    /// least one is needed, a passphrase may not be empty, and a key file must have 32 bytes to 1 MiB.
    public init(passphrase: SecretBytes? = nil, keyFile: SecretBytes? = nil) {
        self.passphrase = passphrase
        self.keyFile = keyFile
    }

    /// The unlock method these credentials make up, checked for emptiness and size.
    func method() throws -> VaultUnlockMethod {
        if let passphrase, passphrase.isEmpty { throw VaultError.invalidArgument(detail: "the vault passphrase is empty") }
        if let keyFile {
            guard keyFile.count >= Self.minimumKeyFileLength else {
                throw VaultError.invalidArgument(
                    detail: "a vault key file needs at least \(Self.minimumKeyFileLength) bytes (it has \(keyFile.count)); make one with `head -c 32 /dev/urandom > FILE`")
            }
            guard keyFile.count <= Self.maximumKeyFileLength else {
                throw VaultError.invalidArgument(detail: "a vault key file may have at most 1 MiB")
            }
        }
        switch (passphrase != nil, keyFile != nil) {
        case (true, true): return .passphraseAndKeyFile
        case (true, false): return .passphrase
        case (false, true): return .keyFile
        case (false, false): throw VaultError.invalidArgument(detail: "a vault needs a passphrase, a key file, or both")
        }
    }
}

/// How a vault is unlocked; recorded in the vault, so a client knows what to ask for.
public enum VaultUnlockMethod: String, Sendable, CaseIterable {
    /// A passphrase alone, stretched with scrypt.
    case passphrase
    /// A key file alone, hashed with SHA-256; no scrypt parameters are recorded.
    case keyFile = "keyfile"
    /// Both: the key is derived from the stretched passphrase and the key file's hash together,
    /// so neither opens the vault without the other.
    case passphraseAndKeyFile = "passphrase+keyfile"

    /// Whether a passphrase is part of it.
    public var needsPassphrase: Bool { self != .keyFile }
    /// Whether a key file is part of it.
    public var needsKeyFile: Bool { self != .passphrase }

    /// Words for messages: "a passphrase and a key file".
    var displayName: String {
        switch self {
        case .passphrase: return "a passphrase"
        case .keyFile: return "a key file"
        case .passphraseAndKeyFile: return "a passphrase and a key file"
        }
    }
}

/// The cost of stretching a vault passphrase with scrypt.
public struct VaultKDFParameters: Sendable, Equatable {
    /// log2 of scrypt's N.
    public var logN: Int
    /// scrypt's block size r (1 to 32).
    public var r: Int
    /// scrypt's parallelism p (1 to 16).
    public var p: Int

    /// N = 2^17, r = 8, p = 1, as for password hashes: about half a second to open a vault.
    public static let `default` = VaultKDFParameters(logN: 17, r: 8, p: 1)

    /// N = 2^`logN`, block size `r` and parallelism `p`; checked against ``PasswordHashAlgorithm``'s
    /// bounds when a vault is created or its credentials are changed.
    public init(logN: Int, r: Int = 8, p: Int = 1) {
        self.logN = logN
        self.r = r
        self.p = p
    }

    var algorithm: PasswordHashAlgorithm { .scrypt(logN: logN, r: r, p: p) }

    /// The text stored in the vault: `scrypt$ln=17,r=8,p=1`.
    var recorded: String { "scrypt$ln=\(logN),r=\(r),p=\(p)" }

    /// Parses ``recorded``; the error is the caller's to word.
    init?(recorded text: String) {
        guard text.hasPrefix("scrypt$") else { return nil }
        let fields = text.dropFirst("scrypt$".count).split(separator: ",")
        var values: [String: Int] = [:]
        for field in fields {
            let pair = field.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, let value = Int(pair[1]) else { return nil }
            values[String(pair[0])] = value
        }
        guard values.count == 3, let logN = values["ln"], let r = values["r"], let p = values["p"] else { return nil }
        self.init(logN: logN, r: r, p: p)
        guard (try? algorithm.validate()) != nil else { return nil }
    }
}
