import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdAuth
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import SignetCore
import SignetHTTP
import SignetHTTPClient
import SignetHummingbird
import SignetTestSupport
import Testing

/// The request context of the test server: the identity is the verified signature itself.
typealias SignedContext = BasicAuthRequestContext<VerifiedHTTPSignature>

extension HTTPField.Name {
    /// Set by the test routes to the key id the request was verified under.
    static let signedBy = HTTPField.Name("X-Signed-By")!
}

/// How a test request is signed.
enum SigningKeyChoice: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case ed25519 = "ed25519"
    case ecdsaP256 = "ecdsa-p256-sha256"
    case hmacSHA256 = "hmac-sha256"

    var testDescription: String { rawValue }
}

/// The keys the server trusts (an Ed25519 key, a P-256 key, an HMAC secret under
/// `shared-1`) and one it does not know.
struct TestKeys: Sendable {
    static let hmacKeyID = "shared-1"

    let ed25519: PrivateKey
    let p256: PrivateKey
    let stranger: PrivateKey
    let hmacSecret: [UInt8]

    init() throws {
        ed25519 = try PrivateKey.generate(.ed25519)
        p256 = try PrivateKey.generate(.p256)
        stranger = try PrivateKey.generate(.ed25519)
        hmacSecret = (0..<32).map { _ in UInt8.random(in: .min ... .max) }
    }

    /// What the server's verifier looks keys up in.
    var store: StaticHTTPSignatureKeys {
        StaticHTTPSignatureKeys([
            ed25519.publicKey.fingerprint.description: .publicKey(ed25519.publicKey),
            p256.publicKey.fingerprint.description: .publicKey(p256.publicKey),
            Self.hmacKeyID: .hmacSHA256(SecretBytes(hmacSecret)),
        ])
    }

    /// A signer with the default settings (nonce, alg, keyid = fingerprint or `shared-1`).
    func signer(_ choice: SigningKeyChoice) throws -> HTTPMessageSigner {
        switch choice {
        case .ed25519: return HTTPMessageSigner(key: .signer(try SoftwareSigner(key: ed25519)))
        case .ecdsaP256: return HTTPMessageSigner(key: .signer(try SoftwareSigner(key: p256)))
        case .hmacSHA256: return HTTPMessageSigner(key: .hmacSHA256(SecretBytes(hmacSecret)), keyID: Self.hmacKeyID)
        }
    }

    /// The key id the server should report for `choice`.
    func keyID(_ choice: SigningKeyChoice) -> String {
        switch choice {
        case .ed25519: return ed25519.publicKey.fingerprint.description
        case .ecdsaP256: return p256.publicKey.fingerprint.description
        case .hmacSHA256: return Self.hmacKeyID
        }
    }

    /// A signer whose key the server does not know.
    func strangerSigner() throws -> HTTPMessageSigner {
        HTTPMessageSigner(key: .signer(try SoftwareSigner(key: stranger)))
    }
}

/// A response as the tests look at it.
struct Reply: Sendable, CustomStringConvertible {
    let status: Int
    let headers: HTTPHeaders
    let bytes: [UInt8]

    init(_ response: HTTPClientResponse) async throws {
        status = Int(response.status.code)
        headers = response.headers
        let buffer = try await response.body.collect(upTo: 4 << 20)
        bytes = Array(buffer.readableBytesView)
    }

    /// The body as text.
    var body: String { String(decoding: bytes, as: UTF8.self) }

    /// The `X-Signed-By` field the routes set.
    var signedBy: String? { headers.first(name: "X-Signed-By") }

    /// The message of Hummingbird's JSON error body `{"error":{"message":…}}` (decoded, so
    /// that JSON escapes such as `\/` do not matter); the raw body when it is not one.
    var errorMessage: String {
        struct ErrorBody: Decodable {
            struct Inner: Decodable { let message: String }
            let error: Inner
        }
        return (try? JSONDecoder().decode(ErrorBody.self, from: Data(body.utf8)))?.error.message ?? body
    }

    var description: String {
        "HTTP \(status)\n" + headers.map { "\($0.name): \($0.value)" }.joined(separator: "\n") + "\n\n" + body
    }
}

/// The routes of the test server.
///
/// - `GET /open/hello`: pass-through authenticator; answers `anonymous` or `signed by KEYID`.
/// - `POST /small/echo`: rejecting authenticator that reads at most 1 KiB of body.
/// - `GET /hello`, `POST /echo`, `PUT /echo`, `POST /echo2`: rejecting authenticator; set `X-Signed-By`.
enum TestRoutes {
    static let smallBodyLimit = 1024

