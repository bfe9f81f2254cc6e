import ArgumentParser
import Foundation
import Logging
import SignetCore
import SignetHTTP
import SignetServer
import SignetTLS

/// Where a server keeps its data: `--data` (the folder) and `--database` (PostgreSQL instead of
/// the folder's SQLite file), whose URL may instead come from `--database-url-file` or
/// `SIGNET_DATABASE_URL`, out of the process list.
struct ServerStorageOptions: ParsableArguments {
    /// The environment variable that may hold the database URL.
    static let databaseURLVariable = "SIGNET_DATABASE_URL"
    /// The longest database URL file read.
    static let maximumURLFileSize = 64 << 10

    @Option(help: ArgumentHelp(
        "The server's data folder: database, key vault, TLS certificate (else $XDG_DATA_HOME/signet/server, else ~/.local/share/signet/server). Only its owner may write it; what the server makes in it is 0600 (folders 0700).",
        valueName: "DIR"))
    var data: String?

    @Option(help: ArgumentHelp(
        "Keep users, sessions, apps, nonces and rate limits in PostgreSQL (postgres://user@host:port/db), shared by every node. A password here is visible to every local user: use --database-url-file or SIGNET_DATABASE_URL.",
        valueName: "URL"))
    var database: String?

    @Option(name: .customLong("database-url-file"), help: ArgumentHelp(
        "Read the --database URL (postgres://user:password@host:port/db) from the first line of FILE, which only its owner may read (chmod 600).",
        valueName: "FILE"))
    var databaseURLFile: String?

    @Option(name: .customLong("vault-key-file"), help: ArgumentHelp(
        "The key file of the data folder's vault (else DIR/server.vault.key, made on first start).", valueName: "FILE"))
    var vaultKeyFile: String?

    func validate() throws {
        if database != nil && databaseURLFile != nil { throw ValidationError("give --database or --database-url-file, not both") }
        if let database, DatabaseLocation(parsing: database).containsPassword {
            // Said as soon as the arguments are read: the password is in the process list already.
            Console.warning(
                "the --database URL holds a password, which every local user can read in the process list (/proc/PID/cmdline); "
                    + "put the URL in a file only you can read and give --database-url-file FILE, or set \(Self.databaseURLVariable)")
        }
    }

    var folder: ServerDataFolder {
        get throws {
            if let data { return ServerDataFolder(path: data, vaultKeyFile: vaultKeyFile) }
            let environment = ProcessInfo.processInfo.environment
            if let base = environment["XDG_DATA_HOME"], base.hasPrefix("/") {
                return ServerDataFolder(path: base + "/signet/server", vaultKeyFile: vaultKeyFile)
            }
            guard let home = environment["HOME"], !home.isEmpty else {
                throw ValidationError("no data folder: pass --data DIR (HOME is not set)")
            }
            return ServerDataFolder(path: home + "/.local/share/signet/server", vaultKeyFile: vaultKeyFile)
        }
    }

    /// Where the database is: `--database`, else the first line of `--database-url-file`, else
    /// `SIGNET_DATABASE_URL`, else the data folder's SQLite file.
    func location(in folder: ServerDataFolder) throws -> DatabaseLocation {
        if let database { return DatabaseLocation(parsing: database) }
        if let databaseURLFile { return DatabaseLocation(parsing: try Self.readURLFile(databaseURLFile)) }
        let environment = ProcessInfo.processInfo.environment
        if let url = environment[Self.databaseURLVariable]?.trimmingCharacters(in: .whitespacesAndNewlines), !url.isEmpty {
            return DatabaseLocation(parsing: url)
        }
        return .sqlite(path: folder.databasePath)
    }

