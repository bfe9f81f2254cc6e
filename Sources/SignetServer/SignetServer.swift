@_exported import SignetAPI
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle
import SignetCore
import SignetX509
import X509

/// The Signet backend: a Hummingbird application built from a configuration, a store and the
/// server's keys, so tests and embedders run it in-process and `signet serve` runs it for real.
///
/// ```swift
/// let database = try ServerDatabase(location: .sqlite(path: "signet.sqlite"), logger: logger)
/// let store = ServerStore(database: database, appSecretKey: identity.appSecretKey)
/// try await store.migrate()
/// let server = try SignetServer(configuration: .init(), store: store, responseSigner: signer, tls: identity)
/// let app = try server.application(logger: logger)
/// try await ServiceGroup(configuration: server.serviceGroupConfiguration(services: [app], logger: logger)).run()
/// ```
public struct SignetServer: Sendable {
    /// The configuration it was built with.
    public let configuration: ServerConfiguration
    /// Its data.
    public let store: ServerStore
    let routes: ServerRoutes
    let tlsConfiguration: TLSConfiguration?

    /// The certificate chain (leaf first) and private key a TLS server presents.
    public struct TLSIdentity: Sendable {
        public var certificateChain: [Certificate]
        public var privateKey: PrivateKey
        public init(certificateChain: [Certificate], privateKey: PrivateKey) {
            self.certificateChain = certificateChain
            self.privateKey = privateKey
        }
    }

    /// A server; `tls` nil serves plain HTTP (behind a TLS-terminating proxy only).
    /// `responseSigner` signs responses for clients that ask (`Accept-Signature`).
    public init(configuration: ServerConfiguration, store: ServerStore, responseSigner: (any Signer)?, tls: TLSIdentity?) throws {
        var configuration = configuration
        // Hummingbird gives HTTP/1 requests the scheme http even over TLS: what clients sign is
        // the one they used, https here.
        if configuration.publicScheme == nil { configuration.publicScheme = tls == nil ? "http" : "https" }
        self.configuration = configuration
        self.store = store
        routes = try ServerRoutes(
            configuration: configuration, store: store, responseSigner: responseSigner,
            authorities: ServerAuthorities(hostname: configuration.hostname, certificate: tls?.certificateChain.first))
        tlsConfiguration = try tls.map { identity throws in try Self.tlsConfiguration(identity) }
    }

    /// Every route the server serves, as method and OpenAPI path (`/v1/admin/apps/{name}`):
    /// what the suite holds against SignetAPI's operations and the OpenAPI document.
    package var servedRoutes: [(method: HTTPRequest.Method, path: String)] {
        routes.router().routes.map { ($0.method, $0.path.description) }
    }

