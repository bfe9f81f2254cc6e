import HTTPTypes
import Hummingbird
import HummingbirdAuth
import NIOCore
import SignetHTTP

/// A Hummingbird authenticator that verifies RFC 9421 signatures on each request, body
/// digest included, and puts the identity it establishes into the request context.
///
/// It has the shape of hummingbird-auth's authenticators, so it combines with that package's
/// sessions, `IsAuthenticatedMiddleware` and policies:
///
/// ```swift
/// let router = Router(context: BasicAuthRequestContext<VerifiedHTTPSignature>.self)
/// router.add(middleware: HTTPSignatureAuthenticator(verifier: verifier))
/// router.post("/orders") { request, context in
///     let signer = try context.requireIdentity().keyID
///     …
/// }
/// ```
///
/// A request whose signature fails any check gets 401 with the reason and an
/// `Accept-Signature` field saying what to sign. A request with no signature at all gets the
/// same, unless ``MissingSignature/passThrough`` lets it continue unauthenticated (for routes
/// that accept another kind of authentication).
public struct HTTPSignatureAuthenticator<Context: AuthRequestContext>: AuthenticatorMiddleware {
    /// What a verified request is authenticated as: the request context's identity type.
    public typealias Identity = Context.Identity

    /// What to do with a request that carries no signature.
    public enum MissingSignature: Sendable {
        /// Answer 401 with the `Accept-Signature` hint.
        case reject
        /// Continue with no identity; a later middleware or the route decides.
        case passThrough
    }

    /// The verifier: keys, policy, replay cache.
    public let verifier: HTTPMessageVerifier
    /// The largest body read for verification; larger requests get 413.
    public let maximumBodySize: Int
    /// What to do with unsigned requests.
    public let missingSignature: MissingSignature
    /// The scheme and authority clients sign, when the server sees others (behind a TLS
    /// proxy, for example); nil uses the request's own.
    public let publicScheme: String?
    /// The authority (host and port) clients sign, when the server sees another; nil uses the
    /// request's own.
    public let publicAuthority: String?
    private let makeIdentity: @Sendable (VerifiedHTTPSignature, Request, Context) async throws -> Identity?

    /// An authenticator whose identity is built from the verified signature (e.g. an account
    /// looked up by key id); returning nil leaves the request unauthenticated.
    public init(
        verifier: HTTPMessageVerifier, maximumBodySize: Int = 1 << 20, missingSignature: MissingSignature = .reject,
        publicScheme: String? = nil, publicAuthority: String? = nil,
        identity: @escaping @Sendable (VerifiedHTTPSignature, Request, Context) async throws -> Identity?
    ) {
        self.verifier = verifier
        self.maximumBodySize = maximumBodySize
        self.missingSignature = missingSignature
        self.publicScheme = publicScheme
        self.publicAuthority = publicAuthority
        self.makeIdentity = identity
    }

