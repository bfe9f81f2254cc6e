import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle
import SignetBundle
import SignetCore
import SignetHTTP
import SignetServer
import SignetX509

/// `signet serve`: the backend, in the foreground until SIGINT or SIGTERM.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the Signet server: app allow-list, signed-request API, users and sessions.",
        discussion: """
        With no options it keeps everything in one data folder: an SQLite database, a vault with \
        the server's keys, and a self-signed TLS certificate for localhost, whose pin it prints \
        for clients. --database postgres://… shares users, sessions, apps and the replay cache \
        between nodes (give the nodes the same --data folder, shared or copied after the first \
        start: its vault holds the keys, including the one that seals HMAC app secrets). Add the first admin with `signet server init`.
        On start it prints, on standard output: url, pin (the TLS key), backup-pin (a second key \
        kept for rotation: clients pin both), response-key (what signs responses) and trust-root \
        (the file apps ship to verify resources: by default a root holding the signing key, \
        which also signs the resources published as tars; --trust-root gives an offline one). Stops cleanly on SIGINT or SIGTERM.
        """)

    @Option(help: ArgumentHelp("The address to listen on.", valueName: "HOST"))
    var hostname = "127.0.0.1"

    @Option(help: ArgumentHelp("The port; 0 picks a free one.", valueName: "PORT"))
    var port = 8443

    @OptionGroup var storage: ServerStorageOptions

    @Option(name: .customLong("tls-cert"), help: ArgumentHelp("The certificate chain to serve (PEM, leaf first).", valueName: "FILE"))
    var tlsCertificate: String?

    @Option(name: .customLong("tls-key"), help: ArgumentHelp("The private key of --tls-cert.", valueName: "KEY"))
    var tlsKey: String?

    @Flag(name: .customLong("plain-http"), help: "Serve plain HTTP, for running behind a TLS-terminating proxy.")
    var plainHTTP = false

    @Option(name: .customLong("signing-key"), help: ArgumentHelp(
        "The key that signs responses: a file, vault:SERVICE/ACCOUNT or pkcs11: URI (else the data folder's).", valueName: "KEY"))
    var signingKey: String?

    @Option(name: .customLong("trust-root"), help: ArgumentHelp(
        "The trust root resources are verified against, on first start (else one holding the signing key alone).", valueName: "FILE"))
    var trustRoot: String?

    @Option(name: .customLong("public-url"), help: ArgumentHelp(
        "The URL clients use and sign, when a proxy stands in front (https://api.example.com).", valueName: "URL"))
    var publicURL: String?

    @Option(name: .customLong("metrics-port"), help: ArgumentHelp(
        "Serve Prometheus metrics on GET /metrics at this port (plain HTTP, no authentication; 0 picks a free one).",
        valueName: "PORT"))
    var metricsPort: Int?

    @Option(name: .customLong("metrics-host"), help: ArgumentHelp(
        "The address of the metrics listener: loopback by default; a private interface at most, never the internet.", valueName: "HOST"))
    var metricsHost = "127.0.0.1"

    @Option(name: .customLong("log-level"), help: ArgumentHelp("trace, debug, info, notice, warning, error or critical.", valueName: "LEVEL"))
    var logLevel: Logger.Level = .info

    @Option(name: .customLong("scrypt-log-n"), help: ArgumentHelp(
        "scrypt's cost for new password hashes, log2 N with r=8, p=1 (16 = 64 MiB, 17 = 128 MiB).", valueName: "N"))
    var scryptLogN = 17

    @OptionGroup(title: "Limits") var limitOptions: ServerLimitOptions

    @OptionGroup(title: "Device attestation") var attestationOptions: AttestationTrustOptions

    @OptionGroup var keyAccess: KeyAccessOptions

    func validate() throws {
        guard (14...20).contains(scryptLogN) else { throw ValidationError("--scrypt-log-n must be 14 to 20") }
        if (tlsCertificate == nil) != (tlsKey == nil) { throw ValidationError("give --tls-cert and --tls-key together") }
        if plainHTTP && tlsCertificate != nil { throw ValidationError("--plain-http serves no TLS; drop --tls-cert and --tls-key") }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0 to 65535") }
        if let metricsPort, !(0...65535).contains(metricsPort) { throw ValidationError("--metrics-port must be 0 to 65535") }
        if metricsPort == nil, metricsHost != "127.0.0.1" { throw ValidationError("--metrics-host needs --metrics-port") }
    }

    func run() async throws {
        let logger = ServerLogging.logger(level: logLevel)
        let folder = try storage.folder
        let identity = try await storage.prepare(folder)
        var configuration = ServerConfiguration()
        configuration.workFolder = try folder.openWorkFolder()
        configuration.hostname = hostname
        configuration.port = port
        configuration.passwordHasher = PasswordHasher(algorithm: .scrypt(logN: scryptLogN, r: 8, p: 1))
        configuration.limits = try limitOptions.limits()
        configuration.trustedProxies = try limitOptions.proxies()
        guard limitOptions.signInsPerAccount >= 1 else { throw ValidationError("--sign-ins-per-account must be at least 1") }
        configuration.signInsPerAccount = limitOptions.signInsPerAccount
        try attestationOptions.apply(to: &configuration)
        let openFiles = ServerLimitOptions.raiseOpenFileLimit()
        if openFiles > 0, openFiles < UInt64(configuration.limits.maximumConnections) + 64 {
            logger.warning("the open-file limit is below --max-connections: connections past it fail to be accepted", metadata: [
                "open-files": "\(openFiles)", "max-connections": "\(configuration.limits.maximumConnections)",
            ])
        }
        if let publicURL {
            guard let url = URL(string: publicURL), let scheme = url.scheme, let host = url.host else {
                throw ValidationError("--public-url must be a URL like https://api.example.com")
            }
            configuration.publicScheme = scheme
            guard url.path.isEmpty || url.path == "/", url.query == nil else {
                throw ValidationError("--public-url takes a scheme and host (and port), no path")
            }
            let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
            configuration.publicAuthority = url.port.map { "\(bracketed):\($0)" } ?? bracketed
        }
        let resolver = keyAccess.resolver
        var responseSigner: any Signer = identity.responseSigner
        if let signingKey { responseSigner = try await ServerConnection.httpSigner(signingKey, resolver: resolver) }
        var tls: SignetServer.TLSIdentity?
        var pin = identity.pin
        if let tlsCertificate, let tlsKey {
            let chain = try X509Files.readCertificates(path: tlsCertificate)
            let key = try resolver.privateKey(path: tlsKey)
            tls = SignetServer.TLSIdentity(certificateChain: chain, privateKey: key)
            pin = key.publicKey.fingerprint
        } else if !plainHTTP {
            tls = SignetServer.TLSIdentity(certificateChain: [identity.certificate], privateKey: identity.tlsKey)
        }
        let store = try await storage.openStore(folder: folder, identity: identity, logger: logger)
        let trust: TrustRoot
        do {
            if let trustRoot {
                trust = try await store.trustRoots.seed(try TrustRoot.load(path: trustRoot))
            } else {
                trust = try await store.trustRoots.seed(
                    try TrustRoot(threshold: 1, keys: [try TrustedKey(publicKey: responseSigner.publicKey)]), mustMatch: false)
            }
            try folder.writeTrustRoot(trust)
        } catch {
            await store.database.shutdown()
            throw error
        }
        let server = try SignetServer(configuration: configuration, store: store, responseSigner: responseSigner, tls: tls)
        let scheme = tls == nil ? "http" : "https"
        let announcedPin = tls == nil ? nil : pin
        let backupPin = tls == nil || tlsCertificate != nil ? nil : identity.backupPin
        let responseKey = responseSigner.publicKey.fingerprint
        let configuredPort = port
        let app = try server.application(logger: logger) { channel in
            let port = channel.localAddress?.port ?? configuredPort
            let host = hostname.contains(":") ? "[\(hostname)]" : hostname
            var lines = "url: \(scheme)://\(host):\(port)\n"
            if let announcedPin { lines += "pin: \(announcedPin)\n" }
            if let backupPin { lines += "backup-pin: \(backupPin)\n" }
            lines += "response-key: \(responseKey)\n"
            lines += "trust-root: \(PrintableText.terminalSafe(folder.trustRootPath))\n"
            Console.write(lines)
        }
        logger.info("starting", metadata: ["database": "\(store.database.location)", "data": "\(folder.path)"])
        var services: [any Service] = [app]
        if let metricsPort {
            let metricsHost = self.metricsHost
            if !["127.0.0.1", "::1", "localhost"].contains(metricsHost) {
                logger.warning("the metrics listener is not on loopback: it has no authentication, so keep it off the internet", metadata: ["metrics-host": "\(metricsHost)"])
            }
            services.append(server.metricsApplication(hostname: metricsHost, port: metricsPort, logger: logger) { channel in
                let host = metricsHost.contains(":") ? "[\(metricsHost)]" : metricsHost
                Console.write("metrics: http://\(host):\(channel.localAddress?.port ?? metricsPort)/metrics\n")
            })
        }
        let group = ServiceGroup(configuration: server.serviceGroupConfiguration(services: services, logger: logger))
        do {
            try await group.run()
        } catch {
            server.finish(logger: logger)
            await store.database.shutdown()
            throw ServerError.configuration(detail: "the server stopped: \(error)")
        }
        server.finish(logger: logger)
        await store.database.shutdown()
    }
}
