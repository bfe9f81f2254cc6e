import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle
import SignetCore
import SignetTLS
import SignetTestSupport
import SignetX509
import Synchronization
import X509

/// A real TLS reverse proxy on 127.0.0.1 (a free port) for tests: a Hummingbird 2 application
/// that terminates TLS with a certificate and key it is given, forwards every request — method,
/// path and query, every end-to-end header field, the body — to the real server over a
/// `PinnedHTTPSClient` that trusts the server's pins, and sends the server's answer back,
/// through a `rewrite` hook that an attacker's proxy uses to alter it.
///
/// A signed request's `@target-uri` holds the authority the client used (this proxy's), while
/// `PinnedHTTPSClient` writes `Host` from the address it connects to (the server's). So the
/// server behind it is started with `publicAuthority` = ``authority``: the proxy binds first,
/// and learns where to forward (``forward(to:trust:)``) and what to present (``present(_:)``)
/// once the server runs — both may change while it runs, each new TLS handshake using the
/// identity presented last.
///
/// ```swift
/// try await TLSProxy.with(identity: try await TLSProxy.selfSignedIdentity()) { proxy in
///     try await TestServer.with(configure: { $0.publicAuthority = proxy.authority }) { server in
///         try proxy.front(server)
///         // talk to https://127.0.0.1:\(proxy.port)
///     }
/// }
/// ```
struct TLSProxy: Sendable {
    /// Rewrites an answer on its way back: the request as the client sent it (its authority is
    /// the proxy's), the server's response head and body; returns what the client receives.
    typealias Rewrite = @Sendable (HTTPRequest, HTTPResponse, [UInt8]) -> (HTTPResponse, [UInt8])

    /// Passes every answer on unchanged.
    static let passThrough: Rewrite = { _, head, body in (head, body) }

    /// A certificate chain (leaf first) and its private key, like `SignetServer.TLSIdentity`.
    struct Identity: Sendable {
        var chain: [Certificate]
        var key: PrivateKey
    }

    /// The port the proxy listens on.
    let port: Int
    let relay: Relay

    /// `127.0.0.1:PORT`: what clients of the proxy put in their requests (and sign).
    var authority: String { "127.0.0.1:\(port)" }
    /// `https://127.0.0.1:PORT`.
    var url: String { "https://" + authority }
    /// How many HTTP requests reached the proxy (past the TLS handshake).
    var requestCount: Int { relay.requestCount }

    /// Forwards from now on to `127.0.0.1:port`, trusting it by `trust`.
    func forward(to port: Int, trust: TLSTrustPolicy) {
        relay.forward(to: Relay.Upstream(port: port, trust: trust))
    }

    /// Presents `identity` in the TLS handshakes that start from now on.
    func present(_ identity: Identity) throws {
        relay.present(try Self.nioIdentity(identity))
    }

