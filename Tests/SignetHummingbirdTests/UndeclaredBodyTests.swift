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

/// Requests whose head declares no body (`Content-Length: 0`, or no Content-Length,
/// Transfer-Encoding or Content-Digest) are verified without reading one; over HTTP/2 or 3
/// one may come anyway.
@Suite("HTTPSignatureAuthenticator and bodies the head does not declare")
struct UndeclaredBodyTests {
    /// A signed POST /echo whose body, `streamed`, arrives as HTTP/2 DATA would: after a head
    /// with the fields `extra` and, unless `signedBody` is given, no Content-Digest.
    static func request(
        signedBy signer: HTTPMessageSigner, signedBody: String? = nil, extra: HTTPFields = [:], streaming streamed: String?
    ) async throws -> Request {
        var head = HTTPRequest(method: .post, scheme: "http", authority: "127.0.0.1:8080", path: "/echo", headerFields: extra)
        try await signer.sign(&head, body: signedBody.map { Array($0.utf8) })
        let (body, source) = RequestBody.makeStream()
        if let streamed { await source.yield(ByteBuffer(string: streamed)) }
        source.finish()
        return Request(head: head, body: body)
    }

    /// What the route behind the authenticator saw: the identity's key id (nil: it did not
    /// run), and the body it read or the error reading it threw.
    struct Outcome {
        var keyID: String?
        var body: Result<String, any Error> = .success("")
    }

    /// Runs the authenticator with a route that reads the body.
    static func handle(_ request: Request, policy: HTTPSignaturePolicy = .default, keys: TestKeys) async throws -> Outcome {
        let verifier = HTTPMessageVerifier(keys: keys.store, policy: policy, nonceCache: InMemoryNonceCache())
        let authenticator = HTTPSignatureAuthenticator<SignedContext>(verifier: verifier)
        let context = SignedContext(source: .init(channel: EmbeddedChannel(), logger: Logger(label: "signet.undeclared-body-test")))
        var outcome = Outcome()
        _ = try await authenticator.handle(request, context: context) { request, context in
            outcome.keyID = context.identity?.keyID
            do {
                outcome.body = .success(String(buffer: try await request.body.collect(upTo: 1 << 20)))
            } catch {
                outcome.body = .failure(error)
            }
            return Response(status: .ok)
        }
        return outcome
    }

    /// Expects the route to have run under `keyID` and its body read to be refused as a body
    /// the signature does not cover: 401 with the Accept-Signature hint.
    static func expectRefusedRead(_ outcome: Outcome, keyID: String) throws {
        #expect(outcome.keyID == keyID)
        guard case .failure(let failure) = outcome.body else {
            Issue.record("the body was read: \(outcome.body)")
            return
        }
        let error = try #require(failure as? HTTPError)
        #expect(error.status == .unauthorized)
        #expect(error.body == HTTPSignatureError.componentNotCovered("content-digest").description, "\(error)")
        #expect(error.headers[.acceptSignature]?.contains("\"content-digest\"") == true)
    }

    @Test("with none coming, the request is verified and the route reads an empty body")
    func noBody() async throws {
        let keys = try TestKeys()
        let outcome = try await Self.handle(try await Self.request(signedBy: try keys.signer(.ed25519), streaming: nil), keys: keys)
        #expect(outcome.keyID == keys.keyID(.ed25519))
        #expect(try outcome.body.get().isEmpty)
    }

    @Test("a body that comes anyway is refused with 401 when the route reads it, as an uncovered body is")
    func undeclaredBodyRefused() async throws {
        let keys = try TestKeys()
        let request = try await Self.request(signedBy: try keys.signer(.hmacSHA256), streaming: "smuggled")
        try Self.expectRefusedRead(try await Self.handle(request, keys: keys), keyID: TestKeys.hmacKeyID)
    }

    @Test("after Content-Length: 0, bytes that come anyway are refused when read")
    func zeroLengthBodyRefused() async throws {
        let keys = try TestKeys()
        let request = try await Self.request(signedBy: try keys.signer(.ed25519), extra: [.contentLength: "0"], streaming: "smuggled")
        try Self.expectRefusedRead(try await Self.handle(request, keys: keys), keyID: keys.keyID(.ed25519))
    }

    @Test("a signed Content-Digest without Content-Length has its streamed body read and checked before the route runs")
    func digestWithoutLength() async throws {
        let keys = try TestKeys()
        let signer = try keys.signer(.ecdsaP256)
        let text = "streamed and signed"
        let outcome = try await Self.handle(try await Self.request(signedBy: signer, signedBody: text, streaming: text), keys: keys)
        #expect(outcome.keyID == keys.keyID(.ecdsaP256))
        #expect(try outcome.body.get() == text)
        // Another body under the same signed digest: refused before the route runs.
        let swapped = try await Self.request(signedBy: signer, signedBody: text, streaming: "swapped")
        let error = try #require(await #expect(throws: HTTPError.self) { try await Self.handle(swapped, keys: keys) })
        #expect(error.status == .unauthorized)
        #expect(error.body?.contains("content digest") == true, "\(error)")
    }

    @Test("when the policy lets bodies go without a digest, the route reads the body as it came")
    func undeclaredBodyAllowed() async throws {
        let keys = try TestKeys()
        var policy = HTTPSignaturePolicy()
        policy.requireContentDigestWithBody = false
        let request = try await Self.request(signedBy: try keys.signer(.ecdsaP256), streaming: "as it came")
        let outcome = try await Self.handle(request, policy: policy, keys: keys)
        #expect(outcome.keyID == keys.keyID(.ecdsaP256))
        #expect(try outcome.body.get() == "as it came")
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
            #expect(unsigned.signedBy == nil)
            let text = "signed, sent chunked"
            let signed = try await server.send(try chunked(try await server.signed(.post, "/echo", body: Array(text.utf8), with: signer), text))
            #expect(signed.status == 200, "\(signed)")
            #expect(signed.body == text)
        }
    }
}