    /// Collects the body, if the request may have one (so the route can still read it), then
    /// authenticates.
    ///
    /// A request whose head shows no body is verified without reading one: `Content-Length: 0`,
    /// or none of `Content-Length`, `Transfer-Encoding` and `Content-Digest` — over HTTP/1.1
    /// that means no body (RFC 9112 §6.3). Over HTTP/2 or 3 such a request may still stream
    /// one. When the policy wants a digest with every body
    /// (``HTTPSignaturePolicy/requireContentDigestWithBody``, the default), a route that reads
    /// it gets the 401 the verifier gives a body the signature does not cover — at the read,
    /// so after the nonce was recorded and the identity made. With that policy off the route
    /// reads such a body as it streams, unsigned and not limited by ``maximumBodySize``.
    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // An unsigned request is answered (or passed on) before its body is read.
        if Self.isUnsigned(request) {
            if missingSignature == .passThrough { return try await next(request, context) }
            throw verifier.answer(.missingSignature(detail: "the request has no Signature-Input and Signature fields"))
        }
        var request = request
        let body: ByteBuffer?
        if Self.mayHaveBody(request.headers) {
            body = try await request.collectBody(upTo: maximumBodySize)
        } else {
            body = nil
            if verifier.policy.requireContentDigestWithBody {
                request.body = RequestBody(asyncSequence: UndeclaredBody(body: request.body, verifier: verifier))
            }
        }
        var context = context
        if let identity = try await authenticate(request: request, body: body, context: context) {
            context.identity = identity
        }
        return try await next(request, context)
    }

    /// Verifies the request's signature and returns the identity built from it: nil when the
    /// request is unsigned and passes through, or the identity closure gives none. A failed
    /// check throws 401 with `Accept-Signature`, a full replay cache 503, and a body over
    /// ``maximumBodySize`` 413.
    public func authenticate(request: Request, context: Context) async throws -> Identity? {
        if missingSignature == .passThrough, Self.isUnsigned(request) {
            return nil
        }
        let body = try await request.body.collect(upTo: maximumBodySize)
        return try await authenticate(request: request, body: body, context: context)
    }

    /// ``authenticate(request:context:)`` with the body collected (nil: none declared). The
    /// body is hashed only once a signature has passed its check, so a request nobody signed
    /// costs no hashing of what it carries.
    private func authenticate(request: Request, body: ByteBuffer?, context: Context) async throws -> Identity? {
        let fields = request.headers
        let verified: VerifiedHTTPSignature
        do {
            verified = try await verifier.verify(.request(publicHead(request.head)), hasBody: (body?.readableBytes ?? 0) > 0) {
                body.flatMap { Self.digests(of: $0, stated: fields) }
            }
        } catch let error as HTTPSignatureError {
            throw verifier.answer(error)
        }
        return try await makeIdentity(verified, request, context)
    }

    /// The digests of a collected body — only those its `Content-Digest` states, when it states
    /// one the verifier knows (hashing 64 KiB twice is most of what an unauthenticated request
    /// with a body costs) — and none for an empty body (a GET's usual case).
    private static func digests(of body: ByteBuffer, stated fields: HTTPFields) -> [ContentDigest.Algorithm: [UInt8]]? {
        guard body.readableBytes > 0 else { return nil }
        let stated = fields[.contentDigest].flatMap { try? ContentDigest.parse($0) }.map { Set($0.keys) } ?? []
        return ContentDigest.digests(of: body.readableBytesView, algorithms: stated.isEmpty ? [.sha256, .sha512] : stated)
    }

    /// Whether the head leaves room for a body: a `Content-Digest` to check (even of an empty
    /// one), a `Content-Length` other than 0, or `Transfer-Encoding`.
    private static func mayHaveBody(_ headers: HTTPFields) -> Bool {
        if headers.contains(.contentDigest) || headers.contains(.transferEncoding) { return true }
        guard let length = headers[.contentLength] else { return false }
        return length != "0"
    }

    /// Verifies a request's head against body digests known otherwise — a body streamed to
    /// storage, checked against the digests after (the route's job) — with the public scheme and
    /// authority put in and the failures answered as ``authenticate(request:context:)`` answers
    /// them (401 with `Accept-Signature`, a full replay cache 503).
    public func verify(head: HTTPRequest, bodyDigests: [ContentDigest.Algorithm: [UInt8]]?) async throws -> VerifiedHTTPSignature {
        do {
            return try await verifier.verify(.request(publicHead(head)), bodyDigests: bodyDigests)
        } catch let error as HTTPSignatureError {
            throw verifier.answer(error)
        }
    }

    /// Whether the request has neither signature field (looked up, not read: no value is joined).
    private static func isUnsigned(_ request: Request) -> Bool {
        !request.headers.contains(.signatureInput) && !request.headers.contains(.signature)
    }

    /// The head as clients signed it: the public scheme and authority put in, when set.
    private func publicHead(_ head: HTTPRequest) -> HTTPRequest {
        guard publicScheme != nil || publicAuthority != nil else { return head }
        var head = head
        if let publicScheme { head.scheme = publicScheme }
        if let publicAuthority { head.authority = publicAuthority }
        return head
    }

    /// The `Accept-Signature` hint (RFC 9421 §5.1) of the verifier
    /// (``HTTPMessageVerifier/acceptSignature``).
    public var acceptSignature: String { verifier.acceptSignature }
}

extension HTTPSignatureAuthenticator where Context.Identity == VerifiedHTTPSignature {
    /// An authenticator whose identity is the verified signature itself (key id, algorithm,
    /// parameters).
    public init(
        verifier: HTTPMessageVerifier, maximumBodySize: Int = 1 << 20, missingSignature: MissingSignature = .reject,
        publicScheme: String? = nil, publicAuthority: String? = nil
    ) {
        self.init(
            verifier: verifier, maximumBodySize: maximumBodySize, missingSignature: missingSignature,
            publicScheme: publicScheme, publicAuthority: publicAuthority, identity: { verified, _, _ in verified })
    }
}

/// The body of a verified request whose head declared none (`Content-Length: 0`, or no
/// `Content-Length`, `Transfer-Encoding` or `Content-Digest`): over HTTP/2 or 3 one may still
/// come. Bytes that do are refused when read, as the verifier refuses a body its signature
/// does not cover.
struct UndeclaredBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let body: RequestBody
    let verifier: HTTPMessageVerifier

    struct AsyncIterator: AsyncIteratorProtocol {
        var body: RequestBody.AsyncIterator
        let verifier: HTTPMessageVerifier

        mutating func next() async throws -> ByteBuffer? {
            while let chunk = try await body.next() {
                guard chunk.readableBytes == 0 else {
                    // What the verifier says of a body the signature does not cover.
                    throw verifier.answer(.componentNotCovered("content-digest"))
                }
            }
            return nil
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(body: body.makeAsyncIterator(), verifier: verifier) }
}

extension HTTPMessageVerifier {
    /// The HTTP answer to a failed verification: 503 with `Retry-After` for a full replay
    /// cache or a key store that could not be read, otherwise 401 with the reason and
    /// `Accept-Signature`.
    func answer(_ error: HTTPSignatureError) -> HTTPError {
        switch error {
        case .replayCacheFull, .keyStoreUnavailable:
            return HTTPError(.serviceUnavailable, headers: [.retryAfter: "1"], message: error.description)
        default: break
        }
        return HTTPError(.unauthorized, headers: [.acceptSignature: acceptSignature], message: error.description)
    }
}
