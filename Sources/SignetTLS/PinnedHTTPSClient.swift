import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import SignetCore
import SignetX509
import X509

/// A response read by ``PinnedHTTPSClient``.
public struct HTTPSResponse: Sendable {
    /// The status line's code and reason, and the response's fields.
    public var head: HTTPResponse
    /// The HTTP version, such as `1.1`.
    public var version: String
    /// The whole body.
    public var body: [UInt8]
}

/// A small HTTP/1.1 client over SwiftNIO SSL whose every connection is verified by a
/// ``TLSTrustPolicy``: chain, hostname and pins.
///
/// AsyncHTTPClient cannot host this check (it offers no verification callback), so requests
/// that must be pinned go through here: one connection per request, `Connection: close`.
public struct PinnedHTTPSClient: Sendable {
    /// How servers are trusted.
    public var trust: TLSTrustPolicy
    /// The longest a request may take, connection and handshake included.
    public var timeout: Duration
    /// The most response body bytes read.
    public var maximumResponseSize: Int

    /// A client with `trust`, a 30-second timeout and a 64 MiB response limit.
    public init(trust: TLSTrustPolicy, timeout: Duration = .seconds(30), maximumResponseSize: Int = 64 << 20) {
        self.trust = trust
        self.timeout = timeout
        self.maximumResponseSize = maximumResponseSize
    }

    /// Sends `request` (its scheme must be `https`; its authority names host and port) with
    /// `body`, and returns the response. A server that fails verification gives
    /// ``TLSError/untrusted(host:reason:)`` with the check's reason; one that cannot be reached
    /// gives ``TLSError/connectionFailed(host:detail:)``.
    public func send(_ request: HTTPRequest, body: [UInt8]? = nil) async throws -> HTTPSResponse {
        try await send(request, body: body, sink: nil)
    }

    /// Sends `request` and streams the body of a response that `sink` accepts into it as it
    /// arrives (the returned body is then empty); any other response is read whole, up to
    /// 1 MiB. ``timeout`` is the longest wait for the next bytes, however long the whole
    /// download takes. A connection that drops mid-body throws, after the bytes that came
    /// went to the sink.
    public func download(_ request: HTTPRequest, to sink: any HTTPSBodySink) async throws -> HTTPSResponse {
        try await send(request, body: nil, sink: sink)
    }

