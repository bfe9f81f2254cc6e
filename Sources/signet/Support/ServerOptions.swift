import ArgumentParser
import Foundation
import Logging
import SignetCore
import SignetHTTP
import SignetServer
import SignetTLS

/// Where a server keeps its data: `--data` (the folder) and `--database` (PostgreSQL instead of
/// the folder's SQLite file).
struct ServerStorageOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The server's data folder: database, key vault, TLS certificate (else $XDG_DATA_HOME/signet/server, else ~/.local/share/signet/server).",
        valueName: "DIR"))
    var data: String?

    @Option(help: ArgumentHelp(
        "Keep users, sessions, apps, nonces and rate limits in PostgreSQL (postgres://user:password@host:port/db), shared by every node.",
        valueName: "URL"))
    var database: String?

    @Option(name: .customLong("vault-key-file"), help: ArgumentHelp(
        "The key file of the data folder's vault (else DIR/server.vault.key, made on first start).", valueName: "FILE"))
    var vaultKeyFile: String?

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

    func location(in folder: ServerDataFolder) -> DatabaseLocation {
        database.map(DatabaseLocation.init(parsing:)) ?? .sqlite(path: folder.databasePath)
    }

    /// Opens the database and brings its schema up to date.
    func openStore(folder: ServerDataFolder, logger: Logger) async throws -> ServerStore {
        let database = try ServerDatabase(location: location(in: folder), logger: logger)
        let store = ServerStore(database: database)
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
        var logger = Logger(label: "signet.server") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = level
        return logger
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