    /// The first line of `path`, trimmed; refused when the file's group or others may read or
    /// write it, since it holds the database's password.
    static func readURLFile(_ path: String) throws -> String {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw SignetCoreError.io(path: path, detail: errno == ENOENT ? "no such file or directory" : String(cString: strerror(errno)))
        }
        try FileAccess.checkPrivate(path, holding: "the database URL with its password")
        var bytes = try FileInput.readAll(path: path, limit: maximumURLFileSize)
        defer { SecretBytes.zero(&bytes) }
        let text = String(decoding: bytes, as: UTF8.self)
        let url = (text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        guard !url.isEmpty else { throw ServerError.configuration(detail: "\(path): the first line is empty; it should hold the database URL") }
        return url
    }

    /// Makes every file this process creates from now on private (umask 077: SQLite's journal
    /// files, uploads, whatever a library makes), then opens the data folder: refuses one that
    /// others may write, narrows what is in it, makes the keys on first start.
    func prepare(_ folder: ServerDataFolder) async throws -> ServerDataFolder.Identity {
        _ = umask(0o077)
        return try await folder.prepare()
    }

    /// Opens the database and brings its schema up to date; HMAC app secrets are sealed with
    /// the data folder's key.
    func openStore(folder: ServerDataFolder, identity: ServerDataFolder.Identity, logger: Logger) async throws -> ServerStore {
        let database = try ServerDatabase(location: location(in: folder), logger: logger)
        let store = ServerStore(database: database, appSecretKey: identity.appSecretKey)
        do {
            try await store.migrate()
        } catch {
            await database.shutdown()
            throw error
        }
        return store
    }
}

/// How an admin command reaches the server: `--server`, the TLS trust (a `--pin` without
/// `--roots` trusts the pinned self-signed certificate that `signet serve` makes), and the
/// admin key that signs.
struct AdminConnectionOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The server, https://HOST:PORT.", valueName: "URL"))
    var server: String

    @Option(name: .customLong("admin-key"), help: ArgumentHelp(
        "The admin's private key: a file, vault:SERVICE/ACCOUNT or a pkcs11: URI.", valueName: "KEY"))
    var adminKey: String

    @OptionGroup var tls: TLSOptions
    @OptionGroup var keyAccess: KeyAccessOptions

    @Option(help: ArgumentHelp("Give up after this many seconds.", valueName: "SECONDS"))
    var timeout: Int64 = 30

    func client() async throws -> AdminClient {
        let policy = try ServerConnection.policy(server: server, tls: tls)
        let signer = try await ServerConnection.httpSigner(adminKey, resolver: keyAccess.resolver)
        return try AdminClient(
            server: server, signer: HTTPMessageSigner(key: .signer(signer)),
            transport: PinnedHTTPSClient(trust: policy, timeout: .seconds(timeout)))
    }
}

/// What the admin and client commands share to reach a server.
enum ServerConnection {
    /// The trust policy for `server`: a pin without `--roots` trusts the server's pinned
    /// self-signed certificate (what `signet serve` makes).
    static func policy(server: String, tls: TLSOptions) throws -> TLSTrustPolicy {
        guard let url = URL(string: server), let host = url.host else {
            throw ValidationError("--server must be an https URL like https://127.0.0.1:8443")
        }
        var policy = try tls.policy(host: host)
        if tls.roots == nil, !tls.pins.isEmpty || tls.pinsFile != nil { policy.mode = .pinnedSelfSigned }
        return policy
    }

    /// The signer of `key` with the RFC 9421 algorithm of its kind (RSA: rsa-pss-sha512).
    static func httpSigner(_ key: String, resolver: KeySourceResolver) async throws -> any Signer {
        let publicKey = try await resolver.publicKey(key)
        return try await resolver.signer(key, algorithm: HTTPSignatureAlgorithms.default(for: publicKey.kind))
    }
}

/// The server's logs: swift-log on standard error at the level asked for.
enum ServerLogging {
    static func logger(level: Logger.Level) -> Logger {
        var logger = Logger(label: "signet.server") { EscapingLogHandler(inner: StreamLogHandler.standardError(label: $0)) }
        logger.logLevel = level
        return logger
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