    static func router(keys: TestKeys) -> Router<SignedContext> {
        let verifier = HTTPMessageVerifier(keys: keys.store, nonceCache: InMemoryNonceCache())
        let router = Router(context: SignedContext.self)
        // Groups first: a router's middleware applies only to routes added after it.
        router.group("open")
            .add(middleware: HTTPSignatureAuthenticator<SignedContext>(verifier: verifier, missingSignature: .passThrough))
            .get("hello") { _, context -> String in
                if let identity = context.identity { return "signed by \(identity.keyID)" }
                return "anonymous"
            }
        router.group("small")
            .add(middleware: HTTPSignatureAuthenticator<SignedContext>(verifier: verifier, maximumBodySize: smallBodyLimit))
            .post("echo") { request, context -> Response in try await echo(request, context) }
        router.add(middleware: HTTPSignatureAuthenticator<SignedContext>(verifier: verifier))
        router.get("hello") { _, context -> Response in
            let identity = try context.requireIdentity()
            return Response(status: .ok, headers: [.signedBy: identity.keyID], body: ResponseBody(byteBuffer: ByteBuffer(string: "hello")))
        }
        router.post("echo") { request, context -> Response in try await echo(request, context) }
        // PUT /echo exists too, so a request whose method was changed from POST to PUT reaches
        // the authenticator (an unrouted method would be a 404 before any signature check).
        router.put("echo") { request, context -> Response in try await echo(request, context) }
        router.post("echo2") { request, context -> Response in try await echo(request, context) }
        return router
    }

    /// Answers the body the middleware collected, and who signed it.
    static func echo(_ request: Request, _ context: SignedContext) async throws -> Response {
        let identity = try context.requireIdentity()
        let body = try await request.body.collect(upTo: 4 << 20)
        return Response(status: .ok, headers: [.signedBy: identity.keyID], body: ResponseBody(byteBuffer: body))
    }
}

/// A running server and a client to talk to it.
struct LiveServer: Sendable {
    let port: Int
    let client: HTTPClient
    let keys: TestKeys

    /// What AsyncHTTPClient sends as `Host`, and so what the server verifies `@authority` against.
    var authority: String { "127.0.0.1:\(port)" }
    var baseURL: String { "http://\(authority)" }

    /// An unsigned request head for this server.
    func head(_ method: HTTPRequest.Method, _ path: String, fields: HTTPFields = [:]) -> HTTPRequest {
        HTTPRequest(method: method, scheme: "http", authority: authority, path: path, headerFields: fields)
    }

    /// A request head signed by `signer` (with Content-Digest when `body` is not empty).
    func signed(_ method: HTTPRequest.Method, _ path: String, body: [UInt8]? = nil, with signer: HTTPMessageSigner) async throws -> HTTPRequest {
        var request = head(method, path)
        try await signer.sign(&request, body: body)
        return request
    }

    /// Sends a request head and body as they are.
    func send(_ request: HTTPRequest, body: [UInt8]? = nil) async throws -> Reply {
        try await send(try HTTPClientRequest(request, body: body))
    }

    func send(_ request: HTTPClientRequest) async throws -> Reply {
        try await Reply(try await client.execute(request, timeout: .seconds(TestTimeouts.hangGuardSeconds)))
    }

    /// Signs and sends with SignetHTTPClient's `execute(signing:body:with:)`.
    func sendSigned(_ method: HTTPRequest.Method, _ path: String, body: String? = nil, with signer: HTTPMessageSigner) async throws -> Reply {
        try await sendSigned(method, path, bytes: body.map { Array($0.utf8) }, with: signer)
    }

    func sendSigned(_ method: HTTPRequest.Method, _ path: String, bytes: [UInt8]?, with signer: HTTPMessageSigner) async throws -> Reply {
        let response = try await client.execute(signing: head(method, path), body: bytes, with: signer, timeout: .seconds(TestTimeouts.hangGuardSeconds))
        return try await Reply(response)
    }
}

enum LiveServerError: Error {
    case didNotStart
}

/// Starts a real Hummingbird server on 127.0.0.1 (an ephemeral port, learnt through
/// `onServerRunning`) inside a ServiceGroup, runs `test` against it with a fresh
/// AsyncHTTPClient, then shuts the client and the server down.
func withLiveServer(_ test: (LiveServer) async throws -> Void) async throws {
    let keys = try TestKeys()
    var logger = Logger(label: "signet.live-server-test")
    logger.logLevel = .error
    let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
    let app = Application(
        router: TestRoutes.router(keys: keys),
        configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)),
        onServerRunning: { channel in
            portContinuation.yield(channel.localAddress?.port ?? -1)
        },
        logger: logger
    )
    let serviceGroup = ServiceGroup(services: [app], logger: logger)
    let client = HTTPClient(eventLoopGroupProvider: .singleton)
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask {
            // If the server stops (or never binds), the wait for the port below ends.
            defer { portContinuation.finish() }
            try await serviceGroup.run()
        }
        var failure: (any Error)?
        var iterator = ports.makeAsyncIterator()
        if let port = await iterator.next(), port > 0 {
            do {
                try await test(LiveServer(port: port, client: client, keys: keys))
            } catch {
                failure = error
            }
        } else {
            failure = LiveServerError.didNotStart
        }
        do { try await client.shutdown() } catch { failure = failure ?? error }
        await serviceGroup.triggerGracefulShutdown()
        if let failure { throw failure }
        try await group.waitForAll()
    }
}
