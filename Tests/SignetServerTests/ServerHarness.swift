import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import SignetBundle
import SignetCore
import SignetHTTP
import SignetClient
import SignetServer
import SignetTLS
import SignetTestSupport
import SignetX509
import Synchronization
import Testing

/// A `SignetServer` running in this process over TLS on 127.0.0.1 (a free port), with a fresh
/// data folder, an admin key and an app key enrolled, and a pinned client for it. With
/// `plainHTTP` it serves plain HTTP instead (as behind a TLS-terminating proxy), for tests that
/// write raw bytes (``LoopbackSocket``); `api` is then of no use.
struct TestServer: Sendable {
    let port: Int
    /// `https`, or `http` when it serves plain HTTP.
    let scheme: String
    let folder: TemporaryFolder
    let store: ServerStore
    let identity: ServerDataFolder.Identity
    let admin: SoftwareSigner
    let app: SoftwareSigner
    let api: TestAPI
    /// The trust root seeded on start: `trustRoot` given to ``with(database:trustRoot:plainHTTP:configure:_:)``, or
    /// version 1 holding the server's signing key (which then signs the resources published as tars).
    let trustRoot: TrustRoot
    /// Every route the server serves (method, OpenAPI path).
    let servedRoutes: [(method: HTTPRequest.Method, path: String)]

    var adminSigner: HTTPMessageSigner { HTTPMessageSigner(key: .signer(admin)) }
    var appSigner: HTTPMessageSigner { HTTPMessageSigner(key: .signer(app)) }

    /// The admin API client of this server.
    var adminClient: AdminClient {
        get throws { try AdminClient(
            server: "https://127.0.0.1:\(port)", signer: adminSigner, serverKey: identity.responseSigner.publicKey,
            transport: ContractCheckingTransport(inner: PinnedTransport(client: api.transport))) }
    }

    /// Fast password hashing for tests (scrypt with N = 2^10), everything else the defaults.
    static func testConfiguration() -> ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.passwordHasher = PasswordHasher(algorithm: .scrypt(logN: 10, r: 8, p: 1))
        return configuration
    }

    /// Runs `body` against a fresh server on SQLite (or `database`), then stops the server.
    static func with<T: Sendable>(
        database: DatabaseLocation? = nil, trustRoot: TrustRoot? = nil, plainHTTP: Bool = false,
        configure: (inout ServerConfiguration) -> Void = { _ in }, _ body: (TestServer) async throws -> T
    ) async throws -> T {
        let folder = try TemporaryFolder(prefix: "signet-server")
        let dataFolder = ServerDataFolder(path: folder.file("data"))
        let identity = try await dataFolder.prepare()
        var logger = Logger(label: "signet.server-test")
        logger.logLevel = .critical
        let location = database ?? .sqlite(path: dataFolder.databasePath)
        let store = ServerStore(database: try ServerDatabase(location: location, logger: logger), appSecretKey: identity.appSecretKey)
        try await store.migrate()
        let trust = try await store.trustRoots.seed(
            try trustRoot ?? TrustRoot(threshold: 1, keys: [TrustedKey(publicKey: identity.responseSigner.publicKey)]), mustMatch: trustRoot != nil)
        let admin = try SoftwareSigner(key: PrivateKey.generate(.ed25519))
        let app = try SoftwareSigner(key: PrivateKey.generate(.ed25519))
        try await store.principals.add(Principal(
            keyID: admin.publicKey.fingerprint.description, role: .admin, name: "root", algorithm: .ed25519,
            publicKeyDER: admin.publicKey.spkiDER, createdAt: 0))
        try await store.principals.add(Principal(
            keyID: app.publicKey.fingerprint.description, role: .app, name: "test-app", algorithm: .ed25519,
            publicKeyDER: app.publicKey.spkiDER, createdAt: 0))
        var configuration = testConfiguration()
        configure(&configuration)
        let server = try SignetServer(
            configuration: configuration, store: store, responseSigner: identity.responseSigner,
            tls: plainHTTP ? nil : .init(certificateChain: [identity.certificate], privateKey: identity.tlsKey))
        do {
            let result = try await withRunningApplication(named: "the server", logger: logger) { onRunning in
                try server.application(logger: logger, onServerRunning: onRunning)
            } _: { port in
                let api = try TestAPI(port: port, pins: [identity.pin, identity.backupPin])
                return try await body(TestServer(
                    port: port, scheme: plainHTTP ? "http" : "https", folder: folder, store: store, identity: identity, admin: admin,
                    app: app, api: api, trustRoot: trust, servedRoutes: server.servedRoutes))
            }
            server.finish(logger: logger)
            await store.database.shutdown()
            return result
        } catch {
            server.finish(logger: logger)
            await store.database.shutdown()
            throw error
        }
    }
}

