import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import SignetCore
import SignetTLS
import SignetX509
import X509

/// A root → intermediate → leaf chain for 127.0.0.1, made with SignetX509.
struct BenchPKI {
    let root: Certificate
    let intermediate: Certificate
    let leaf: Certificate
    let leafKey: PrivateKey

    static func make() async throws -> BenchPKI {
        let rootSigner = try SoftwareSigner(key: try PrivateKey.generate(.p256))
        let root = try await CertificateFactory.selfSigned(
            signer: rootSigner, subject: try SubjectParsing.distinguishedName("CN=Bench Root"), days: 30, profile: .ca,
            now: Date().addingTimeInterval(-3600))
        let intermediateSigner = try SoftwareSigner(key: try PrivateKey.generate(.p256))
        let intermediateCSR = try await CertificateFactory.csr(
            signer: intermediateSigner, subject: try SubjectParsing.distinguishedName("CN=Bench Intermediate"))
        let intermediate = try await CertificateFactory.issue(
            csr: intermediateCSR, csrSource: "intermediate", caCertificate: root, caSigner: rootSigner, profile: .ca, days: 20)
        let leafKey = try PrivateKey.generate(.p256)
        let leafCSR = try await CertificateFactory.csr(
            signer: try SoftwareSigner(key: leafKey), subject: try SubjectParsing.distinguishedName("CN=localhost"),
            alternativeNames: try SubjectParsing.alternativeNames("DNS:localhost,IP:127.0.0.1"))
        let leaf = try await CertificateFactory.issue(
            csr: leafCSR, csrSource: "leaf", caCertificate: intermediate, caSigner: intermediateSigner, profile: .server, days: 10)
        return BenchPKI(root: root, intermediate: intermediate, leaf: leaf, leafKey: leafKey)
    }
}

/// `signet-bench tls SECONDS`: TLS handshakes per second on loopback against an in-process
/// SwiftNIO SSL server, with the same client verifying chain and hostname without pins, then
/// with a pin set, in alternating rounds; BoringSSL's own verification (same roots, same
/// hostname) as the peer. Prints `nopins PINNED BORINGSSL` handshakes/s.
func tlsBench(seconds: Double) async throws {
    let pki = try await BenchPKI.make()
    let serverConfiguration = TLSConfiguration.makeServerConfiguration(
        certificateChain: try [pki.leaf, pki.intermediate].map { .certificate(try NIOSSLCertificate(bytes: try X509Files.encode($0, as: .der), format: .der)) },
        privateKey: .privateKey(try NIOSSLPrivateKey(bytes: try pki.leafKey.encoded(as: .pem), format: .pem)))
    let serverContext = try NIOSSLContext(configuration: serverConfiguration)
    let group = MultiThreadedEventLoopGroup.singleton
    let server = try await ServerBootstrap(group: group)
        .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
        .childChannelInitializer { channel in
            channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: serverContext)) }
        }
        .bind(host: "127.0.0.1", port: 0).get()
    let port = server.localAddress!.port!
    let pins = try PinSet(hosts: [HostPins(host: "127.0.0.1", pins: [pki.intermediate.publicKey.fingerprint, try PrivateKey.generate(.p256).publicKey.fingerprint])])
    let anchors = TrustAnchors.certificates([pki.root])
    let unpinned = TLSTrustPolicy(mode: .validatedChain(anchors), pins: nil)
    let pinned = TLSTrustPolicy(mode: .validatedChain(anchors), pins: pins)
    let clientContext = try NIOSSLContext(configuration: PinnedTLS.clientConfiguration())
    var boringConfiguration = TLSConfiguration.makeClientConfiguration()
    boringConfiguration.trustRoots = .certificates([try NIOSSLCertificate(bytes: try X509Files.encode(pki.root, as: .der), format: .der)])
    let boringContext = try NIOSSLContext(configuration: boringConfiguration)

    func handshake(_ policy: TLSTrustPolicy?) async throws {
        let done = group.next().makePromise(of: Void.self)
        let outcome = TLSVerificationOutcome()
        let channel = try await ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handler: NIOSSLClientHandler
                    if let policy {
                        handler = try PinnedTLS.clientHandler(context: clientContext, host: "127.0.0.1", port: port, policy: policy, outcome: outcome)
                    } else {
                        handler = try NIOSSLClientHandler(context: boringContext, serverHostname: nil)
                    }
                    try channel.pipeline.syncOperations.addHandler(handler)
                    try channel.pipeline.syncOperations.addHandler(HandshakeWaiter(promise: done))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        defer { channel.close(promise: nil) }
        try await done.futureResult.get()
        if let error = outcome.error { throw error }
    }

    var counts = [0, 0, 0]
    var times = [0.0, 0.0, 0.0]
    let policies: [TLSTrustPolicy?] = [unpinned, pinned, nil]
    let round = 0.25
    let start = Date()
    while Date().timeIntervalSince(start) < seconds * 3 {
        for (index, policy) in policies.enumerated() {
            let roundStart = Date()
            while Date().timeIntervalSince(roundStart) < round {
                try await handshake(policy)
                counts[index] += 1
            }
            times[index] += Date().timeIntervalSince(roundStart)
        }
    }
    try await server.close()
    let rates = (0..<3).map { Double(counts[$0]) / times[$0] }
    print(String(format: "%.0f %.0f %.0f", rates[0], rates[1], rates[2]))
}

/// Completes its promise when the TLS handshake has completed (or fails it).
final class HandshakeWaiter: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    let promise: EventLoopPromise<Void>

    init(promise: EventLoopPromise<Void>) { self.promise = promise }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let tls = event as? TLSUserEvent, case .handshakeCompleted = tls { promise.succeed(()) }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) { promise.fail(error) }
    func channelInactive(context: ChannelHandlerContext) { promise.fail(ChannelError.ioOnClosedChannel) }
}

/// `signet-bench chain-verify DIR COUNT`: writes root.pem, intermediate.pem and leaf.pem into
/// DIR (for `openssl verify` on the same chain) and prints chain validations per second with
/// SignetX509's ChainVerifier (RFC 5280 and the hostname), in-process.
func chainVerifyBench(folder: String, count: Int) async throws {
    let pki = try await BenchPKI.make()
    for (name, certificate) in [("root", pki.root), ("intermediate", pki.intermediate), ("leaf", pki.leaf)] {
        try Data(try X509Files.encode(certificate, as: .pem)).write(to: URL(fileURLWithPath: folder + "/\(name).pem"))
    }
    let verifier = ChainVerifier(anchors: .certificates([pki.root]))
    _ = try await verifier.verify(leaf: pki.leaf, intermediates: [pki.intermediate], hostname: "127.0.0.1")
    let start = Date()
    for _ in 0..<count {
        _ = try await verifier.verify(leaf: pki.leaf, intermediates: [pki.intermediate], hostname: "127.0.0.1")
    }
    print(String(format: "%.0f", Double(count) / Date().timeIntervalSince(start)))
}
