import Foundation
import SignetCore

/// `signet-bench SECONDS TYPE...`: in-process sign and verify operations per second through
/// the `Signer`/`Verifier` seam, the counterpart of `openssl speed`. Prints one line per type:
/// "TYPE ALGORITHM SIGN_PER_SECOND VERIFY_PER_SECOND". Each operation signs (or verifies) a
/// fresh SHA-256/384 digest of a 32-byte message, or the message itself for Ed25519.
func signBench(seconds: Double, types: [String]) throws {
    var message = [UInt8](repeating: 0x5A, count: 32)
    for name in types {
        guard let type = KeyGenerationType(rawValue: name) else {
            throw BenchError("unknown key type '\(name)'")
        }
        let key = try PrivateKey.generate(type, policy: .strict)
        let signer = try SoftwareSigner(key: key)
        let verifier = try PublicKeyVerifier(key: key.publicKey, algorithm: signer.algorithm)
        let algorithm = signer.algorithm
        let signature: [UInt8]
        let signs: Double
        let verifies: Double
        if let digestAlgorithm = algorithm.digest {
            signs = try rate(seconds) {
                message[0] &+= 1
                _ = try signer.signSynchronously(digest: digestAlgorithm.hash(message))
            }
            signature = try signer.signSynchronously(digest: digestAlgorithm.hash(message))
            verifies = try rate(seconds) { try verifier.verify(signature: signature, digest: digestAlgorithm.hash(message)) }
        } else {
            signs = try rate(seconds) {
                message[0] &+= 1
                _ = try signer.signMessageSynchronously(message)
            }
            signature = try signer.signMessageSynchronously(message)
            verifies = try rate(seconds) { try verifier.verify(signature: signature, message: message) }
        }
        print(name, algorithm.rawValue, String(format: "%.1f", signs), String(format: "%.1f", verifies))
    }
}

/// Runs `body` back to back for `seconds`; returns calls per second.
func rate(_ seconds: Double, _ body: () throws -> Void) rethrows -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    let budget = Duration.milliseconds(Int64(seconds * 1000))
    var count = 0
    repeat {
        for _ in 0..<8 { try body() }
        count += 8
    } while clock.now - start < budget
    return Double(count) / (clock.now - start).seconds
}

/// Runs `body` `count` times; returns calls per second.
func rate(count: Int, _ body: (Int) throws -> Void) rethrows -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    for index in 0..<count { try body(index) }
    return Double(count) / (clock.now - start).seconds
}

/// The fastest of `runs` timings of `body`, in milliseconds.
func bestMilliseconds(runs: Int, _ body: () throws -> Void) rethrows -> Double {
    let clock = ContinuousClock()
    var best = Double.infinity
    for _ in 0..<runs {
        let start = clock.now
        try body()
        best = min(best, (clock.now - start).seconds * 1000)
    }
    return best
}

extension Duration {
    var seconds: Double {
        let (whole, attoseconds) = components
        return Double(whole) + Double(attoseconds) / 1e18
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
