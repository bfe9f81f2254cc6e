import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdAuth
import Logging
import NIOCore
import NIOEmbedded
import SignetCore
import SignetHTTP
import SignetHummingbird

/// `signet-bench route-loop COUNT`: the bench server's `/plain` and hmac `/signed` routes
/// answered in process, through the router's responder, with no network: COUNT requests each
/// (every signed one distinct, its nonce remembered), in alternating batches. Prints the mean
/// time per request of each and the difference — what the middleware and the verification add
/// to a request, without the scheduling and system calls that dominate a server's figures. A
/// steady loop to run under `perf record`.
func routeLoop(count: Int) async throws {
    let secret = SecretBytes(RandomBytes.make(32))
    // Signatures stay acceptable however long the run (the nonce cache still remembers them all).
    var policy = HTTPSignaturePolicy()
    policy.maximumAge = .seconds(Int64.max / 4)
    let verifier = HTTPMessageVerifier(
        keys: StaticHTTPSignatureKeys(["bench-hmac": .hmacSHA256(secret)]), policy: policy,
        nonceCache: InMemoryNonceCache(capacity: count))
    let router = Router(context: BasicAuthRequestContext<VerifiedHTTPSignature>.self)
    addMeasuredRoutes(to: router, verifier: verifier)
    let responder = router.buildResponder()
    let signer = HTTPMessageSigner(key: .hmacSHA256(secret), keyID: "bench-hmac")
    let heads = try await signedGETs(signer, count: count)
    let plainHeads = heads.map { head in
        var head = head
        head.path = "/plain"
        return head
    }
    let channel = EmbeddedChannel()
    let logger = Logger(label: "signet-bench")
    func answer(_ head: HTTPRequest) async throws {
        let request = Request(head: head, body: .init(buffer: ByteBuffer()))
        let context = BasicAuthRequestContext<VerifiedHTTPSignature>(source: .init(channel: channel, logger: logger))
        let response = try await responder.respond(to: request, context: context)
        guard response.status == .ok else {
            throw SignetCoreError.invalidArgument(detail: "route-loop: \(head.path ?? "") answered \(response.status)")
        }
    }
    let times = try await alternatingBatches(count: count, batches: 10, [{ try await answer(plainHeads[$0]) }, { try await answer(heads[$0]) }])
    let (plain, signed) = (times[0], times[1])
    print(String(format: "%.2f µs per /plain request, %.2f µs per /signed (hmac) request, %.2f µs more", plain, signed, signed - plain))
}

/// The routes both the bench server and route-loop measure: `GET /plain` (no middleware) and
/// `GET /signed` (behind `HTTPSignatureAuthenticator`).
func addMeasuredRoutes(to router: Router<BasicAuthRequestContext<VerifiedHTTPSignature>>, verifier: HTTPMessageVerifier) {
    router.get("/plain") { _, _ in "ok" }
    router.group("/signed").add(middleware: HTTPSignatureAuthenticator(verifier: verifier)).get { _, context in
        _ = try context.requireIdentity()
        return "ok"
    }
}
