import AsyncHTTPClient
import HTTPTypes
import Hummingbird
import HummingbirdAuth
import Logging
import NIOCore
import NIOEmbedded
import SignetCore
import SignetHTTP
import SignetHTTPClient
import SignetHummingbird
import Testing

/// Requests whose head declares no body (no Content-Length, Transfer-Encoding or
/// Content-Digest) are verified without reading one; over HTTP/2 or 3 one may come anyway.
@Suite("HTTPSignatureAuthenticator and bodies the head does not declare")
struct UndeclaredBodyTests {
    /// A signed POST /echo with no body given, so no Content-Digest, and the body `streamed`
    /// arriving as HTTP/2 DATA would: with no Content-Length.
    static func request(signedBy signer: HTTPMessageSigner, streaming streamed: String?) async throws -> Request {
        var head = HTTPRequest(method: .post, scheme: "http", authority: "127.0.0.1:8080", path: "/echo")
        try await signer.sign(&head)
        #expect(head.headerFields[.contentDigest] == nil && head.headerFields[.contentLength] == nil)
        let (body, source) = RequestBody.makeStream()
        if let streamed { await source.yield(ByteBuffer(string: streamed)) }
        source.finish()
        return Request(head: head, body: body)
    }

    static func context() -> SignedContext {
        SignedContext(source: .init(channel: EmbeddedChannel(), logger: Logger(label: "signet.undeclared-body-test")))
    }

    /// Runs the authenticator with a route that reads the body; returns what it read and the
    /// identity it saw.
    static func handle(
        _ request: Request, policy: HTTPSignaturePolicy = .default, keys: TestKeys
    ) async throws -> (body: String, keyID: String?) {
        let verifier = HTTPMessageVerifier(keys: keys.store, policy: policy, nonceCache: InMemoryNonceCache())
        let authenticator = HTTPSignatureAuthenticator<SignedContext>(verifier: verifier)
        var keyID: String?
        var read = ""
        _ = try await authenticator.handle(request, context: context()) { request, context in
            keyID = context.identity?.keyID
            read = String(buffer: try await request.body.collect(upTo: 1 << 20))
            return Response(status: .ok)
        }
        return (read, keyID)
    }

    @Test("with none coming, the request is verified and the route reads an empty body")
    func noBody() async throws {
        let keys = try TestKeys()
        let signer = try keys.signer(.ed25519)
        let (body, keyID) = try await Self.handle(try await Self.request(signedBy: signer, streaming: nil), keys: keys)
        #expect(body.isEmpty)
        #expect(keyID == keys.keyID(.ed25519))
    }

    @Test("a body that comes anyway is refused with 401 when the route reads it, as a body without Content-Digest is")
    func undeclaredBodyRefused() async throws {
        let keys = try TestKeys()
        let request = try await Self.request(signedBy: try keys.signer(.hmacSHA256), streaming: "smuggled")
        let error = try #require(await #expect(throws: HTTPError.self) { try await Self.handle(request, keys: keys) })
        #expect(error.status == .unauthorized)
        #expect(error.body?.contains("a body came without a Content-Digest field") == true, "\(error)")
        #expect(error.headers[.acceptSignature]?.contains("\"content-digest\"") == true)
    }

    @Test("when the policy lets bodies go without a digest, the route reads the body as it came")
    func undeclaredBodyAllowed() async throws {
        let keys = try TestKeys()
        var policy = HTTPSignaturePolicy()
        policy.requireContentDigestWithBody = false
        let request = try await Self.request(signedBy: try keys.signer(.ecdsaP256), streaming: "as it came")
        let (body, keyID) = try await Self.handle(request, policy: policy, keys: keys)
        #expect(body == "as it came")
        #expect(keyID == keys.keyID(.ecdsaP256))
    }

    @Test("over HTTP/1.1, a chunked body is read before the check: without a signed Content-Digest it is refused, with one echoed")
    func chunkedBody() async throws {
        try await withLiveServer { server in
            let signer = try server.keys.signer(.ed25519)
            func chunked(_ request: HTTPRequest, _ text: String) throws -> HTTPClientRequest {
                var sent = try HTTPClientRequest(request, body: nil)
                sent.body = .stream(AsyncStream { $0.yield(ByteBuffer(string: text)); $0.finish() }, length: .unknown)
                return sent
            }
            let unsigned = try await server.send(try chunked(try await server.signed(.post, "/echo", with: signer), "unsigned"))
            #expect(unsigned.status == 401, "\(unsigned)")
            #expect(unsigned.errorMessage.contains("content-digest"), "\(unsigned)")
            let text = "signed, sent chunked"
            let signed = try await server.send(try chunked(try await server.signed(.post, "/echo", body: Array(text.utf8), with: signer), text))
            #expect(signed.status == 200, "\(signed)")
            #expect(signed.body == text)
        }
    }
}
