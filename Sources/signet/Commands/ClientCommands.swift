import SignetAPI
import ArgumentParser
import Foundation
import SignetBundle
import SignetClient
import SignetCore
import SignetHTTP
import SignetServer
import SignetVault

/// `signet client …`: the app side of a Signet server, over `SignetClient`, for scripts and for
/// trying it out. The session token is kept in the vault (service = the server's host:port,
/// account = the e-mail address), never in a file.
struct ClientCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "client",
        abstract: "Be an app of a Signet server: enrol a key, register, sign in and out, read the profile, fetch resources.",
        discussion: """
        Every command but enrol takes --server https://HOST:PORT, the server's pins (--pin, as \
        `signet serve` prints them; without --roots a pin trusts the server's self-signed \
        certificate), --app-key (the enrolled app's key: file, vault: or pkcs11:) and, to check \
        every answer's signature, --server-key (the server's response-key.pem) — or --profile \
        NAME, a connection stored with `signet client profile add` ($SIGNET_PROFILE, or the \
        default profile, when neither --profile nor --server is given). The session lives in \
        the vault (--vault, $SIGNET_VAULT or the default; `signet vault init` makes one).
        Exit 1 when the server refuses or a check fails (a pin, a response signature), 4 when \
        it cannot be reached.
        """,
        subcommands: [Enrol.self, Register.self, SignIn.self, SignOut.self, Me.self, Fetch.self, ProfileCommand.self])

    struct Enrol: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make an app key in the vault and print its public key for the server's admin.")
        @Argument(help: "The app's name (the vault item signet-app/NAME).") var name: String
        @OptionGroup var keyAccess: KeyAccessOptions

        func run() async throws {
            try AdminAPI.checkName(name)
            let vault = try await VaultAccess(explicitPath: keyAccess.vault, passphraseFile: keyAccess.passphraseFile, keyFile: nil).openUnlocked()
            let key = try PrivateKey.generate(.ed25519)
            try await vault.setPrivateKey(key, service: "signet-app", account: name)
            Console.write(String(decoding: try key.publicKey.encoded(as: .pem), as: UTF8.self))
            Console.note(
                "the key is vault:signet-app/\(name) (\(key.publicKey.fingerprint)); the admin enrols it with: "
                    + "signet server app add \(name) --key PUBLIC.pem --profile ADMIN (or --server … --pin … --admin-key … --server-key …)", quiet: false)
        }
    }

    struct Register: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Register a user; the password comes from --password-file, standard input or a prompt.")
        @Option(help: ArgumentHelp("The user's e-mail address.", valueName: "EMAIL")) var email: String
        @Option(name: .customLong("display-name"), help: ArgumentHelp("The name shown.", valueName: "NAME")) var displayName: String
        @Option(name: .customLong("password-file"), help: ArgumentHelp("Read the password from F.", valueName: "F")) var passwordFile: String?
        @OptionGroup var connection: ClientConnectionOptions

        func run() async throws {
            let password = try SecretInput.read(file: passwordFile, what: "password", confirm: true)
            let profile = try await connection.client().register(email: email, password: password.utf8String, displayName: displayName)
            try ClientOutput.print(profile)
        }
    }

    struct SignIn: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "signin", abstract: "Sign in; the session token goes to the vault.")
        @Option(help: ArgumentHelp("The user's e-mail address.", valueName: "EMAIL")) var email: String
        @Option(name: .customLong("password-file"), help: ArgumentHelp("Read the password from F.", valueName: "F")) var passwordFile: String?
        @OptionGroup var connection: ClientConnectionOptions

        func run() async throws {
            let password = try SecretInput.read(file: passwordFile, what: "password", confirm: false)
            let profile = try await connection.client().signIn(email: email, password: password.utf8String)
            Console.note("signed in as \(profile.email)", quiet: false)
        }
    }

    struct SignOut: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "signout", abstract: "Sign out and forget the session.")
        @OptionGroup var connection: ClientConnectionOptions
        func run() async throws { try await connection.client().signOut() }
    }

    struct Me: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the signed-in user's profile (JSON).")
        @OptionGroup var connection: ClientConnectionOptions
        func run() async throws { try ClientOutput.print(try await connection.client().me()) }
    }
}

