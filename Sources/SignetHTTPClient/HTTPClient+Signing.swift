import AsyncHTTPClient
import HTTPTypes
import NIOCore
import NIOHTTP1
import SignetHTTP

extension HTTPClientRequest {
    /// A request for AsyncHTTPClient from a swift-http-types request and its body.
    public init(_ request: HTTPRequest, body: [UInt8]?) throws {
        guard let scheme = request.scheme, let authority = request.authority else {
            throw HTTPSignatureError.invalidArgument(detail: "the request needs a scheme and an authority to be sent")
        }
        self.init(url: "\(scheme)://\(authority)\(request.path ?? "/")")
        method = HTTPMethod(rawValue: request.method.rawValue)
        headers = HTTPHeaders(request.headerFields.map { ($0.name.rawName, $0.value) })
        if let body, !body.isEmpty || request.method != .get { self.body = .bytes(ByteBuffer(bytes: body)) }
    }
}

extension HTTPClient {
    /// Signs `request` (RFC 9421, with `Content-Digest` for a body) and sends it.
    ///
    /// The request must carry the scheme and authority the server will see, since
    /// `@target-uri` and `@authority` are signed: `http://127.0.0.1:8080` is signed as
    /// `127.0.0.1:8080`, and AsyncHTTPClient sends that same `Host`.
    public func execute(
        signing request: HTTPRequest, body: [UInt8]? = nil, with signer: HTTPMessageSigner, timeout: TimeAmount = .seconds(30)
    ) async throws -> HTTPClientResponse {
        var signed = request
        try await signer.sign(&signed, body: body)
        return try await execute(try HTTPClientRequest(signed, body: body), timeout: timeout)
    }
}
