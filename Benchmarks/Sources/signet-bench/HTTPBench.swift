import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdAuth
import SignetCore
import SignetHTTP
import SignetHummingbird

/// `signet-bench http-server DIR COUNT`: a Hummingbird server on 127.0.0.1 (ephemeral port)
/// with `GET /plain` (no middleware), `GET /collect` (the body collected, nothing verified) and
/// `GET /check/ed25519` and `/check/p256` (the signature check alone, no middleware) and
/// `GET /signed` (behind `HTTPSignatureAuthenticator` with a replay cache), for wrk. Once it listens it writes, per key type (ed25519, p256,
/// hmac), COUNT distinct validly signed requests to `DIR/TYPE.txt` — one per line,
/// `Signature-Input<TAB>Signature` — and then `DIR/port`. It serves until killed.
func httpServerBench(folder: String, count: Int) async throws {
    let ed25519 = try PrivateKey.generate(.ed25519)
    let p256 = try PrivateKey.generate(.p256)
    let secret = SecretBytes(RandomBytes.make(32))
    let keys = StaticHTTPSignatureKeys([
        ed25519.publicKey.fingerprint.description: .publicKey(ed25519.publicKey),
        p256.publicKey.fingerprint.description: .publicKey(p256.publicKey),
        "bench-hmac": .hmacSHA256(secret),
    ])
    // Signatures stay acceptable for the whole bench: pre-signing and nine rounds take longer
    // than the default five minutes (how old a signature may be does not change what checking
    // it costs). The nonce cache holds every one of them meanwhile, with room reserved for
    // all (three key types' worth) up front, as a server sized for its load would: a cache
    // that doubled in a run would stall that run's requests while it copied millions.
    var policy = HTTPSignaturePolicy()
    policy.maximumAge = .seconds(3600)
    let nonceCache = InMemoryNonceCache(capacity: 4 * count, reserving: 3 * count)
    let verifier = HTTPMessageVerifier(keys: keys, policy: policy, nonceCache: nonceCache)
    let router = Router(context: BasicAuthRequestContext<VerifiedHTTPSignature>.self)
    // Only the middleware's first step (collecting the body), to separate Hummingbird's share
    // of the signed route's cost from the verification's.
    router.get("/collect") { request, _ in
        var request = request
        _ = try await request.collectBody(upTo: 1 << 20)
        return "ok"
    }
    // The signature check alone in a route without the middleware: the same public-key
    // verification of a signature base of the signed route's size, so that the signed route's
    // cost beyond it is measured at the same request rate (a route that spends more CPU per
    // request serves fewer per second, and each costs the server more wakeups). Each request
    // checks another signature, as each signed request brings its own (SignaturePool).
    for (name, key) in [("ed25519", ed25519), ("p256", p256)] {
        let pool = try await SignaturePool(key: key, messageBytes: 200)
        router.get("/check/\(name)") { _, _ in
            try pool.checkNext()
            return "ok"
        }
    }
    addMeasuredRoutes(to: router, verifier: verifier)
    let app = Application(
        router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
        onServerRunning: { channel in
            guard let port = channel.localAddress?.port else { return }
            do {
                let signers: [(String, HTTPMessageSigner)] = [
                    ("ed25519", HTTPMessageSigner(key: .signer(try SoftwareSigner(key: ed25519)))),
                    ("p256", HTTPMessageSigner(key: .signer(try SoftwareSigner(key: p256)))),
                    ("hmac", HTTPMessageSigner(key: .hmacSHA256(secret), keyID: "bench-hmac")),
                ]
                for (name, signer) in signers {
                    let lines = try await signedLines(count: count) { _ in
                        var request = HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:\(port)", path: "/signed")
                        try await signer.sign(&request)
                        return request.headerFields[.signatureInput]! + "\t" + request.headerFields[.signature]! + "\n"
                    }
                    try lines.write(toFile: folder + "/" + name + ".txt", atomically: true, encoding: .utf8)
                }
                try String(port).write(toFile: folder + "/port", atomically: true, encoding: .utf8)
            } catch {
                FileHandle.standardError.write(Data("signet-bench: pre-signing failed: \(error)\n".utf8))
                exit(1)
            }
        })
    try await app.runService()
}