/// Runs the application `make` builds (handing it the callback that learns the bound port)
/// under a service group, calls `body` with the port, and stops the application, whether
/// `body` returns or throws.
func withRunningApplication<T: Sendable, App: ApplicationProtocol>(
    named name: String, logger: Logger, _ make: (@escaping @Sendable (any Channel) async -> Void) throws -> App,
    _ body: (Int) async throws -> T
) async throws -> T {
    let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
    let application = try make { channel in continuation.yield(channel.localAddress?.port ?? -1) }
    let group = ServiceGroup(services: [application], logger: logger)
    return try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask {
            defer { continuation.finish() }
            try await group.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            await group.triggerGracefulShutdown()
            throw ServerTestError(description: "\(name) did not start")
        }
        let result: Result<T, any Error>
        do {
            result = .success(try await body(port))
        } catch {
            result = .failure(error)
        }
        await group.triggerGracefulShutdown()
        try await tasks.waitForAll()
        return try result.get()
    }
}

/// A server under test that did not come up.
struct ServerTestError: Error, CustomStringConvertible {
    var description: String
}

/// Sends requests, signed or not, to a server on 127.0.0.1 over pinned TLS.
struct TestAPI: Sendable {
    let port: Int
    let transport: PinnedHTTPSClient

    init(port: Int, pins: [KeyFingerprint]) throws {
        self.port = port
        let pinSet = try PinSet(hosts: [HostPins(host: "127.0.0.1", pins: pins)])
        transport = PinnedHTTPSClient(
            trust: TLSTrustPolicy(mode: .pinnedSelfSigned, pins: pinSet), timeout: .seconds(TestTimeouts.hangGuardSeconds))
    }

    /// A request to `path`, signed by `signer` when given (after the headers are set), with a
    /// JSON body when given.
    func request(
        _ method: HTTPRequest.Method, _ path: String, body: [UInt8]? = nil, contentType: String? = "application/json",
        signer: HTTPMessageSigner? = nil, bearer: String? = nil, headers: HTTPFields = [:]
    ) async throws -> (HTTPRequest, [UInt8]?) {
        var request = HTTPRequest(method: method, scheme: "https", authority: "127.0.0.1:\(port)", path: path, headerFields: headers)
        if body != nil, let contentType { request.headerFields[.contentType] = contentType }
        if let bearer { request.headerFields[.authorization] = "Bearer \(bearer)" }
        if let signer { try await signer.sign(&request, body: body) }
        return (request, body)
    }

    /// Sends a request made by ``request(_:_:body:contentType:signer:bearer:headers:)``; the
    /// answer is held to the wire contract (``ResponseContract``).
    func send(_ prepared: (HTTPRequest, [UInt8]?), sourceLocation: SourceLocation = #_sourceLocation) async throws -> HTTPSResponse {
        let response = try await transport.send(prepared.0, body: prepared.1)
        ResponseContract.check(prepared.0, response, sourceLocation: sourceLocation)
        return response
    }

    /// Builds, signs and sends a request; `json` is encoded as the body.
    func send(
        _ method: HTTPRequest.Method, _ path: String, json: (some Encodable)? = Optional<String>.none,
        signer: HTTPMessageSigner?, bearer: String? = nil, headers: HTTPFields = [:]
    ) async throws -> HTTPSResponse {
        let body = try json.map { Array(try JSONEncoder().encode($0)) }
        return try await send(try await request(method, path, body: body, signer: signer, bearer: bearer, headers: headers))
    }

    /// Sends raw bytes as the body, signed.
    func sendRaw(
        _ method: HTTPRequest.Method, _ path: String, body: [UInt8], contentType: String? = "application/json", signer: HTTPMessageSigner?
    ) async throws -> HTTPSResponse {
        try await send(try await request(method, path, body: body, contentType: contentType, signer: signer))
    }
}

extension HTTPSResponse {
    var status: Int { head.status.code }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(body))
    }

    /// The problem document's code (`server.unauthorized`), or nil when the body is not one.
    var problemCode: String? { (try? decode(ProblemDocument.self))?.code }

    var text: String { String(decoding: body, as: UTF8.self) }
}

/// Registers and signs in a user through the API; returns the session token.
func registerAndSignIn(
    _ server: TestServer, email: String = "alice@example.com", password: String = "correct horse battery", name: String = "Alice"
) async throws -> String {
    let registered = try await server.api.send(
        .post, "/v1/users", json: UserAPI.Registration(email: email, password: password, displayName: name), signer: server.appSigner)
    #expect(registered.status == 201, "\(registered.text)")
    let session = try await server.api.send(.post, "/v1/sessions", json: UserAPI.SignIn(email: email, password: password), signer: server.appSigner)
    #expect(session.status == 201, "\(session.text)")
    return try session.decode(UserAPI.Session.self).token
}

