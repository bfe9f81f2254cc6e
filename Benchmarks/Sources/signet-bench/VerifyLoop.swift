import Foundation
import HTTPTypes
import SignetCore
import SignetHTTP

/// `signet-bench verify-loop COUNT`: verifies one HMAC-signed GET (no body, no replay cache)
/// COUNT times in process and prints the mean time per verification: a steady loop to run under
/// `perf record` when looking for the cost of verification beyond the MAC itself.
func verifyLoop(count: Int) async throws {
    let secret = SecretBytes([UInt8](repeating: 9, count: 32))
    let signer = HTTPMessageSigner(key: .hmacSHA256(secret), keyID: "bench-hmac")
    var request = HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:8080", path: "/signed")
    try await signer.sign(&request)
    var policy = HTTPSignaturePolicy()
    policy.maximumAge = Int64.max / 4
    let verifier = HTTPMessageVerifier(keys: StaticHTTPSignatureKeys(["bench-hmac": .hmacSHA256(secret)]), policy: policy)
    let start = DispatchTime.now().uptimeNanoseconds
    for _ in 0..<count { _ = try await verifier.verify(.request(request), bodyDigests: nil) }
    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e3
    print(String(format: "%.2f µs per verification", elapsed / Double(count)))
}
