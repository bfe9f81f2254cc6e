// In-process figures for the operations Signet's users call on hot paths, with p90 thresholds
// (names without spaces: `thresholds check` looks files up by the raw name, `update` writes
// spaces as underscores)
// checked in under Benchmarks/Thresholds/<Swift version>/ (`swift package benchmark thresholds
// check --path Thresholds/6.3` fails on a regression beyond the tolerance below; see
// Benchmarks/README.md). Whole-process comparisons with peer tools are Scripts/bench's job.
import Benchmark
import Foundation
import HTTPTypes
import SignetBundle
import SignetCore
import SignetHTTP

let benchmarks: @Sendable () -> Void = {
    // Wall-clock p90 may drift 50 % before a run counts as a regression: back-to-back runs on this
    // shared 2-core VM differ by up to 30 %. Allocation counts are deterministic: 10 %.
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal],
        warmupIterations: 5,
        maxDuration: .seconds(2),
        maxIterations: 100_000,
        thresholds: [.wallClock: BenchmarkThresholds(relative: [.p90: 50.0]), .mallocCountTotal: BenchmarkThresholds(relative: [.p90: 10.0])]
    )
    hashingBenchmarks()
    signatureBenchmarks()
    httpBenchmarks()
    bundleBenchmarks()
}

func hashingBenchmarks() {
    let mebibyte = [UInt8](repeating: 0x5A, count: 1 << 20)
    Benchmark("SHA-256-of-1-MiB") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(DigestAlgorithm.sha256.hash(mebibyte)) }
    }
}

func signatureBenchmarks() {
    let message = [UInt8](repeating: 7, count: 32)
    for (name, type, algorithm) in [("Ed25519", KeyGenerationType.ed25519, SignatureAlgorithm.ed25519), ("P-256", .p256, .ecdsaP256SHA256)] {
        let key = try! PrivateKey.generate(type)
        let signer = try! SoftwareSigner(key: key, algorithm: algorithm)
        let verifier = try! PublicKeyVerifier(key: key.publicKey, algorithm: algorithm)
        Benchmark("\(name)-sign-32-bytes") { benchmark in
            for _ in benchmark.scaledIterations { blackHole(try await signer.sign(message: message)) }
        }
        let signature = try! awaitResult { try await signer.sign(message: message) }
        Benchmark("\(name)-verify-32-bytes") { benchmark in
            for _ in benchmark.scaledIterations { try verifier.verify(signature: signature, message: message) }
        }
    }
}

/// A signed POST with a 1 KiB body, verified by the verifier the middleware uses (no replay
/// cache: each iteration verifies the same request).
func httpBenchmarks() {
    let body = [UInt8](repeating: 0x41, count: 1024)
    let ed25519 = try! PrivateKey.generate(.ed25519)
    let secret = SecretBytes([UInt8](repeating: 9, count: 32))
    let cases: [(String, HTTPSigningKey, HTTPVerificationKey)] = [
        ("hmac-sha256", .hmacSHA256(secret), .hmacSHA256(secret)),
        ("ed25519", .signer(try! SoftwareSigner(key: ed25519)), .publicKey(ed25519.publicKey)),
    ]
    for (name, signingKey, verificationKey) in cases {
        let signer = HTTPMessageSigner(key: signingKey, keyID: "k1")
        let signed = try! awaitResult {
            var request = HTTPRequest(method: .post, scheme: "https", authority: "api.example.com", path: "/v1/orders?id=7")
            try await signer.sign(&request, body: body)
            return request
        }
        var policy = HTTPSignaturePolicy()
        policy.maximumAge = .seconds(Int64.max / 2)
        let verifier = HTTPMessageVerifier(keys: StaticHTTPSignatureKeys(["k1": verificationKey]), policy: policy)
        Benchmark("HTTP-verify-\(name)-1-KiB-body") { benchmark in
            for _ in benchmark.scaledIterations { blackHole(try await verifier.verify(signed, body: body)) }
        }
        Benchmark("HTTP-sign-\(name)-1-KiB-body") { benchmark in
            for _ in benchmark.scaledIterations {
                var fresh = HTTPRequest(method: .post, scheme: "https", authority: "api.example.com", path: "/v1/orders?id=7")
                blackHole(try await signer.sign(&fresh, body: body))
            }
        }
    }
}

/// Parsing and checking a signed manifest of 10,000 files (what `bundle verify` does before
/// hashing).
func bundleBenchmarks() {
    let files = (0..<10_000).map { index in
        BundleManifest.File(path: String(format: "assets/%05d.bin", index), size: 1024, sha256: [UInt8](repeating: UInt8(index & 0xFF), count: 32))
    }
    let bytes = BundleManifest(name: "app", version: 1, created: Date(timeIntervalSince1970: 1_700_000_000), expires: nil, files: files).canonicalBytes
    Benchmark("bundle-manifest-10000-files-parse", configuration: .init(maxIterations: 200)) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try BundleManifest(bytes: bytes, source: "bench")) }
    }
}

/// Runs async work to completion from synchronous set-up code.
func awaitResult<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        do { box.result = .success(try await body()) } catch { box.result = .failure(error) }
        done.signal()
    }
    done.wait()
    return try box.result!.get()
}

/// A result handed from a task to the thread waiting for it (the semaphore orders the accesses).
final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}
