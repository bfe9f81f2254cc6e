import Crypto
import Foundation
import SignetCore

/// The vault's cryptography, in one place (docs/formats/vault.md describes it):
///
/// - A random 256-bit vault key seals every value with AES-256-GCM (random 96-bit nonce),
///   with the item's identity as associated data, so a sealed value moved to another row,
///   or another field, fails to open.
/// - The vault key is itself sealed ("wrapped") under a key-encryption key:
///   HKDF-SHA256(scrypt(passphrase) ‖ SHA-256(key file), salt, "signet-vault-v1 kek").
///   Changing the passphrase re-wraps the vault key; items stay as they are.
struct VaultCipher: Sendable {
    private let key: SymmetricKey

    static let formatTag = "signet-vault-v1"

    init(key: SymmetricKey) { self.key = key }

    /// A new random vault key.
    static func newKey() -> SymmetricKey { SymmetricKey(size: .bits256) }

    // MARK: Items

    /// Seals `plaintext` bound to `context` (see ``itemContext(_:kind:service:account:extra:)``).
    func seal<Bytes: DataProtocol>(_ plaintext: Bytes, context: [String]) throws -> [UInt8] {
        do {
            let box = try AES.GCM.seal(plaintext, using: key, authenticating: Self.associatedData(context))
            guard let combined = box.combined else { throw VaultError.invalidArgument(detail: "AES-GCM produced no output") }
            return Array(combined)
        } catch let error as VaultError {
            throw error
        } catch {
            throw VaultError.invalidArgument(detail: "AES-GCM sealing failed: \(error)")
        }
    }

    /// Seals a secret without copying it out of its zeroed-on-release buffer.
    func seal(_ secret: SecretBytes, context: [String]) throws -> [UInt8] {
        try secret.withUnsafeBytes { bytes in Result { () throws in try seal(bytes, context: context) } }.get()
    }

    /// Opens what ``seal(_:context:)`` produced for the same context; nil when the bytes were
    /// altered or belong to another item or field.
    func open(_ sealed: [UInt8], context: [String]) -> SecretBytes? {
        guard sealed.count >= 28, let box = try? AES.GCM.SealedBox(combined: sealed),
            var plaintext = try? AES.GCM.open(box, using: key, authenticating: Self.associatedData(context)).map({ $0 })
        else { return nil }
        return SecretBytes(consuming: &plaintext)
    }

    /// The context of an item's field: the format, the field, and the item's clear columns.
    static func itemContext(_ purpose: String, kind: VaultItemKind, service: String, account: String, extra: [String] = []) -> [String] {
        [formatTag, purpose, kind.rawValue, service, account] + extra
    }

    // MARK: The vault key

    /// The key-encryption key for `credentials`.
    static func keyEncryptionKey(
        credentials: VaultCredentials, method: VaultUnlockMethod, kdf: VaultKDFParameters?, salt: [UInt8]
    ) throws -> SymmetricKey {
        var material: [UInt8] = []
        defer { SecretBytes.zero(&material) }
        if method.needsPassphrase {
            guard let passphrase = credentials.passphrase, let kdf else {
                throw VaultError.invalidArgument(detail: "a passphrase and scrypt parameters are needed")
            }
            do {
                material += try kdf.algorithm.derive(password: passphrase, salt: salt, length: 32).bytes
            } catch {
                throw VaultError.invalidArgument(detail: "\(error)")
            }
        }
        if method.needsKeyFile {
            guard let keyFile = credentials.keyFile else { throw VaultError.invalidArgument(detail: "a key file is needed") }
            material += keyFile.withUnsafeBytes { Array(SHA256.hash(data: $0)) }
        }
        return HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: material), salt: salt,
            info: Array("\(formatTag) kek".utf8), outputByteCount: 32)
    }

    /// The context the wrapped vault key is bound to: how it is unlocked and at what cost.
    static func wrapContext(method: VaultUnlockMethod, kdf: String) -> [String] {
        [formatTag, "vault-key", method.rawValue, kdf]
    }

    // MARK: Associated data

    /// Length-prefixed fields, so that ("ab", "c") and ("a", "bc") differ.
    static func associatedData(_ fields: [String]) -> [UInt8] {
        var bytes: [UInt8] = []
        for field in fields {
            let utf8 = Array(field.utf8)
            let count = UInt32(utf8.count)
            bytes += [UInt8(count >> 24), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)]
            bytes += utf8
        }
        return bytes
    }

    /// A copy of the vault key, for wrapping it anew.
    var keyBytes: SecretBytes { key.withUnsafeBytes { SecretBytes($0) } }
}
