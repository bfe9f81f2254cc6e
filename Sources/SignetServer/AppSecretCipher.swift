import Crypto
import Foundation
import SignetCore

/// Seals the HMAC secrets of apps for the database, so that a copy of the database (a backup, a
/// replica, a dump) does not give them: AES-256-GCM under a key kept in the server's vault
/// (``ServerDataFolder/appSecretKeyAccount``), a random 96-bit nonce per secret, and the app's
/// key id as associated data, so a sealed secret moved to another app's row fails to open.
///
/// The stored text is `v1:` + base64(nonce ‖ ciphertext ‖ tag). Secrets stored before
/// encryption (plain base64, which never contains `:`) are sealed at start-up
/// (``ServerStore/migrate()``); after that only the sealed form is read.
struct AppSecretCipher: Sendable {
    private let key: SymmetricKey

    /// The prefix of a sealed secret; a later format gets `v2:`.
    static let prefix = "v1:"
    private static let context = "signet app secret v1"

    /// A cipher over a 256-bit key; nil for a key of another size.
    init?(key: SymmetricKey) {
        guard key.bitCount == 256 else { return nil }
        self.key = key
    }

    /// A value that identifies the key without revealing it: HMAC-SHA256 of a fixed label, its
    /// first 16 bytes in hex. Recorded in the database so that a node holding another key
    /// refuses to start instead of failing each HMAC request.
    var keyCheck: String {
        let mac = HMAC<SHA256>.authenticationCode(for: Array("\(Self.context) key check".utf8), using: key)
        return Self.prefix + Hex.encode(Array(mac).prefix(16))
    }

    /// Whether `text` is a sealed secret (rather than the plain base64 of older servers).
    static func isSealed(_ text: String) -> Bool { text.hasPrefix(prefix) }

    /// The stored form of `secret`, the secret of the app `keyID`.
    func seal(_ secret: SecretBytes, keyID: String) throws -> String {
        do {
            let box = try secret.withUnsafeBytes { bytes in
                try AES.GCM.seal(bytes, using: key, authenticating: Self.associatedData(keyID))
            }
            guard let combined = box.combined else { throw ServerError.unavailable(detail: "AES-GCM gave no combined form") }
            return Self.prefix + Base64.encode(Array(combined))
        } catch let error as ServerError {
            throw error
        } catch {
            throw ServerError.unavailable(detail: "sealing the secret of \(keyID): \(error)")
        }
    }

    /// The secret of the app `keyID` from its stored form; ``ServerError/unavailable(detail:)``
    /// when the text is not sealed, was altered, belongs to another app or was sealed under
    /// another key.
    func open(_ text: String, keyID: String) throws -> SecretBytes {
        guard Self.isSealed(text) else {
            throw ServerError.unavailable(detail: "the secret of the app \(keyID) is stored in the clear (by an older server?); the next start seals it")
        }
        guard let combined = Base64.decode(text.dropFirst(Self.prefix.count)), combined.count >= 12 + 16,
              let box = try? AES.GCM.SealedBox(combined: combined),
              var plaintext = try? Array(AES.GCM.open(box, using: key, authenticating: Self.associatedData(keyID)))
        else {
            throw ServerError.unavailable(detail: "the stored secret of the app \(keyID) does not open with this server's app-secret key")
        }
        return SecretBytes(consuming: &plaintext)
    }

    private static func associatedData(_ keyID: String) -> [UInt8] {
        Array(context.utf8) + [0] + Array(keyID.utf8)
    }
}
