import HTTPTypes
import SignetTLS
import SignetX509

/// What carries the client's requests: one request, one response. The library's is
/// ``PinnedTransport`` (SwiftNIO SSL, pins enforced on every connection); a URLSession one can
/// take its place on Apple platforms.
public protocol ClientTransport: Sendable {
    /// Sends `request` with `body` and returns the response's head and body, or throws a
    /// ``ClientError`` (pin mismatch, untrusted server, unreachable).
    func send(_ request: HTTPRequest, body: [UInt8]?) async throws(ClientError) -> (HTTPResponse, [UInt8])
}

/// HTTPS over SwiftNIO SSL with the chain, hostname and pins checked on every connection
/// (``PinnedHTTPSClient``). AsyncHTTPClient has no hook for that check, so it is not used here.
public struct PinnedTransport: ClientTransport {
    /// The client underneath.
    public let client: PinnedHTTPSClient

    /// A transport trusting servers by `trust`.
    public init(trust: TLSTrustPolicy) {
        client = PinnedHTTPSClient(trust: trust)
    }

    public func send(_ request: HTTPRequest, body: [UInt8]?) async throws(ClientError) -> (HTTPResponse, [UInt8]) {
        do {
            let response = try await client.send(request, body: body)
            return (response.head, response.body)
        } catch {
            switch error {
            case .pinMismatch(let host, _, _): throw .pinMismatch(host: host)
            case .chainInvalid, .hostnameMismatch: throw .untrustedServer(detail: error.description)
            default: throw .unreachable(detail: error.description)
            }
        }
    }
}