// MARK: - Raw connections and health, for the attacks on the envelope

extension TestServer {
    /// A request to this server as a client would make it (this server's scheme, authority
    /// `127.0.0.1:PORT`), with `fields`, signed by `signer` over `body` when given.
    func rawRequest(
        _ method: HTTPRequest.Method, _ path: String, body: [UInt8]? = nil, fields: HTTPFields = [:], signer: HTTPMessageSigner? = nil
    ) async throws -> HTTPRequest {
        var request = HTTPRequest(method: method, scheme: scheme, authority: "127.0.0.1:\(port)", path: path, headerFields: fields)
        if body != nil { request.headerFields[.contentType] = "application/json" }
        if let signer { try await signer.sign(&request, body: body) }
        return request
    }

    /// A connection to this server from `source`, its handshake done (TCP only: over TLS it
    /// has said nothing yet).
    func connect(from source: String = "127.0.0.1") async throws -> LoopbackSocket {
        let socket = try LoopbackSocket(port: port, from: source)
        try await socket.waitUntilConnected()
        return socket
    }

    /// The status of `GET /v1/health` on a fresh connection from 127.0.0.1.
    func healthStatus() async throws -> Int {
        if scheme == "https" { return try await api.send(.get, "/v1/health", signer: nil).status }
        return try await plainHealthStatus(port: port)
    }
}

extension HTTPRequest {
    /// The head as HTTP/1.1 puts it on the wire: the request line, `Host` (the authority),
    /// every field as it is, the `extra` fields, the empty line.
    func http1Head(adding extra: [(String, String)] = []) -> [UInt8] {
        var text = "\(method.rawValue) \(path ?? "/") HTTP/1.1\r\nHost: \(authority ?? "127.0.0.1")\r\n"
        for field in headerFields { text += "\(field.name.rawName): \(field.value)\r\n" }
        for (name, value) in extra { text += "\(name): \(value)\r\n" }
        return Array((text + "\r\n").utf8)
    }
}

/// `GET /v1/health` for a plain HTTP server on `port`, keeping the connection open or not.
func healthRequest(port: Int, keepAlive: Bool) -> [UInt8] {
    Array("GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\(keepAlive ? "" : "Connection: close\r\n")\r\n".utf8)
}

/// The status of `GET /v1/health` on a fresh plain HTTP connection to `port` from `source`.
func plainHealthStatus(port: Int, from source: String = "127.0.0.1") async throws -> Int {
    let socket = try LoopbackSocket(port: port, from: source)
    defer { socket.close() }
    try await socket.waitUntilConnected()
    guard let response = try await socket.exchange(healthRequest(port: port, keepAlive: false)) else {
        throw ServerTestError(description: "GET /v1/health from \(source): the server closed the connection without an answer")
    }
    return response.status
}

/// Runs `body` while `probe` (a health check) is asked again and again beside it, at least
/// once; returns what `body` returned and every status the probe saw. The probe failing (no
/// answer within the hang guard) fails the test. Nothing here measures time.
func whileHealthIsPolled<T: Sendable>(
    by probe: @escaping @Sendable () async throws -> Int, _ body: () async throws -> T
) async throws -> (result: T, health: [Int]) {
    let done = DoneFlag()
    return try await withThrowingTaskGroup(of: [Int].self) { group in
        group.addTask {
            var statuses: [Int] = []
            repeat {
                statuses.append(try await probe())
                try? await Task.sleep(for: .milliseconds(100))
            } while !done.isSet && statuses.count < 10_000
            return statuses
        }
        let result: Result<T, any Error>
        do {
            result = .success(try await body())
        } catch {
            result = .failure(error)
        }
        done.set()
        let statuses = try await group.next() ?? []
        let value = try result.get()
        return (value, statuses)
    }
}

/// A flag one task raises and another reads.
final class DoneFlag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}

/// ``whileHealthIsPolled(by:_:)`` with `server`'s own health endpoint.
func whileHealthIsPolled<T: Sendable>(_ server: TestServer, _ body: () async throws -> T) async throws -> (result: T, health: [Int]) {
    try await whileHealthIsPolled(by: { try await server.healthStatus() }, body)
}

/// Every health check answered 200 (and there was at least one).
func expectHealthy(_ statuses: [Int], sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(!statuses.isEmpty, "health was never asked", sourceLocation: sourceLocation)
    #expect(statuses.allSatisfy { $0 == 200 }, "health answered \(statuses.filter { $0 != 200 })", sourceLocation: sourceLocation)
}
