import SignetAPI
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SignetCore
import SignetHTTP

/// Writes every response the API gives — JSON bodies, RFC 9457 problem documents, empty
/// replies — and signs it with the server's key when the request asks (`Accept-Signature`),
/// covering the status, the body's digest and the request's method and target URI, so a
/// client can tell that this answer came from the server, for this request.
public struct ServerResponder: Sendable {
    /// Signs responses; nil never signs.
    public let signer: HTTPMessageSigner?
    /// The scheme and authority of the request as the client sent and signed it (a response
    /// signature covers the request's target URI, which the server must see as the client did).
    public let publicScheme: String?
    public let publicAuthority: String?

    /// The most request signatures an answer covers, and the largest `Signature-Input` read
    /// for their labels: what the server's verifier reads, so that an unauthenticated request
    /// cannot make the server sign over thousands of labels.
    let maximumSignatures: Int
    let maximumFieldBytes: Int
    /// Where refusals are counted by problem code (the server's metrics).
    var metrics: ServerMetrics?

    /// A responder signing with `signer` when asked; it covers the labels of at most as many
    /// request signatures as `policy` lets a verifier read.
    public init(
        signer: (any Signer)?, publicScheme: String? = nil, publicAuthority: String? = nil, policy: HTTPSignaturePolicy = HTTPSignaturePolicy()
    ) {
        self.publicScheme = publicScheme
        self.publicAuthority = publicAuthority
        maximumSignatures = policy.maximumSignatures
        maximumFieldBytes = policy.maximumFieldBytes
        self.signer = signer.map { signer in
            var messageSigner = HTTPMessageSigner(key: .signer(signer))
            messageSigner.label = APISignatureRules.responseLabel
            return messageSigner
        }
    }

    /// What a response signature covers: the status, the body's digest, and which request it
    /// answers — its method, target URI and, for a signed request, the request's own signature
    /// (`"signature";req;key=LABEL`, RFC 9421 §2.4), so the answer cannot be replayed to
    /// another request, not even one for the same URL.
    static func components(hasBody: Bool, requestLabels: [String], fields: [String] = []) -> [SignatureComponent] {
        var method = SignatureComponent.method
        method.fromRequest = true
        var target = SignatureComponent.targetURI
        target.fromRequest = true
        let signatures = requestLabels.map { label in
            var component = SignatureComponent("signature")
            component.key = label
            component.fromRequest = true
            return component
        }
        return [.status] + (hasBody ? [.contentDigest] : []) + fields.map { SignatureComponent($0) } + [method, target] + signatures
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// A JSON response.
    public func json(_ value: some Encodable, status: HTTPResponse.Status = .ok, for request: Request, headers: HTTPFields = [:]) async throws -> Response {
        let bytes = Array(try Self.encoder.encode(value))
        var fields = headers
        fields[.contentType] = "application/json"
        return try await response(status: status, fields: fields, body: bytes, for: request)
    }

    /// An empty response (204 by default).
    public func empty(status: HTTPResponse.Status = .noContent, for request: Request) async throws -> Response {
        try await response(status: status, fields: [:], body: [], for: request)
    }

    /// The problem document for `error` (RFC 9457): `type` ends in the error's stable code.
    public func problem(_ error: ServerError, for request: Request, headers: HTTPFields = [:]) async -> Response {
        var fields = headers
        switch error {
        case .rateLimited(let retryAfter), .overloaded(let retryAfter): fields[.retryAfter] = String(retryAfter)
        // The rest of a body that did not come in time is not waited for: the connection ends.
        case .requestTimeout: fields[.connection] = "close"
        default: break
        }
        // Only errors with a problem code reach a client; the others answer as unavailable,
        // without their detail.
        guard let code = error.problemCode else {
            return await problem(.unavailable(detail: error.description), for: request, headers: headers)
        }
        return await problem(code: code, detail: error.description, for: request, headers: fields)
    }

    /// A problem document with the given code and detail, answered with the code's status.
    func problem(code: ProblemCode, detail: String, for request: Request, headers: HTTPFields) async -> Response {
        let status = code.httpStatus
        metrics?.refusal(code)
        let document = ProblemDocument(code: code, detail: detail, instance: request.uri.path)
        var fields = headers
        fields[.contentType] = ProblemDocument.mediaType
        let body = (try? Self.encoder.encode(document)).map(Array.init) ?? []
        do {
            return try await response(status: status, fields: fields, body: body, for: request)
        } catch {
            return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
    }

    func response(status: HTTPResponse.Status, fields: HTTPFields, body: [UInt8], for request: Request) async throws -> Response {
        var head = HTTPResponse(status: status, headerFields: fields)
        // A client waits as long as Retry-After says: the signature covers it, so that nobody
        // on the way can make it wait forever or hammer the server.
        let covering = fields[.retryAfter] == nil ? [] : ["retry-after"]
        try await sign(&head, body: body, hasBody: !body.isEmpty, covering: covering, for: request)
        return Response(status: head.status, headers: head.headerFields, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// A response whose body is written as it is read (a stored resource): `contentDigest`, the
    /// digests of exactly the bytes `body` writes, goes into `Content-Digest`, which a
    /// signature covers like any other body's; the signature also covers the header fields
    /// named in `covering` (a resource's `ETag`, a part's `Content-Range`).
    func streamed(
        status: HTTPResponse.Status, fields: HTTPFields, contentDigest: [ContentDigest.Algorithm: [UInt8]]?, covering: [String] = [],
        body: ResponseBody, for request: Request
    ) async throws -> Response {
        var head = HTTPResponse(status: status, headerFields: fields)
        if let contentDigest { head.headerFields[.contentDigest] = ContentDigest.fieldValue(contentDigest) }
        try await sign(&head, body: nil, hasBody: contentDigest != nil, covering: covering, for: request)
        return Response(status: head.status, headers: head.headerFields, body: body)
    }

    /// Adds the `server` signature when the request asks for one.
    private func sign(_ head: inout HTTPResponse, body: [UInt8]?, hasBody: Bool, covering: [String] = [], for request: Request) async throws {
        guard var signer, request.headers[.acceptSignature] != nil else { return }
        let labels = request.headers[.signature] == nil
            ? [] : request.headers.signatureLabels(maximumSignatures: maximumSignatures, maximumFieldBytes: maximumFieldBytes).sorted()
        signer.components = Self.components(hasBody: hasBody, requestLabels: labels, fields: covering)
        var answered = request.head
        if let publicScheme { answered.scheme = publicScheme }
        if let publicAuthority { answered.authority = publicAuthority }
        try await signer.sign(&head, body: body, answering: answered)
    }
}