    /// Runs `body` with a proxy on 127.0.0.1 presenting `identity`, forwarding to
    /// `upstreamPort` trusted by `upstreamTrust` when both are given (else once
    /// ``forward(to:trust:)`` is called; until then it answers 502), then stops it.
    static func with<T: Sendable>(
        upstreamPort: Int? = nil, upstreamTrust: TLSTrustPolicy? = nil, identity: Identity, rewrite: @escaping Rewrite = TLSProxy.passThrough,
        _ body: (TLSProxy) async throws -> T
    ) async throws -> T {
        let relay = Relay(rewrite: rewrite)
        if let upstreamPort, let upstreamTrust { relay.forward(to: Relay.Upstream(port: upstreamPort, trust: upstreamTrust)) }
        let initial = try nioIdentity(identity)
        var tls = TLSConfiguration.makeServerConfiguration(certificateChain: initial.chain, privateKey: initial.key)
        tls.minimumTLSVersion = .tlsv12
        // Asked at every ClientHello: the identity presented last (none: the initial one).
        tls.sslContextCallback = { _, promise in promise.succeed(relay.override) }
        var logger = Logger(label: "signet.tls-proxy-test")
        logger.logLevel = .critical
        let server = try HTTPServerBuilder.tls(.http1(), tlsConfiguration: tls)
        let responder = CallbackResponder<BasicRequestContext> { request, _ in await relay.respond(to: request) }
        return try await withRunningApplication(named: "the TLS proxy", logger: logger) { onRunning in
            Application(
                responder: responder, server: server,
                configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0), serverName: nil),
                onServerRunning: onRunning, logger: logger)
        } _: { port in
            try await body(TLSProxy(port: port, relay: relay))
        }
    }

    /// A fresh P-256 key and a self-signed certificate for `localhost`, 127.0.0.1 and ::1 —
    /// valid in every way but that no client pinned its key (a man in the middle's).
    static func selfSignedIdentity(subject: String = "CN=localhost,O=Not the Signet server") async throws -> Identity {
        let key = try PrivateKey.generate(.p256)
        let certificate = try await CertificateFactory.selfSigned(
            signer: try SoftwareSigner(key: key), subject: try SubjectParsing.distinguishedName(subject),
            alternativeNames: try SubjectParsing.alternativeNames("DNS:localhost,IP:127.0.0.1,IP:::1"), days: 30)
        return Identity(chain: [certificate], key: key)
    }

    /// The chain and key as SwiftNIO SSL takes them (as `SignetServer.tlsConfiguration` does).
    static func nioIdentity(_ identity: Identity) throws -> (chain: [NIOSSLCertificateSource], key: NIOSSLPrivateKeySource) {
        let chain = try identity.chain.map { certificate in
            NIOSSLCertificateSource.certificate(try NIOSSLCertificate(bytes: try X509Files.derBytes(of: certificate), format: .der))
        }
        var pem = try identity.key.encoded(as: .pem)
        defer { SecretBytes.zero(&pem) }
        let key = try NIOSSLPrivateKey(bytes: pem, format: .pem)
        return (chain, .privateKey(key))
    }

    /// The proxy's state and its forwarding, shared by the connections (and the test).
    final class Relay: Sendable {
        struct Upstream: Sendable {
            var port: Int
            var trust: TLSTrustPolicy
        }

        private struct State: Sendable {
            var upstream: Upstream?
            var override = NIOSSLContextConfigurationOverride.noChanges
            var requests = 0
        }

        private let state = Mutex(State())
        let rewrite: Rewrite

        /// Fields that belong to one connection (RFC 9110 §7.6.1), and the length, which is
        /// written again for the body sent on.
        static let hopByHop: Set<String> = [
            "connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization", "te", "trailer",
            "transfer-encoding", "upgrade", "content-length",
        ]

        /// The largest request body forwarded.
        static let maximumBody = 64 << 20

        init(rewrite: @escaping Rewrite) { self.rewrite = rewrite }

        var requestCount: Int { state.withLock { $0.requests } }
        var override: NIOSSLContextConfigurationOverride { state.withLock { $0.override } }

        func forward(to upstream: Upstream) { state.withLock { $0.upstream = upstream } }

        func present(_ identity: (chain: [NIOSSLCertificateSource], key: NIOSSLPrivateKeySource)) {
            var override = NIOSSLContextConfigurationOverride()
            override.certificateChain = identity.chain
            override.privateKey = identity.key
            state.withLock { $0.override = override }
        }

        /// Sends `request` on to the upstream and its answer (rewritten) back.
        func respond(to request: Request) async -> Response {
            let upstream = state.withLock { state -> Upstream? in
                state.requests += 1
                return state.upstream
            }
            guard let upstream else { return Self.failure(.badGateway, "the proxy has nowhere to forward to yet") }
            let body: [UInt8]
            do {
                body = Array(try await request.body.collect(upTo: Self.maximumBody).readableBytesView)
            } catch {
                return Self.failure(HTTPResponse.Status(code: 413), "the request body is too large for the test proxy")
            }
            let fields = request.head.headerFields
            let hasBody = fields[.contentLength] != nil || fields[.transferEncoding] != nil || !body.isEmpty
            let forwarded = HTTPRequest(
                method: request.head.method, scheme: "https", authority: "127.0.0.1:\(upstream.port)", path: request.head.path ?? "/",
                headerFields: Self.endToEnd(fields))
            let answer: HTTPSResponse
            do {
                answer = try await PinnedHTTPSClient(trust: upstream.trust, timeout: .seconds(TestTimeouts.hangGuardSeconds))
                    .send(forwarded, body: hasBody ? body : nil)
            } catch {
                return Self.failure(.badGateway, "the upstream failed: \(error)")
            }
            let (head, rewritten) = rewrite(request.head, answer.head, answer.body)
            return Response(status: head.status, headers: Self.endToEnd(head.headerFields), body: ResponseBody(byteBuffer: ByteBuffer(bytes: rewritten)))
        }

        static func endToEnd(_ fields: HTTPFields) -> HTTPFields {
            var kept = HTTPFields()
            for field in fields where !hopByHop.contains(field.name.canonicalName) { kept.append(field) }
            return kept
        }

        static func failure(_ status: HTTPResponse.Status, _ detail: String) -> Response {
            Response(status: status, headers: [.contentType: "text/plain"], body: ResponseBody(byteBuffer: ByteBuffer(string: detail)))
        }
    }
}
