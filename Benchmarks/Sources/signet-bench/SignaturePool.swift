import SignetCore
import SignetHTTP
import Synchronization

/// Distinct messages signed under one key, checked in turn — the bench's "signature check
/// alone". One signature checked over and over is cheaper than a server's checks, where every
/// request brings a new one: in process on this VM a new P-256 signature each time took 55 µs
/// against 50 µs for one repeated, Ed25519 68 µs against 65 µs. Hardware counters are not
/// available here to say why; the likely reasons are the branch predictor learning that one
/// signature's path through the variable-time steps (BoringSSL's modular inverse and
/// multi-scalar multiplication, which perf shows costing more for new signatures) and data
/// that stays in cache. Either way a server meets new signatures and new data.
final class SignaturePool: Sendable {
    private let verifier: PublicKeyVerifier
    private let pairs: [(message: [UInt8], signature: [UInt8])]
    private let next = Atomic<Int>(0)

    /// `count` random messages of `messageBytes` each, signed with `key`.
    init(key: PrivateKey, count: Int = 4096, messageBytes: Int) async throws {
        let algorithm = HTTPSignatureAlgorithms.default(for: key.publicKey.kind)
        verifier = try PublicKeyVerifier(key: key.publicKey, algorithm: algorithm)
        let signer = try SoftwareSigner(key: key, algorithm: algorithm)
        var pairs: [(message: [UInt8], signature: [UInt8])] = []
        for _ in 0..<count {
            let message = RandomBytes.make(messageBytes)
            pairs.append((message, try await signer.sign(message: message)))
        }
        self.pairs = pairs
    }

    /// Checks the next pair (threads share the turn).
    func checkNext() throws {
        let pair = pairs[next.wrappingAdd(1, ordering: .relaxed).oldValue % pairs.count]
        try verifier.verify(signature: pair.signature, message: pair.message)
    }
}
