import HTTPTypes
import SignetTLS
import SignetX509

/// What carries the client's requests: one request, one response. The library's is
/// ``PinnedTransport`` (SwiftNIO SSL, pins enforced on every connection); a URLSession one can
/// take its place on Apple platforms.
public protocol ClientTransport: Sendable {
    /// Sends `request` with `body` and returns the response's head and body, or throws a
    /// ``ClientError`` (pin mismatch, untrusted server, unreachable).
    func send(_ request: HTTPRequest, body: [UInt8]?) async throws -> (HTTPResponse, [UInt8])

    /// Sends a bodiless `request` and streams the body of a response `sink` accepts into it as
    /// it arrives (the returned body is then empty); other responses come back whole. A
    /// transport without streaming may read the body first and hand it over (the default).
    func download(_ request: HTTPRequest, to sink: any HTTPSBodySink) async throws -> (HTTPResponse, [UInt8])

    /// This transport allowing each exchange at least `timeout` (a large upload); a transport
    /// without its own timeout returns itself (the default).
    func with(timeout: Duration) -> any ClientTransport
}

extension ClientTransport {
    public func with(timeout: Duration) -> any ClientTransport { self }

    public func download(_ request: HTTPRequest, to sink: any HTTPSBodySink) async throws -> (HTTPResponse, [UInt8]) {
        let (head, body) = try await send(request, body: nil)
        do {
            guard try sink.accepts(head) else { return (head, body) }
            try body.withUnsafeBytes { try sink.write($0) }
        } catch {
            throw ClientError.storage(detail: "\(error)")
        }
        return (head, [])
    }
}

/// HTTPS over SwiftNIO SSL with the chain, hostname and pins checked on every connection
/// (``PinnedHTTPSClient``). AsyncHTTPClient has no hook for that check, so it is not used here.
public struct PinnedTransport: ClientTransport {
    /// The client underneath.
    public let client: PinnedHTTPSClient

    /// A transport trusting servers by `trust`, giving each exchange `timeout` to complete.
    public init(trust: TLSTrustPolicy, timeout: Duration = .seconds(30)) {
        client = PinnedHTTPSClient(trust: trust, timeout: timeout)
    }

    /// A transport sending through `client`.
    public init(client: PinnedHTTPSClient) {
        self.client = client
    }

    /// This transport allowing each exchange at least `timeout` (never less than it allowed).
    public func with(timeout: Duration) -> any ClientTransport {
        var client = client
        client.timeout = max(client.timeout, timeout)
        return PinnedTransport(client: client)
    }

    public func send(_ request: HTTPRequest, body: [UInt8]?) async throws -> (HTTPResponse, [UInt8]) {
        do {
            let response = try await client.send(request, body: body)
            return (response.head, response.body)
        } catch let error as TLSError {
            throw Self.clientError(error)
        }
    }

    public func download(_ request: HTTPRequest, to sink: any HTTPSBodySink) async throws -> (HTTPResponse, [UInt8]) {
        do {
            let response = try await client.download(request, to: sink)
            return (response.head, response.body)
        } catch let error as TLSError {
            throw Self.clientError(error)
        }
    }

    static func clientError(_ error: TLSError) -> ClientError {
        switch error {
        case .untrusted(_, .pinMismatch(let host, _, _)): return .pinMismatch(host: host)
        case .untrusted: return .untrustedServer(detail: error.description)
        case .connectionFailed, .invalidArgument: return .unreachable(detail: error.description)
        }
    }
}