    private func send(_ request: HTTPRequest, body: [UInt8]?, sink: (any HTTPSBodySink)?) async throws -> HTTPSResponse {
        guard request.scheme?.lowercased() == "https", let authority = request.authority else {
            throw TLSError.invalidArgument(detail: "a pinned request needs an https URL with a host")
        }
        let (host, port) = try Self.hostAndPort(authority, defaultPort: 443)
        let outcome = TLSVerificationOutcome()
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: PinnedTLS.clientConfiguration())
        } catch {
            throw TLSError.connectionFailed(host: authority, detail: "TLS could not be set up: \(error)")
        }
        let group = MultiThreadedEventLoopGroup.singleton
        let loop = group.next()
        let promise = loop.makePromise(of: HTTPSResponse.self)
        let limit = sink == nil ? maximumResponseSize : 1 << 20
        let trust = self.trust
        let timeout = TimeAmount(self.timeout)
        let idleTimeout = sink == nil ? nil : timeout
        do {
            let channel = try await ClientBootstrap(group: loop)
                .connectTimeout(timeout)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let tls = try PinnedTLS.clientHandler(context: context, host: host, port: port, policy: trust, outcome: outcome)
                        try channel.pipeline.syncOperations.addHandler(tls)
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(ResponseCollector(promise: promise, limit: limit, sink: sink, idleTimeout: idleTimeout))
                    }
                }
                .connect(host: host, port: port).get()
            let deadline = sink != nil ? nil : loop.scheduleTask(in: timeout) {
                let detail = outcome.verifying
                    ? "no complete response within the timeout (the server's certificates were still being verified)" : "no complete response within the timeout"
                outcome.cancelVerification()
                promise.fail(TLSError.connectionFailed(host: authority, detail: detail))
                channel.close(promise: nil)
            }
            defer { deadline?.cancel() }
            try await Self.write(request, body: body, authority: authority, to: channel)
            let response = try await promise.futureResult.get()
            return response
        } catch {
            promise.fail(error)
            outcome.cancelVerification()
            // A verification cancelled by the deadline or a closed connection is not a verdict:
            // the connection's failure is reported.
            switch outcome.error {
            case nil, .verificationCancelled?: break
            case let verification?: throw TLSError.untrusted(host: authority, reason: verification)
            }
            switch error as? TLSError {
            case .connectionFailed(_, let detail)?: throw TLSError.connectionFailed(host: authority, detail: detail)
            case let error?: throw error
            case nil: throw TLSError.connectionFailed(host: authority, detail: Self.describe(error))
            }
        }
    }

    static func write(_ request: HTTPRequest, body: [UInt8]?, authority: String, to channel: any Channel) async throws {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: authority)
        for field in request.headerFields where field.name != .connection {
            headers.add(name: field.name.rawName, value: field.value)
        }
        headers.replaceOrAdd(name: "Connection", value: "close")
        if let body { headers.replaceOrAdd(name: "Content-Length", value: String(body.count)) }
        let head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: request.method.rawValue), uri: request.path ?? "/", headers: headers)
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        if let body, !body.isEmpty {
            channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: body))), promise: nil)
        }
        try await channel.writeAndFlush(HTTPClientRequestPart.end(nil)).get()
    }

    /// Splits `host:port` (`[v6]:port`), with `defaultPort` when none is written.
    public static func hostAndPort(_ authority: String, defaultPort: Int) throws -> (String, Int) {
        var host = Substring(authority)
        var port = defaultPort
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { throw TLSError.invalidArgument(detail: "\(authority): unclosed '['") }
            let rest = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if rest.hasPrefix(":") {
                guard let value = Int(rest.dropFirst()), (1...65535).contains(value) else {
                    throw TLSError.invalidArgument(detail: "\(authority): the port is not a number from 1 to 65535")
                }
                port = value
            }
        } else if let colon = host.lastIndex(of: ":") {
            guard let value = Int(host[host.index(after: colon)...]), (1...65535).contains(value) else {
                throw TLSError.invalidArgument(detail: "\(authority): the port is not a number from 1 to 65535")
            }
            port = value
            host = host[..<colon]
        }
        guard !host.isEmpty else { throw TLSError.invalidArgument(detail: "\(authority): no host") }
        return (String(host), port)
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? NIOConnectionError {
            return "cannot connect: " + error.connectionErrors.map { "\($0.error)" }.joined(separator: "; ")
        }
        return "\(error)"
    }
}

/// Where ``PinnedHTTPSClient/download(_:to:)`` writes a response body as it arrives. Called on
/// the connection's event loop, one call at a time.
public protocol HTTPSBodySink: AnyObject, Sendable {
    /// Whether the body of the response with `head` goes to the sink (else it is collected
    /// and returned). Called once, before any ``write(_:)``.
    func accepts(_ head: HTTPResponse) throws -> Bool
    /// The next bytes of the body.
    func write(_ bytes: UnsafeRawBufferPointer) throws
}