extension ClientCommand {
    struct Fetch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Download, verify and extract the newest version of a resource into DEST.",
            discussion: """
            The bundle must be signed by the trust root (--trust: the trust.json the server's data \
            folder holds, shipped with the app) or a later root it signed, which the client walks \
            to; an older version than the one accepted before, an expired or tampered one is \
            refused (exit 1) and DEST keeps what it had. --state keeps the accepted versions, the \
            newest trust root and partial downloads (resumed on the next run). Prints NAME, the \
            version in place, and "updated" or "unchanged".
            """)
        @Argument(help: "The resource's name.") var name: String
        @Argument(help: "The folder to extract into (missing, empty, or an earlier extraction).") var destination: String
        @Option(help: ArgumentHelp("The trust root the app ships with.", valueName: "FILE")) var trust: String
        @Option(help: ArgumentHelp(
            "Where accepted versions, the newest trust root and partial downloads are kept (default $XDG_STATE_HOME/signet/client/HOST_PORT).",
            valueName: "DIR"))
        var state: String?
        @OptionGroup var connection: ClientConnectionOptions

        func run() async throws {
            let root = try TrustRoot.load(path: trust)
            let resolved = try connection.resolved()
            let client = try await connection.client(
                trustRoot: root, resourceState: state ?? ClientConnectionOptions.defaultStateFolder(server: resolved.server), withSession: false,
                resolved: resolved)
            let fetched = try await client.fetchResource(name, into: destination)
            Console.write("\(PrintableText.terminalSafe(fetched.name))\t\(fetched.version)\t\(fetched.updated ? "updated" : "unchanged")\n")
        }
    }
}

/// What every `signet client` command but enrol and profile takes: each from its flag, else
/// from the connection profile (`--profile`, `SIGNET_PROFILE`, the default).
struct ClientConnectionOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The server, https://HOST:PORT.", valueName: "URL"))
    var server: String?

    @Option(name: .customLong("app-key"), help: ArgumentHelp("The app's private key: a file, vault:SERVICE/ACCOUNT or a pkcs11: URI.", valueName: "KEY"))
    var appKey: String?

    @Option(name: .customLong("server-key"), help: ArgumentHelp(
        "The server's response-signing public key (DIR/response-key.pem): every answer must be signed by it.", valueName: "PUB"))
    var serverKey: String?

    @OptionGroup var tls: TLSOptions
    @OptionGroup var profile: ProfileOptions
    @OptionGroup var timeout: TimeoutOption
    @OptionGroup var keyAccess: KeyAccessOptions

    /// The flags over the profile.
    func resolved() throws -> ResolvedConnection {
        try ResolvedConnection.resolve(server: server, tls: tls, appKey: appKey, serverKey: serverKey, adminKey: nil, profile: profile.profile)
    }

    /// The client; `withSession` false keeps no session (fetching resources needs none, nor a
    /// vault). `resourceState` nil: the default state folder for the server.
    func client(
        trustRoot: TrustRoot? = nil, resourceState: String? = nil, withSession: Bool = true, resolved given: ResolvedConnection? = nil
    ) async throws -> SignetClient {
        let requestTimeout = try timeout.duration()
        let connection = try given ?? resolved()
        let policy = try ServerConnection.policy(server: connection.server, trust: connection.trust)
        let resolver = keyAccess.resolver
        let signer = try await ServerConnection.httpSigner(try connection.require(\.appKey, "--app-key"), resolver: resolver)
        var serverPublicKey: PublicKey?
        if let serverKey = connection.serverKey { serverPublicKey = try await resolver.publicKey(serverKey) }
        let sessions: any SessionStore
        if withSession {
            sessions = VaultSessionStore(vault: try await VaultAccess(explicitPath: keyAccess.vault, passphraseFile: keyAccess.passphraseFile, keyFile: nil).openUnlocked())
        } else {
            sessions = InMemorySessionStore()
        }
        return try SignetClient(
            configuration: ClientConfiguration(
                server: connection.server, appSigner: signer, serverKey: serverPublicKey, trustRoot: trustRoot, resourceState: resourceState),
            transport: PinnedTransport(trust: policy, timeout: requestTimeout), sessions: sessions)
    }
}

extension ClientConnectionOptions {
    /// `$XDG_STATE_HOME/signet/client/HOST_PORT` (`~/.local/state` when unset).
    static func defaultStateFolder(server: String) -> String {
        let environment = ProcessInfo.processInfo.environment
        let base = environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/state"
        let host = URL(string: server).map { url in "\(url.host ?? "server")_\(url.port ?? 443)" } ?? "server"
        return base + "/signet/client/" + host.replacingOccurrences(of: "/", with: "_")
    }
}

enum ClientOutput {
    static func print(_ profile: UserProfile) throws { Console.write(try Console.json(profile) + "\n") }
}

extension SecretBytes {
    /// The bytes as UTF-8 text (a password read from a file or prompt).
    var utf8String: String { withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
}
