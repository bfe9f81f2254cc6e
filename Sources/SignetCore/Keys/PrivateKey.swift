import Crypto
import CryptoExtras

/// A private key held in memory, of any supported kind.
public struct PrivateKey: Sendable {
    enum Storage: Sendable {
        case rsa(_RSA.Signing.PrivateKey)
        case p256(P256.Signing.PrivateKey)
        case p384(P384.Signing.PrivateKey)
        case ed25519(Curve25519.Signing.PrivateKey)
    }

    let storage: Storage

    init(_ storage: Storage) { self.storage = storage }

    /// Generates a new key with the system's secure random generator. Weak types
    /// (``KeyGenerationType/rsa1024``) are refused unless `policy` allows them.
    public static func generate(_ type: KeyGenerationType, policy: KeyPolicy = .strict) throws -> PrivateKey {
        if type.isWeak, !policy.allowWeakRSA {
            throw SignetCoreError.weakKey(source: "key generation", bits: 1024)
        }
        do {
            switch type {
            case .rsa1024: return PrivateKey(.rsa(try _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: 1024))))
            case .rsa2048: return PrivateKey(.rsa(try _RSA.Signing.PrivateKey(keySize: .bits2048)))
            case .rsa3072: return PrivateKey(.rsa(try _RSA.Signing.PrivateKey(keySize: .bits3072)))
            case .rsa4096: return PrivateKey(.rsa(try _RSA.Signing.PrivateKey(keySize: .bits4096)))
            case .p256: return PrivateKey(.p256(P256.Signing.PrivateKey()))
            case .p384: return PrivateKey(.p384(P384.Signing.PrivateKey()))
            case .ed25519: return PrivateKey(.ed25519(Curve25519.Signing.PrivateKey()))
            }
        } catch {
            throw SignetCoreError.cryptoFailure(detail: "key generation failed: \(error)")
        }
    }

    /// What kind of key this is.
    public var kind: KeyKind { publicKey.kind }

    /// The matching public key.
    public var publicKey: PublicKey {
        switch storage {
        case .rsa(let key): return PublicKey(.rsa(key.publicKey))
        case .p256(let key): return PublicKey(.p256(key.publicKey))
        case .p384(let key): return PublicKey(.p384(key.publicKey))
        case .ed25519(let key): return PublicKey(.ed25519(key.publicKey))
        }
    }
}
