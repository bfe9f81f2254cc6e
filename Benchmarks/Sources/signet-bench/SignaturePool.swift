import SignetCore
import SignetHTTP
import Synchronization

/// Distinct messages signed under one key, checked in turn — the bench's "signature check
/// alone". One signature checked over and over is cheaper than a server's checks: the branch
/// predictor learns the variable-time steps of ECDSA and Ed25519 verification (BoringSSL's
/// modular inverse, its multi-scalar multiplication) for that one signature, while every
/// request a server sees brings a new one. In process on this VM a new P-256 signature each
/// time took 55 µs against 50 µs for one repeated, Ed25519 68 µs against 65 µs. 4,096 pairs
/// are more than a predictor can learn.
final class SignaturePool: Sendable {
    /// The algorithm HTTP signatures use with the key (RFC 9421's default for its kind).
    let algorithm: SignatureAlgorithm
    private let verifier: PublicKeyVerifier
    private let pairs: [(message: [UInt8], signature: [UInt8])]
    private let next = Atomic<Int>(0)

    /// `count` random messages of `messageBytes` each, signed with `key`.
    init(key: PrivateKey, count: Int = 4096, messageBytes: Int) async throws {
        algorithm = HTTPSignatureAlgorithms.default(for: key.publicKey.kind)
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
