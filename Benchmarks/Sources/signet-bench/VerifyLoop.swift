import Foundation
import HTTPTypes
import SignetCore
import SignetHTTP

/// `signet-bench verify-loop COUNT [KIND]`: verifies signed GETs (no body, no replay cache)
/// COUNT times in process, taking 4,096 distinct ones in turn, and prints the mean time per
/// verification; for a public key (KIND `ed25519` or `p256`; `hmac` by default) also the time
/// of the bare signature check of as many distinct messages of the signature base's size
/// (``SignaturePool``), and the difference: what verification costs beyond the cryptography.
/// A steady loop to run under `perf record` when looking for that cost.
func verifyLoop(count: Int, kind: String) async throws {
    let key: HTTPSigningKey
    let verificationKey: HTTPVerificationKey
    let keyID: String
    var pool: SignaturePool?
    switch kind {
    case "hmac":
        let secret = SecretBytes([UInt8](repeating: 9, count: 32))
        (key, verificationKey, keyID) = (.hmacSHA256(secret), .hmacSHA256(secret), "bench-hmac")
    case "ed25519", "p256":
        let privateKey = try PrivateKey.generate(kind == "p256" ? .p256 : .ed25519)
        let signer = try SoftwareSigner(key: privateKey, algorithm: HTTPSignatureAlgorithms.default(for: privateKey.publicKey.kind))
        (key, verificationKey, keyID) = (.signer(signer), .publicKey(privateKey.publicKey), privateKey.publicKey.fingerprint.description)
        // Messages of the signed request's base size (its @signature-params line carries the key id).
        pool = try await SignaturePool(key: privateKey, messageBytes: 250)
    default:
        throw SignetCoreError.invalidArgument(detail: "verify-loop: unknown key type \(kind) (hmac, ed25519, p256)")
    }
    let signer = HTTPMessageSigner(key: key, keyID: keyID)
    let requests = try await signedGETs(signer, count: 4096)
    var policy = HTTPSignaturePolicy()
    policy.maximumAge = .seconds(Int64.max / 4)
    let verifier = HTTPMessageVerifier(keys: StaticHTTPSignatureKeys([keyID: verificationKey]), policy: policy)
    var loops: [(Int) async throws -> Void] = [{ index in
        _ = try await verifier.verify(.request(requests[index % requests.count]), bodyDigests: nil)
    }]
    if let pool { loops.append { _ in try pool.checkNext() } }
    let times = try await alternatingBatches(count: count, batches: pool == nil ? 1 : 10, loops)
    guard times.count == 2 else { return print(String(format: "%.2f µs per verification", times[0])) }
    print(String(format: "%.2f µs per verification, %.2f µs the signature check alone, %.2f µs beyond it", times[0], times[1], times[0] - times[1]))
}

/// Times each loop body over `count` calls (the call's number passed in), in alternating
/// batches so that a neighbour's load on a shared machine hits every body alike. Returns the
/// mean microseconds per call of each, in order.
func alternatingBatches(count: Int, batches: Int, _ bodies: [(Int) async throws -> Void]) async throws -> [Double] {
    let size = count / batches
    var times = [Double](repeating: 0, count: bodies.count)
    for batch in 0..<batches {
        for (which, body) in bodies.enumerated() {
            let start = DispatchTime.now().uptimeNanoseconds
            for index in batch * size..<(batch + 1) * size { try await body(index) }
            times[which] += Double(DispatchTime.now().uptimeNanoseconds - start)
        }
    }
    return times.map { $0 / 1e3 / Double(batches * size) }
}

/// `count` distinct signed `GET http://127.0.0.1:8080/signed` requests, each with its own nonce.
func signedGETs(_ signer: HTTPMessageSigner, count: Int) async throws -> [HTTPRequest] {
    var requests: [HTTPRequest] = []
    requests.reserveCapacity(count)
    for _ in 0..<count {
        var request = HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:8080", path: "/signed")
        try await signer.sign(&request)
        requests.append(request)
    }
    return requests
}