/// Collects one HTTP/1.1 response and completes the promise with it; the body of a response
/// the sink accepts goes to the sink instead.
final class ResponseCollector: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart

    private let promise: EventLoopPromise<HTTPSResponse>
    private let limit: Int
    private let sink: (any HTTPSBodySink)?
    private let idleTimeout: TimeAmount?
    private var idle: Scheduled<Void>?
    private var streaming = false
    private var head: HTTPResponseHead?
    private var fields = HTTPFields()
    private var body: [UInt8] = []

    init(promise: EventLoopPromise<HTTPSResponse>, limit: Int, sink: (any HTTPSBodySink)? = nil, idleTimeout: TimeAmount? = nil) {
        self.promise = promise
        self.limit = limit
        self.sink = sink
        self.idleTimeout = idleTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) { rearm(context) }

    func handlerRemoved(context: ChannelHandlerContext) { idle?.cancel() }

    /// Restarts the wait for the next bytes (downloads only).
    private func rearm(_ context: ChannelHandlerContext) {
        guard let idleTimeout else { return }
        idle?.cancel()
        let promise = self.promise
        let channel = context.channel
        idle = context.eventLoop.scheduleTask(in: idleTimeout) {
            promise.fail(TLSError.connectionFailed(host: "server", detail: "no data for \(idleTimeout.nanoseconds / 1_000_000_000) s"))
            channel.close(promise: nil)
        }
    }

    private func fail(_ error: any Error, _ context: ChannelHandlerContext) {
        idle?.cancel()
        promise.fail(error)
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        rearm(context)
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            for (name, value) in head.headers {
                if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
            }
            if let sink {
                do {
                    streaming = try sink.accepts(HTTPResponse(status: Self.status(head), headerFields: fields))
                } catch {
                    fail(error, context)
                }
            }
        case .body(let buffer):
            if streaming, let sink {
                do {
                    try buffer.withUnsafeReadableBytes { try sink.write($0) }
                } catch {
                    fail(error, context)
                }
                return
            }
            guard body.count + buffer.readableBytes <= limit else {
                fail(TLSError.connectionFailed(host: "server", detail: "the response is larger than \(limit) bytes"), context)
                return
            }
            body += buffer.readableBytesView
        case .end:
            guard let head else { return }
            idle?.cancel()
            promise.succeed(HTTPSResponse(
                head: HTTPResponse(status: Self.status(head), headerFields: fields),
                version: "\(head.version.major).\(head.version.minor)", body: body))
            context.close(promise: nil)
        }
    }

    static func status(_ head: HTTPResponseHead) -> HTTPResponse.Status {
        HTTPResponse.Status(code: Int(head.status.code), reasonPhrase: head.status.reasonPhrase)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error, context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        idle?.cancel()
        promise.fail(TLSError.connectionFailed(host: "server", detail: "the connection closed before a complete response"))
        context.fireChannelInactive()
    }
}

/// Reads the certificates a TLS server presents, without trusting them: for showing and
/// pinning them (`cert pin https://host:port`).
public enum TLSProbe {
    /// The certificates `host:port` presents, leaf first. The handshake is always abandoned
    /// after they arrive, so no data is ever exchanged with an unverified server.
    public static func presentedCertificates(host: String, port: Int, timeout: Duration = .seconds(15)) async throws -> [Certificate] {
        let timeout = TimeAmount(timeout)
        let outcome = TLSVerificationOutcome()
        let name = "\(host):\(port)"
        do {
            let context = try NIOSSLContext(configuration: PinnedTLS.clientConfiguration())
            let sni = SubjectParsing.ipAddressBytes(host) == nil ? host : nil
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(timeout)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let handler = try NIOSSLClientHandler(
                            context: context, serverHostname: sni,
                            customVerificationCallbackWithMetadata: { certificates, promise in
                                let presented = certificates.compactMap { try? Certificate(derEncoded: try $0.toDERBytes()) }
                                outcome.record(presented: presented)
                                promise.succeed(NIOSSLVerificationResultWithMetadata.failed)
                            })
                        try channel.pipeline.syncOperations.addHandler(handler)
                    }
                }
                .connect(host: host, port: port).get()
            let deadline = channel.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
            try? await channel.closeFuture.get()
            deadline.cancel()
        } catch {
            if outcome.presented.isEmpty { throw TLSError.connectionFailed(host: name, detail: PinnedHTTPSClient.describe(error)) }
        }
        guard !outcome.presented.isEmpty else {
            throw TLSError.connectionFailed(host: name, detail: "the server presented no certificate")
        }
        return outcome.presented
    }
}
