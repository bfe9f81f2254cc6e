import Crypto
import Foundation
import SignetBundle
import SignetCore
import SignetVault
import SignetX509
import X509

/// The embedded server's data folder: the SQLite database, a vault holding the server's keys
/// (unlocked by a key file beside it), and a self-signed TLS certificate for `localhost`,
/// 127.0.0.1 and ::1, all made on first start.
///
/// ```
/// DIR/                       0700, like every folder in it; every file in it is 0600
/// DIR/signet.sqlite          users, sessions, apps, nonces (unless the database is PostgreSQL)
/// DIR/server.vault           the response-signing key (Ed25519), the TLS key and a backup (P-256),
///                            the key that seals HMAC app secrets in the database
/// DIR/server.vault.key       the vault's key file
/// DIR/tls-certificate.pem    the self-signed certificate; its key's pin is printed for clients
/// DIR/response-key.pem       the public key that signs responses, for clients to check them
/// DIR/trust.json             the resource trust root (current when the server started), for apps to ship
/// DIR/work/                  uploads being published, one folder per running server (``openWorkFolder()``)
/// ```
///
/// The folder is refused when its group or others may write it, or when it belongs to another
/// user than the server's (or root); what is in it is narrowed to its owner at every start
/// (``prepare()``). The public files (certificate, response key, trust root) are 0600 too:
/// inside a 0700 folder a wider mode would give nobody anything, and one rule is easier to check.
///
/// The vault keeps keys out of plain files and out of the database; it is only as safe as the
/// key file, so a deployment puts that on other storage (`signet serve --vault-key-file`) or gives a
/// real certificate and a token key instead.
public struct ServerDataFolder: Sendable {
    /// The folder.
    public let path: String
    /// The vault's key file; by default inside the folder.
    package let vaultKeyFile: String

    /// The vault item names of the server's keys.
    package static let vaultService = "signet-server"
    package static let responseKeyAccount = "response-signing"
    package static let tlsKeyAccount = "tls"
    /// A second TLS key, not in use: its pin is the backup every client pins too (RFC 7469
    /// §4.3), so the server can move to it without locking clients out.
    package static let tlsBackupKeyAccount = "tls-backup"
    /// The 256-bit key that seals HMAC app secrets in the database (``ServerStore``): nodes
    /// sharing a database share it by sharing the folder.
    package static let appSecretKeyAccount = "app-secret-key"

    public init(path: String, vaultKeyFile: String? = nil) {
        self.path = path
        self.vaultKeyFile = vaultKeyFile ?? path + "/server.vault.key"
    }

    public var databasePath: String { path + "/signet.sqlite" }
    package var vaultPath: String { path + "/server.vault" }
    package var certificatePath: String { path + "/tls-certificate.pem" }
    /// The response-signing key's public half, for clients that check responses.
    public var responseKeyPath: String { path + "/response-key.pem" }
    /// The trust root resources are verified against, for apps to ship with.
    public var trustRootPath: String { path + "/trust.json" }

    /// Writes `root` to ``trustRootPath`` (atomically, when it changed).
    public func writeTrustRoot(_ root: TrustRoot) throws {
        guard (try? FileInput.readAll(path: trustRootPath, limit: 1 << 20)) != root.fileBytes else { return }
        do {
            try AtomicFile.write(root.fileBytes, to: trustRootPath, permissions: .privateToOwner, overwrite: true)
        } catch {
            throw ServerError.configuration(detail: "\(trustRootPath): \(error)")
        }
    }

    /// What the server runs with: its response-signing key and its TLS identity.
    public struct Identity: Sendable {
        public var responseSigner: SoftwareSigner
        public var tlsKey: PrivateKey
        public var certificate: Certificate
        /// The backup TLS key's public half.
        package var backupTLSKey: PublicKey
        /// The pin clients give: the fingerprint of the certificate's key.
        public var pin: KeyFingerprint { tlsKey.publicKey.fingerprint }
        /// The pin of the backup key, which clients give as well.
        public var backupPin: KeyFingerprint { backupTLSKey.fingerprint }
        /// Whether this start created the keys and certificate.
        package var created: Bool
        /// The key that seals HMAC app secrets in the database (``ServerStore/init(database:appSecretKey:clock:)``).
        public var appSecretKey: SymmetricKey
    }

