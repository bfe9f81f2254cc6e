import Crypto
import Foundation
import SignetCore

/// An encrypted store of secrets in one SQLite file: a keychain for Linux.
///
/// Items are keyed by service and account, as in the Apple keychain and the wrappers around
/// it (SSKeychain's set password / password for service and account / delete / all accounts /
/// accounts for a service). Each secret, and each item's label, comment and attributes, is
/// sealed with AES-256-GCM under a random vault key bound to the item's service, account and
/// kind, so a sealed value cannot be moved to another row unnoticed. The vault key is wrapped
/// under a key derived with scrypt from a passphrase, from a key file, or from both.
///
/// ```swift
/// let vault = try await Vault.create(at: path, credentials: VaultCredentials(passphrase: pass))
/// try await vault.set(SecretBytes(Array("s3cret".utf8)), service: "api.example.com", account: "bot")
/// let secret = try await vault.secret(service: "api.example.com", account: "bot")
/// ```
///
/// Every write is one SQLite transaction in write-ahead-log mode with full sync: once a call
/// returns, the change survives `kill -9` and power loss. Several processes may use one vault
/// at once; a writer waits up to 10 seconds for another's transaction.
///
/// Service, account, kind and dates are stored in the clear (a locked vault can be listed);
/// secrets, labels, comments and attributes are not. docs/formats/vault.md has the details.
public actor Vault {
    /// The vault file.
    public nonisolated let path: String
    private let database: VaultDatabase
    private var header: VaultHeader
    /// The vault key's cipher while unlocked.
    private var cipher: VaultCipher?
    private nonisolated let executor = VaultExecutor()

    /// The vault's own serial queue: its SQLite calls and scrypt never block Swift's
    /// cooperative threads.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    // MARK: Opening and creating

    /// Opens the vault at `path`, locked: it can be listed, but secrets need ``unlock(_:)``.
    ///
    /// Reads the file on the calling thread; from async code prefer ``open(path:)``.
    public init(path: String) throws {
        self.path = path
        database = try VaultDatabase(opening: path)
        header = try database.header()
    }

    /// Opens the vault at `path` and unlocks it.
    ///
    /// Derives the key (scrypt) on the calling thread; from async code prefer
    /// ``open(path:credentials:)``, which does not block a cooperative thread.
    public init(path: String, credentials: VaultCredentials) throws {
        try self.init(path: path, credentials: credentials, busyTimeout: VaultDatabase.busyTimeout)
    }

    /// ``init(path:credentials:)`` waiting at most `busyTimeout` for another process's write lock.
    package init(path: String, credentials: VaultCredentials, busyTimeout: Duration) throws {
        self.path = path
        database = try VaultDatabase(opening: path)
        database.setBusyTimeout(busyTimeout)
        let header = try database.header()
        self.header = header
        cipher = try Self.unwrap(header: header, credentials: credentials, path: path)
    }

    /// Opens the vault at `path`, locked, off the cooperative threads.
    public static func open(path: String) async throws -> Vault {
        try await VaultExecutor.run { () throws in try Vault(path: path) }
    }

    /// Opens the vault at `path` and unlocks it, reading the file and deriving the key off the
    /// cooperative threads.
    public static func open(path: String, credentials: VaultCredentials) async throws -> Vault {
        try await VaultExecutor.run { () throws in try Vault(path: path, credentials: credentials) }
    }

    /// Creates a new, empty vault at `path` (mode 0600) and returns it unlocked.
    ///
    /// Fails with ``VaultError/vaultExists(path:)``, leaving the file alone, when anything
    /// exists at `path`. Derives the key (scrypt) on the calling thread; from async code
    /// the `async` overload of this method does it off the cooperative threads.
    public static func create(
        at path: String, credentials: VaultCredentials, kdf: VaultKDFParameters = .default
    ) throws -> Vault {
        try makeVault(at: path, credentials: credentials, kdf: kdf)
    }

    /// Creates a new, empty vault at `path` (mode 0600) off the cooperative threads and returns
    /// it unlocked; fails with ``VaultError/vaultExists(path:)`` when anything exists at `path`.
    public static func create(
        at path: String, credentials: VaultCredentials, kdf: VaultKDFParameters = .default
    ) async throws -> Vault {
        try await VaultExecutor.run { () throws in try makeVault(at: path, credentials: credentials, kdf: kdf) }
    }

    private static func makeVault(at path: String, credentials: VaultCredentials, kdf: VaultKDFParameters) throws -> Vault {
        let header = try makeHeader(vaultKey: VaultCipher.newKey().withUnsafeBytes { SecretBytes($0) }, credentials: credentials, kdf: kdf)
        try VaultDatabase.create(at: path, header: header.header)
        return try Vault(path: path, credentials: credentials)
    }

    /// What `path`'s vault needs to be unlocked, read without unlocking it.
    public static func unlockMethod(at path: String) throws -> VaultUnlockMethod {
        try VaultDatabase(opening: path).header().method
    }

    /// What this vault needs to be unlocked.
    public var unlockMethod: VaultUnlockMethod { header.method }

    // MARK: Locking

    /// Whether secrets are out of reach until ``unlock(_:)``.
    public var isLocked: Bool { cipher == nil }

    /// Unlocks the vault; throws ``VaultError/wrongPassphrase(path:)`` for wrong credentials.
    public func unlock(_ credentials: VaultCredentials) throws {
        header = try database.header()
        cipher = try Self.unwrap(header: header, credentials: credentials, path: path)
    }

    /// Forgets the vault key (its memory is cleared by swift-crypto); listing still works.
    public func lock() {
        cipher = nil
    }

    /// Replaces the passphrase and/or key file. Only the vault key's wrapping changes (one
    /// small write); the items are not re-encrypted. The vault must be unlocked.
    public func changeCredentials(to credentials: VaultCredentials, kdf: VaultKDFParameters = .default) throws {
        let cipher = try unlocked()
        let made = try Self.makeHeader(vaultKey: cipher.keyBytes, credentials: credentials, kdf: kdf)
        try database.write {
            try database.connection.query(
                "UPDATE vault SET unlock = ?, kdf = ?, salt = ?, wrapped_key = ? WHERE id = 1",
                [.text(made.header.method.rawValue), .text(made.header.kdf), .blob(made.header.salt), .blob(made.header.wrappedKey)])
        }
        header = made.header
    }

    // MARK: Internals shared with the item operations

    /// The cipher, or ``VaultError/locked(path:)``.
    func unlocked() throws -> VaultCipher {
        guard let cipher else { throw VaultError.locked(path: path) }
        return cipher
    }

    var db: VaultDatabase { database }

    private static func makeHeader(
        vaultKey: SecretBytes, credentials: VaultCredentials, kdf: VaultKDFParameters
    ) throws -> (header: VaultHeader, key: SecretBytes) {
        let method = try credentials.method()
        do {
            try kdf.algorithm.validate()
        } catch {
            throw VaultError.invalidArgument(detail: "\(error)")
        }
        let salt = RandomBytes.make(32)
        let kdfText = method.needsPassphrase ? kdf.recorded : "none"
        let kek = try VaultCipher.keyEncryptionKey(
            credentials: credentials, method: method, kdf: method.needsPassphrase ? kdf : nil, salt: salt)
        let wrapped = try VaultCipher(key: kek).seal(vaultKey, context: VaultCipher.wrapContext(method: method, kdf: kdfText))
        return (VaultHeader(method: method, kdf: kdfText, salt: salt, wrappedKey: wrapped), vaultKey)
    }

    private static func unwrap(header: VaultHeader, credentials: VaultCredentials, path: String) throws -> VaultCipher {
        let method = header.method
        if method.needsPassphrase, credentials.passphrase == nil {
            throw VaultError.credentialsRequired(path: path, detail: "this vault is unlocked with \(method.displayName); no passphrase was given")
        }
        if method.needsKeyFile, credentials.keyFile == nil {
            throw VaultError.credentialsRequired(path: path, detail: "this vault is unlocked with \(method.displayName); no key file was given")
        }
        if !method.needsKeyFile, credentials.keyFile != nil {
            throw VaultError.credentialsRequired(path: path, detail: "this vault uses no key file, but one was given")
        }
        if !method.needsPassphrase, credentials.passphrase != nil {
            throw VaultError.credentialsRequired(path: path, detail: "this vault uses no passphrase (only a key file), but one was given")
        }
        let used = VaultCredentials(
            passphrase: method.needsPassphrase ? credentials.passphrase : nil,
            keyFile: method.needsKeyFile ? credentials.keyFile : nil)
        if method.needsPassphrase, used.passphrase?.isEmpty == true {
            throw VaultError.wrongPassphrase(path: path)
        }
        let kek = try VaultCipher.keyEncryptionKey(credentials: used, method: method, kdf: header.kdfParameters, salt: header.salt)
        guard let key = VaultCipher(key: kek).open(header.wrappedKey, context: VaultCipher.wrapContext(method: method, kdf: header.kdf)),
            key.count == 32
        else {
            throw VaultError.wrongPassphrase(path: path)
        }
        return key.withUnsafeBytes { VaultCipher(key: SymmetricKey(data: $0)) }
    }
}
