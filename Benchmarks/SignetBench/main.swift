// signet-bench: in-process operations per second of SignetCore's signers and verifiers, the
// counterpart of `openssl speed` (which also measures the primitive without process start-up).
//
//   signet-bench SECONDS TYPE...    # TYPE: rsa2048 rsa3072 rsa4096 p256 p384 ed25519
//
// Prints one line per type: "TYPE ALGORITHM SIGN_PER_SECOND VERIFY_PER_SECOND".
// Each operation signs (or verifies) a fresh SHA-256/384 digest of a 32-byte message, or the
// message itself for Ed25519, through the same `Signer`/`Verifier` seam the CLI uses.
import Foundation
import SignetCore

func usage() -> Never {
    FileHandle.standardError.write(Data("usage: signet-bench SECONDS TYPE...\n".utf8))
    exit(2)
}

let arguments = CommandLine.arguments.dropFirst()
guard let secondsText = arguments.first, let seconds = Double(secondsText), seconds > 0, arguments.count > 1 else { usage() }

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
    let elapsed = clock.now - start
    let (s, attos) = elapsed.components
    return Double(count) / (Double(s) + Double(attos) / 1e18)
}

var message = [UInt8](repeating: 0x5A, count: 32)
for name in arguments.dropFirst() {
    do {
        guard let type = KeyGenerationType(rawValue: name) else {
            FileHandle.standardError.write(Data("signet-bench: unknown key type '\(name)'\n".utf8))
            exit(2)
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
    } catch {
        FileHandle.standardError.write(Data("signet-bench: \(name): \(error)\n".utf8))
        exit(1)
    }
}
