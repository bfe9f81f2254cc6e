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
    public var timeout: TimeAmount
    /// The most response body bytes read.
    public var maximumResponseSize: Int

    /// A client with `trust`, a 30-second timeout and a 64 MiB response limit.
    public init(trust: TLSTrustPolicy, timeout: TimeAmount = .seconds(30), maximumResponseSize: Int = 64 << 20) {
        self.trust = trust
        self.timeout = timeout
        self.maximumResponseSize = maximumResponseSize
    }

    /// Sends `request` (its scheme must be `https`; its authority names host and port) with
    /// `body`, and returns the response. A server that fails verification gives the
    /// ``X509Error`` saying why; one that cannot be reached gives
    /// ``X509Error/connectionFailed(host:detail:)``.
    public func send(_ request: HTTPRequest, body: [UInt8]? = nil) async throws(X509Error) -> HTTPSResponse {
        guard request.scheme?.lowercased() == "https", let authority = request.authority else {
            throw X509Error.invalidArgument(detail: "a pinned request needs an https URL with a host")
        }
        let (host, port) = try Self.hostAndPort(authority, defaultPort: 443)
        let outcome = TLSVerificationOutcome()
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: PinnedTLS.clientConfiguration())
        } catch {
            throw X509Error.connectionFailed(host: authority, detail: "TLS could not be set up: \(error)")
        }
        let group = MultiThreadedEventLoopGroup.singleton
        let loop = group.next()
        let promise = loop.makePromise(of: HTTPSResponse.self)
        let limit = maximumResponseSize
        let trust = self.trust
        do {
            let channel = try await ClientBootstrap(group: loop)
                .connectTimeout(timeout)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let tls = try PinnedTLS.clientHandler(context: context, host: host, port: port, policy: trust, outcome: outcome)
                        try channel.pipeline.syncOperations.addHandler(tls)
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(ResponseCollector(promise: promise, limit: limit))
                    }
                }
                .connect(host: host, port: port).get()
            let deadline = loop.scheduleTask(in: timeout) {
                promise.fail(X509Error.connectionFailed(host: authority, detail: "no complete response within the timeout"))
                channel.close(promise: nil)
            }
            defer { deadline.cancel() }
            try await Self.write(request, body: body, authority: authority, to: channel)
            let response = try await promise.futureResult.get()
            return response
        } catch {
            promise.fail(error)
            if let verification = outcome.error { throw verification }
            if let error = error as? X509Error { throw error }
            throw X509Error.connectionFailed(host: authority, detail: Self.describe(error))
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
    public static func hostAndPort(_ authority: String, defaultPort: Int) throws(X509Error) -> (String, Int) {
        var host = Substring(authority)
        var port = defaultPort
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { throw X509Error.invalidArgument(detail: "\(authority): unclosed '['") }
            let rest = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if rest.hasPrefix(":") {
                guard let value = Int(rest.dropFirst()), (1...65535).contains(value) else {
                    throw X509Error.invalidArgument(detail: "\(authority): the port is not a number from 1 to 65535")
                }
                port = value
            }
        } else if let colon = host.lastIndex(of: ":") {
            guard let value = Int(host[host.index(after: colon)...]), (1...65535).contains(value) else {
                throw X509Error.invalidArgument(detail: "\(authority): the port is not a number from 1 to 65535")
            }
            port = value
            host = host[..<colon]
        }
        guard !host.isEmpty else { throw X509Error.invalidArgument(detail: "\(authority): no host") }
        return (String(host), port)
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? NIOConnectionError {
            return "cannot connect: " + error.connectionErrors.map { "\($0.error)" }.joined(separator: "; ")
        }
        return "\(error)"
    }
}

/// Collects one HTTP/1.1 response and completes the promise with it.
final class ResponseCollector: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart

    private let promise: EventLoopPromise<HTTPSResponse>
    private let limit: Int
    private var head: HTTPResponseHead?
    private var body: [UInt8] = []

    init(promise: EventLoopPromise<HTTPSResponse>, limit: Int) {
        self.promise = promise
        self.limit = limit
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
        case .body(let buffer):
            guard body.count + buffer.readableBytes <= limit else {
                promise.fail(X509Error.connectionFailed(host: "server", detail: "the response is larger than \(limit) bytes"))
                context.close(promise: nil)
                return
            }
            body += buffer.readableBytesView
        case .end:
            guard let head else { return }
            var fields = HTTPFields()
            for (name, value) in head.headers {
                if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
            }
            let status = HTTPResponse.Status(code: Int(head.status.code), reasonPhrase: head.status.reasonPhrase)
            promise.succeed(HTTPSResponse(
                head: HTTPResponse(status: status, headerFields: fields),
                version: "\(head.version.major).\(head.version.minor)", body: body))
            context.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(X509Error.connectionFailed(host: "server", detail: "the connection closed before a complete response"))
        context.fireChannelInactive()
    }
}

/// Reads the certificates a TLS server presents, without trusting them: for showing and
/// pinning them (`cert pin https://host:port`).
public enum TLSProbe {
    /// The certificates `host:port` presents, leaf first. The handshake is always abandoned
    /// after they arrive, so no data is ever exchanged with an unverified server.
    public static func presentedCertificates(host: String, port: Int, timeout: TimeAmount = .seconds(15)) async throws(X509Error) -> [Certificate] {
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
            if outcome.presented.isEmpty { throw X509Error.connectionFailed(host: name, detail: PinnedHTTPSClient.describe(error)) }
        }
        guard !outcome.presented.isEmpty else {
            throw X509Error.connectionFailed(host: name, detail: "the server presented no certificate")
        }
        return outcome.presented
    }
}
