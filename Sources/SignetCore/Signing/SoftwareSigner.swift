import Crypto
import CryptoExtras

/// A ``Signer`` over a private key held in memory.
public struct SoftwareSigner: Signer {
    /// The private key, held in memory.
    public let key: PrivateKey
    /// The algorithm every signature is made with; it fits ``key``.
    public let algorithm: SignatureAlgorithm

    /// Pairs a key with an algorithm; nil `algorithm` picks the key's default.
    public init(key: PrivateKey, algorithm: SignatureAlgorithm? = nil) throws {
        let chosen = algorithm ?? key.kind.defaultAlgorithm
        try chosen.requireFits(key.kind)
        self.key = key
        self.algorithm = chosen
    }

    /// The public key of ``key``, which verifies the signatures.
    public var publicKey: PublicKey { key.publicKey }

    /// Signs a digest; see ``signSynchronously(digest:)``.
    public func sign(digest: MessageDigest) async throws -> [UInt8] {
        try signSynchronously(digest: digest)
    }

    /// Signs a whole message; see ``signMessageSynchronously(_:)``.
    public func sign(message: [UInt8]) async throws -> [UInt8] {
        try signMessageSynchronously(message)
    }

    /// Signs a whole message without suspending: Ed25519 signs it as it is (as
    /// `openssl pkeyutl -sign -rawin` does); every other algorithm signs its digest.
    public func signMessageSynchronously(_ message: [UInt8]) throws -> [UInt8] {
        guard case .ed25519(let k) = key.storage else {
            return try signSynchronously(digest: algorithm.digest!.hash(message))
        }
        do {
            return Array(try k.signature(for: message))
        } catch {
            throw SignetCoreError.cryptoFailure(detail: "Ed25519 signing: \(error)")
        }
    }

    /// Signs a digest without suspending (software keys never wait).
    public func signSynchronously(digest: MessageDigest) throws -> [UInt8] {
        guard let expected = algorithm.digest else {
            throw SignetCoreError.invalidArgument(detail: "Ed25519 signs the message itself, not a digest")
        }
        guard digest.algorithm == expected else {
            throw SignetCoreError.invalidArgument(detail: "\(algorithm.rawValue) needs a \(expected.rawValue) digest, not \(digest.algorithm.rawValue)")
        }
        do {
            switch (key.storage, digest.concrete) {
            case (.rsa(let k), .sha256(let d)):
                return Array(try k.signature(for: d, padding: algorithm.rsaPadding).rawRepresentation)
            case (.rsa(let k), .sha512(let d)):
                return Array(try k.signature(for: d, padding: algorithm.rsaPadding).rawRepresentation)
            case (.p256(let k), .sha256(let d)):
                return Array(try k.signature(for: d).derRepresentation)
            case (.p384(let k), .sha384(let d)):
                return Array(try k.signature(for: d).derRepresentation)
            default:
                throw SignetCoreError.algorithmMismatch(algorithm: algorithm.rawValue, keyDescription: key.kind.description, hint: "")
            }
        } catch let error as SignetCoreError {
            throw error
        } catch {
            throw SignetCoreError.cryptoFailure(detail: "signing with \(algorithm.rawValue): \(error)")
        }
    }
}

extension SignatureAlgorithm {
    var rsaPadding: _RSA.Signing.Padding {
        switch self {
        case .rsaPSSSHA256, .rsaPSSSHA512: return .PSS
        default: return .insecurePKCS1v1_5
        }
    }
}
