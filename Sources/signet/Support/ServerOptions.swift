import ArgumentParser
import Foundation
import Logging
import SignetClient
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
/// `--roots` trusts the pinned self-signed certificate that `signet serve` makes), the admin
/// key that signs, and the server's response key, under which every answer is verified — each
/// from its flag, else from the connection profile (`--profile`, `SIGNET_PROFILE`, the default).
struct AdminConnectionOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The server, https://HOST:PORT.", valueName: "URL"))
    var server: String?

    @Option(name: .customLong("admin-key"), help: ArgumentHelp(
        "The admin's private key: a file, vault:SERVICE/ACCOUNT or a pkcs11: URI.", valueName: "KEY"))
    var adminKey: String?

    @Option(name: .customLong("server-key"), help: ArgumentHelp(
        "The server's response key (the public key file DIR/response-key.pem of its data folder, whose fingerprint `signet serve` prints as response-key): every answer must be signed by it.",
        valueName: "KEY"))
    var serverKey: String?

    @OptionGroup var tls: TLSOptions
    @OptionGroup var profile: ProfileOptions
    @OptionGroup var keyAccess: KeyAccessOptions

    @OptionGroup var timeout: TimeoutOption

    func client() async throws -> AdminClient {
        let requestTimeout = try timeout.duration()
        let connection = try ResolvedConnection.resolve(
            server: server, tls: tls, appKey: nil, serverKey: serverKey, adminKey: adminKey, profile: profile.profile)
        let adminKey = try connection.require(\.adminKey, "--admin-key")
        let serverKey = try connection.require(\.serverKey, "--server-key")
        let policy = try ServerConnection.policy(server: connection.server, trust: connection.trust)
        let signer = try await ServerConnection.httpSigner(adminKey, resolver: keyAccess.resolver)
        let serverPublicKey = try await keyAccess.resolver.publicKey(serverKey)
        return try AdminClient(
            server: connection.server, signer: HTTPMessageSigner(key: .signer(signer)), serverKey: serverPublicKey,
            transport: PinnedHTTPSClient(trust: policy, timeout: requestTimeout))
    }
}

/// `--timeout`: how long a request to the server may take, else `$SIGNET_TIMEOUT`, else 30 s
/// (a sign-in waits for the server's password hashing, which queues on a busy server).
struct TimeoutOption: ParsableArguments {
    static let variable = "SIGNET_TIMEOUT"

    @Option(help: ArgumentHelp("Give up on a request after this many seconds (default: $SIGNET_TIMEOUT, else 30).", valueName: "SECONDS"))
    var timeout: Int64?

    func duration() throws -> Duration {
        if let timeout {
            guard timeout > 0 else { throw ValidationError("--timeout \(timeout): give a number of seconds above 0") }
            return .seconds(timeout)
        }
        guard let text = ProcessInfo.processInfo.environment[Self.variable], !text.isEmpty else { return .seconds(30) }
        guard let seconds = Int64(text), seconds > 0 else {
            throw ValidationError("$\(Self.variable) is \"\(PrintableText.escaped(text, limit: 40))\"; give a number of seconds above 0")
        }
        return .seconds(seconds)
    }
}

/// `--profile`: which stored connection a client or admin command uses.
struct ProfileOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Use the stored connection NAME (`signet client profile add`); without it and without --server, $SIGNET_PROFILE or else the default profile. Flags given override its values.",
        valueName: "NAME"))
    var profile: String?
}

/// A command's connection: each of its flags, else the selected profile's value.
struct ResolvedConnection {
    var server: String
    var trust: TLSTrust
    var appKey: String?
    var serverKey: String?
    var adminKey: String?
    /// The profile used, if any.
    var profileName: String?

    /// The flags over the profile named by `profile` (else `SIGNET_PROFILE`, else the default
    /// profile when no `server` is given). TLS flags replace the profile's trust as a whole.
    static func resolve(
        server: String?, tls: TLSOptions, appKey: String?, serverKey: String?, adminKey: String?, profile: String?
    ) throws -> ResolvedConnection {
        let selected = try ProfileStore.standard().select(profile, useDefault: server == nil)
        let stored = selected?.profile
        guard let server = server ?? stored?.server else {
            throw ValidationError("give --server URL (and its trust and keys), or --profile NAME: store one with `signet client profile add`")
        }
        var trust = tls.trust
        if trust.isEmpty, let stored {
            trust = TLSTrust(roots: stored.roots, pins: stored.pins ?? [], pinsFile: stored.pinsFile)
        }
        return ResolvedConnection(
            server: server, trust: trust, appKey: appKey ?? stored?.appKey, serverKey: serverKey ?? stored?.serverKey,
            adminKey: adminKey ?? stored?.adminKey, profileName: selected?.name)
    }

    /// A value the command cannot do without.
    func require(_ field: KeyPath<ResolvedConnection, String?>, _ option: String) throws -> String {
        guard let value = self[keyPath: field] else {
            let source = profileName.map { "; the profile \($0) has none" } ?? ""
            throw ValidationError("give \(option)\(source)")
        }
        return value
    }
}

/// What the admin and client commands share to reach a server.
enum ServerConnection {
    /// The trust policy for `server`: a pin without `--roots` trusts the server's pinned
    /// self-signed certificate (what `signet serve` makes).
    static func policy(server: String, trust: TLSTrust) throws -> TLSTrustPolicy {
        guard let url = URL(string: server), let host = url.host else {
            throw ValidationError("--server must be an https URL like https://127.0.0.1:8443")
        }
        var policy = try trust.policy(host: host)
        if trust.roots == nil, !trust.pins.isEmpty || trust.pinsFile != nil { policy.mode = .pinnedSelfSigned }
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
