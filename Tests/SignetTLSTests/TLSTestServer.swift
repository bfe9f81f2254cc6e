import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import SignetCore
import SignetX509
import X509

/// A real TLS server on loopback (SwiftNIO SSL) that answers every request with `hello`.
final class TLSTestServer: Sendable {
    let channel: any Channel
    let port: Int

    private init(channel: any Channel, port: Int) {
        self.channel = channel
        self.port = port
    }

    /// Serves `chain` (leaf first) with `key` on 127.0.0.1 and a free port.
    static func start(chain: [Certificate], key: PrivateKey) async throws -> TLSTestServer {
        let certificates = try chain.map { try NIOSSLCertificate(bytes: try X509Files.encode($0, as: .der), format: .der) }
        let nioKey = try NIOSSLPrivateKey(bytes: try key.encoded(as: .pem), format: .pem)
        let configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: certificates.map { .certificate($0) }, privateKey: .privateKey(nioKey))
        let context = try NIOSSLContext(configuration: configuration)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(HelloHandler())
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        guard let port = channel.localAddress?.port else { throw ChannelError.unknownLocalAddress }
        return TLSTestServer(channel: channel, port: port)
    }

    func stop() async {
        try? await channel.close()
    }
}

/// Answers any request with 200 and `hello`, then closes.
final class HelloHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .end = unwrapInboundIn(data) else { return }
        var headers = HTTPHeaders()
        headers.add(name: "Content-Length", value: "5")
        headers.add(name: "Connection", value: "close")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "hello")))), promise: nil)
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in loopBound.value.close(promise: nil) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

/// Collects pin failure reports.
actor CollectingReporter: PinFailureReporter {
    private(set) var reports: [PinFailureReport] = []

    func report(_ report: PinFailureReport) async {
        reports.append(report)
    }
}