    static func tlsConfiguration(_ identity: TLSIdentity) throws -> TLSConfiguration {
        do {
            let chain = try identity.certificateChain.map { certificate in
                NIOSSLCertificateSource.certificate(try NIOSSLCertificate(bytes: try X509Files.derBytes(of: certificate), format: .der))
            }
            var pem = try identity.privateKey.encoded(as: .pem)
            defer { SecretBytes.zero(&pem) }
            let key = try NIOSSLPrivateKey(bytes: pem, format: .pem)
            var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key))
            configuration.minimumTLSVersion = .tlsv12
            // How long closing a connection waits for the peer's close_notify: past the shutdown
            // deadline connections are closed, and a peer that never answers must not hold that.
            configuration.shutdownTimeout = .seconds(1)
            return configuration
        } catch {
            throw ServerError.configuration(detail: "the TLS certificate or key cannot be used: \(error)")
        }
    }

    /// The Hummingbird application: the API on `configuration.hostname`/`port`, over TLS
    /// unless built without, within ``ServerConfiguration/limits`` (head size, idle, body and
    /// write timeouts, connections in all and per address, the longest-waiting connection closed
    /// when they are all taken), with a service that purges expired
    /// sessions and nonces. `onServerRunning` learns the bound channel (its local address has
    /// the real port). Run it in a `ServiceGroup` configured by ``serviceGroupConfiguration(logger:)``
    /// so that shutdown has its deadline.
    public func application(
        logger: Logger, onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) throws -> some ApplicationProtocol {
        let limits = configuration.limits
        if let problem = limits.problem { throw ServerError.configuration(detail: problem) }
        // Both are counted in whole seconds: under one, sessions would end at once and every
        // attempt would open a new rate-limit window.
        if configuration.sessionLifetime < .seconds(1) { throw ServerError.configuration(detail: "a session must last at least one second") }
        if configuration.rateLimitWindow < .seconds(1) { throw ServerError.configuration(detail: "the rate-limit window must be at least one second") }
        if configuration.deviceChallengeLifetime < .seconds(1) { throw ServerError.configuration(detail: "a device challenge must live at least one second") }
        if configuration.attestation.replacesRoots {
            logger.warning("device attestations are verified against roots other than Apple's and Google's: attestations made with those roots are accepted as genuine devices; use this only for tests")
        }
        if configuration.publicAuthority == nil, routes.authorityCheck == nil {
            logger.warning("the server knows no name of its own (bound to every address, no certificate): requests signed for another server's authority cannot be told apart; give it its public URL")
        }
        let table = ConnectionTable(maximumPerAddress: limits.maximumConnectionsPerAddress, maximumTotal: limits.maximumConnections)
        let http = HTTP1Channel.Configuration(
            additionalChannelHandlers: [
                HeadRefusalHandler(limits: limits),
                RequestDeadlineHandler(bodyReadTimeout: limits.bodyReadTimeout, writeTimeout: limits.writeTimeout, table: table),
            ],
            idleTimeout: TimeAmount(limits.idleTimeout),
            httpDecoderConfiguration: .init(
                maxHeaderFieldSize: limits.maximumHeaderBytes, maxHeaderListSize: limits.maximumHeaderBytes,
                maxHeaderFieldCount: limits.maximumHeaderFields))
        let tlsConfiguration = self.tlsConfiguration
        let server = HTTPServerBuilder { responder in
            let plain = HTTP1Channel(responder: responder, configuration: http)
            guard let tlsConfiguration else { return GuardedChildChannel(base: plain, table: table, sendBuffer: limits.socketSendBuffer) }
            return GuardedChildChannel(
                base: try TLSChannel(plain, tlsConfiguration: tlsConfiguration), table: table, sendBuffer: limits.socketSendBuffer)
        }
        var application = Application(
            router: routes.router(), server: server,
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.hostname, port: configuration.port), serverName: nil, backlog: 1024,
                availableConnectionsDelegate: MaximumAvailableConnections(limits.maximumConnections, logger: logger)),
            services: [ExpiryPurgeService(store: store, rateLimitWindow: configuration.rateLimitWindow.wholeSeconds, logger: logger)],
            onServerRunning: onServerRunning, logger: logger)
        if let replayCache = routes.localReplayCache, case .sqlite(let path) = store.database.location {
            application.beforeServerStarts { try await replayCache.prepare(path: path, logger: logger) }
        }
        return application
    }

    /// A plain-HTTP listener answering `GET /metrics` with the server's metrics in Prometheus's
    /// text format (docs/server.md "Metrics"): request counts and latency by route and status,
    /// refusals by problem code, rate-limit hits, the replay cache, the password queue and the
    /// database pool's waits. It has no authentication and reveals no user data, but it tells
    /// how the server is used: bind it to loopback (the default) or a private interface, never
    /// to the internet. Run it in the same service group as ``application(logger:onServerRunning:)``.
    public func metricsApplication(
        hostname: String = "127.0.0.1", port: Int, logger: Logger, onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let metrics = routes.metrics
        let router = Router()
        router.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: ServerMetrics.contentType, .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(bytes: metrics.exposition())))
        }
        return Application(
            router: router, configuration: ApplicationConfiguration(address: .hostname(hostname, port: port), serverName: nil),
            onServerRunning: onServerRunning, logger: logger)
    }

    /// Call once the application has stopped. A node on SQLite writes what its replay cache
    /// holds beside the database, so that the next start accepts signatures made before it
    /// (a client whose clock runs behind is not refused after a planned restart), and lets go
    /// of the database's serving lock. Without it, as after a crash, the next start refuses
    /// signatures created before it began (docs/server.md "Throughput").
    public func finish(logger: Logger) {
        routes.localReplayCache?.persist(logger: logger)
    }

    /// The metrics as `GET /metrics` answers them (for tests).
    package var metricsText: String { String(decoding: routes.metrics.exposition(), as: UTF8.self) }

    /// How a `ServiceGroup` running ``application(logger:onServerRunning:)`` stops: on SIGTERM
    /// or SIGINT, open requests get ``ServerLimits/shutdownTimeout`` to finish, then their
    /// connections are closed.
    public func serviceGroupConfiguration(services: [any Service], logger: Logger) -> ServiceGroupConfiguration {
        var group = ServiceGroupConfiguration(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        group.maximumGracefulShutdownDuration = configuration.limits.shutdownTimeout
        // After the deadline, connections are closed (TLS waits at most 1 s for close_notify);
        // this only guards against a task that ignores cancellation altogether.
        group.maximumCancellationDuration = .seconds(30)
        return group
    }
}

/// Deletes expired sessions, nonces and rate-limit counters once a minute, until the server stops.
struct ExpiryPurgeService: Service {
    let store: ServerStore
    let rateLimitWindow: Int64
    let logger: Logger

    func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                try await store.purgeExpired(rateLimitWindow: rateLimitWindow)
            } catch {
                logger.warning("purging expired rows failed", metadata: ["error": "\(error)"])
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(60)) }
        }
    }
}