    /// Opens the folder, creating what is missing (under a lock, so nodes sharing a folder
    /// agree on one set of keys). A folder that others may write or another user owns is
    /// refused (``checkAccess()``); the folder and what is directly in it are narrowed to 0700
    /// and 0600 (``restrictAccess()``).
    public func prepare() async throws -> Identity {
        try checkAccess()
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw ServerError.configuration(detail: "\(path): cannot create the data folder: \(error.localizedDescription)")
        }
        try restrictAccess()
        let lock = try acquireLock()
        defer { close(lock) }
        do {
            return try await prepareLocked()
        } catch let error as ServerError {
            throw error
        } catch {
            throw ServerError.configuration(detail: "\(path): \(error)")
        }
    }

    private func prepareLocked() async throws -> Identity {
        var created = false
        if !AtomicFile.exists(vaultKeyFile) {
            guard !AtomicFile.exists(vaultPath) else {
                throw ServerError.configuration(detail: "\(vaultKeyFile): missing, and the vault \(vaultPath) cannot be opened without it")
            }
            try AtomicFile.write(RandomBytes.make(32), to: vaultKeyFile, permissions: .privateToOwner, overwrite: false)
        }
        let keyFile = SecretBytes(try FileInput.readAll(path: vaultKeyFile, limit: VaultCredentials.maximumKeyFileLength))
        let credentials = VaultCredentials(keyFile: keyFile)
        let vault: Vault
        if AtomicFile.exists(vaultPath) {
            vault = try await Vault.open(path: vaultPath, credentials: credentials)
        } else {
            vault = try await Vault.create(at: vaultPath, credentials: credentials, kdf: VaultKDFParameters(logN: 14))
            created = true
        }
        let responseKey = try await key(in: vault, account: Self.responseKeyAccount, type: .ed25519)
        let tlsKey = try await key(in: vault, account: Self.tlsKeyAccount, type: .p256)
        let backupKey = try await key(in: vault, account: Self.tlsBackupKeyAccount, type: .p256)
        let appSecretKey = try await symmetricKey(in: vault, account: Self.appSecretKeyAccount)
        let certificate: Certificate
        if AtomicFile.exists(certificatePath), let existing = try X509Files.readCertificates(path: certificatePath).first,
           existing.publicKey == (try SignerPrivateKey(SoftwareSigner(key: tlsKey))).publicKey,
           existing.notValidAfter > Date().addingTimeInterval(7 * 86400) {
            certificate = existing
        } else {
            certificate = try await CertificateFactory.selfSigned(
                signer: SoftwareSigner(key: tlsKey), subject: try SubjectParsing.distinguishedName("CN=localhost,O=Signet server"),
                alternativeNames: try SubjectParsing.alternativeNames("DNS:localhost,IP:127.0.0.1,IP:::1"), days: 397)
            try AtomicFile.write(try X509Files.encodePEM([certificate]), to: certificatePath, permissions: .privateToOwner, overwrite: true)
            created = true
        }
        let responsePEM = try responseKey.publicKey.encoded(as: .pem)
        if (try? FileInput.readAll(path: responseKeyPath, limit: 1 << 16)) != responsePEM {
            try AtomicFile.write(responsePEM, to: responseKeyPath, permissions: .privateToOwner, overwrite: true)
        }
        return Identity(
            responseSigner: try SoftwareSigner(key: responseKey), tlsKey: tlsKey, certificate: certificate, backupTLSKey: backupKey.publicKey,
            created: created, appSecretKey: appSecretKey)
    }

    private func key(in vault: Vault, account: String, type: KeyGenerationType) async throws -> PrivateKey {
        if (try? await vault.item(service: Self.vaultService, account: account)) != nil {
            return try await vault.privateKey(service: Self.vaultService, account: account)
        }
        let key = try PrivateKey.generate(type)
        try await vault.setPrivateKey(key, service: Self.vaultService, account: account)
        return key
    }

    /// The 256-bit key stored as the secret of `account`, made when missing.
    private func symmetricKey(in vault: Vault, account: String) async throws -> SymmetricKey {
        if (try? await vault.item(service: Self.vaultService, account: account)) != nil {
            let secret = try await vault.secret(service: Self.vaultService, account: account)
            guard secret.count == 32 else {
                throw ServerError.configuration(detail: "\(vaultPath): \(Self.vaultService)/\(account) holds \(secret.count) bytes, not a 32-byte key")
            }
            var bytes = secret.bytes
            defer { SecretBytes.zero(&bytes) }
            return SymmetricKey(data: bytes)
        }
        let key = SymmetricKey(size: .bits256)
        try await vault.add(key.withUnsafeBytes { SecretBytes($0) }, service: Self.vaultService, account: account)
        return key
    }
}
