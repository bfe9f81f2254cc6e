import NIOCore
import NIOSSL
import Synchronization
import SignetCore
import SignetX509
import X509

/// What a TLS handshake's verification decided, kept so a failed handshake can be reported
/// with the precise reason (SwiftNIO SSL only says that verification failed).
public final class TLSVerificationOutcome: Sendable {
    private let state = Mutex<(error: X509Error?, presented: [Certificate], task: Task<Void, Never>?, decided: Bool)>((nil, [], nil, false))

    /// An empty outcome.
    public init() {}

    /// The reason verification failed, if it did.
    public var error: X509Error? { state.withLock { $0.error } }
    /// The certificates the server presented, leaf first.
    public var presented: [Certificate] { state.withLock { $0.presented } }

    func record(presented: [Certificate]) { state.withLock { $0.presented = presented } }
    func attach(_ task: Task<Void, Never>) { state.withLock { $0.task = task } }
    func recordDecided() { state.withLock { $0.decided = true } }

    /// Whether the server's certificates were presented and their verification had not yet
    /// decided (a deadline that passes then is the verification's, not the server's answer's).
    public var verifying: Bool { state.withLock { !$0.presented.isEmpty && !$0.decided } }

    /// Stops a verification still running (the handshake or request timed out, or the
    /// connection closed): its work ends at the next certificate it would check.
    public func cancelVerification() {
        state.withLock { $0.task }?.cancel()
    }
    func record(error: X509Error) { state.withLock { $0.error = error } }
}

/// Builds SwiftNIO SSL client handlers that verify servers with a ``TLSTrustPolicy``.
public enum PinnedTLS {
    /// A client configuration: TLS 1.2 or later, verification on (the policy's callback then
    /// replaces BoringSSL's checks entirely; nothing is skipped).
    public static func clientConfiguration() -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        configuration.certificateVerification = .fullVerification
        return configuration
    }

    /// A client handler for `host:port` whose verification is `policy`; `outcome` receives the
    /// presented chain and any failure. SNI is sent for names, not for IP literals.
    public static func clientHandler(
        context: NIOSSLContext, host: String, port: Int, policy: TLSTrustPolicy, outcome: TLSVerificationOutcome
    ) throws -> NIOSSLClientHandler {
        let sni = SubjectParsing.ipAddressBytes(host) == nil ? host : nil
        return try NIOSSLClientHandler(context: context, serverHostname: sni, customVerificationCallbackWithMetadata: { certificates, promise in
            let presented: [Certificate]
            do {
                presented = try certificates.map { try Certificate(derEncoded: try $0.toDERBytes()) }
            } catch {
                outcome.record(error: X509Error.malformed(source: host, detail: "the server's certificate cannot be read (\(error))"))
                promise.succeed(.failed)
                return
            }
            outcome.record(presented: presented)
            let verification = Task {
                do {
                    let chain = try await policy.evaluate(presented: presented, host: host, port: port)
                    let nioChain = try chain.map { try NIOSSLCertificate(bytes: try X509Files.derBytes(of: $0), format: .der) }
                    outcome.recordDecided()
                    promise.succeed(.certificateVerified(VerificationMetadata(ValidatedCertificateChain(nioChain))))
                } catch let error as X509Error {
                    outcome.record(error: error)
                    outcome.recordDecided()
                    promise.succeed(.failed)
                } catch {
                    outcome.record(error: X509Error.chainInvalid(subject: host, detail: "\(error)"))
                    outcome.recordDecided()
                    promise.succeed(.failed)
                }
            }
            outcome.attach(verification)
        })
    }
}
