import Crypto
import Foundation
import SignetCore

/// Entry points for the libFuzzer targets (`SignetFuzzTargets`) into how a vault decodes what
/// it reads back from its file: an `items` row, and the recorded scrypt parameters. Not API:
/// `package`, for the fuzz targets and their replay tests only.
package enum VaultFuzzing {
    /// A fixed vault key: the fuzzer's details and secrets are sealed under it, bound to their
    /// row, so that they authenticate and their content is what gets decoded.
    private static let cipher = VaultCipher(key: SymmetricKey(data: [UInt8](repeating: 0x5A, count: 32)))

    /// The columns of one `items` row, as text and bytes; `created` and `modified` are stored
    /// as integers when they are decimal numbers, as (wrongly typed) text otherwise.
    package struct Row: Sendable {
        package var kind: String
        package var service: String
        package var account: String
        package var created: String
        package var modified: String
        /// The details' plaintext (JSON), sealed before the row is decoded.
        package var details: [UInt8]
        /// The secret's plaintext, sealed before the row is decoded.
        package var secret: [UInt8]

        package init(kind: String, service: String, account: String, created: String, modified: String, details: [UInt8], secret: [UInt8]) {
            self.kind = kind
            self.service = service
            self.account = account
            self.created = created
            self.modified = modified
            self.details = details
            self.secret = secret
        }
    }

    /// What the vault makes of a row.
    package struct Decoded: Sendable {
        package let item: VaultItem
        package let secret: [UInt8]
        /// Whether the secret still opened after one bit of its sealed form was flipped (it must not).
        package let tamperedSecretOpened: Bool
    }

    /// Seals the row's details and secret as the vault does, then decodes the row as
    /// `Vault.query` and `Vault.secret` do.
    package static func decode(_ row: Row) throws -> Decoded {
        let path = "fuzz vault"
        let kind = VaultItemKind(rawValue: row.kind) ?? .password
        let created = Int64(row.created), modified = Int64(row.modified)
        let detailsContext = VaultCipher.itemContext(
            "details", kind: kind, service: row.service, account: row.account, extra: ["\(created ?? 0)", "\(modified ?? 0)"])
        let sealedDetails = try cipher.seal(row.details, context: detailsContext)
        let sealedSecret = try cipher.seal(
            SecretBytes(row.secret), context: VaultCipher.itemContext("secret", kind: kind, service: row.service, account: row.account))
        let columns: [SQLiteValue] = [
            .text(row.service), .text(row.account), .text(row.kind),
            created.map { SQLiteValue.integer($0) } ?? SQLiteValue.text(row.created),
            modified.map { SQLiteValue.integer($0) } ?? SQLiteValue.text(row.modified),
            .blob(sealedDetails), .blob(sealedSecret),
        ]
        let (item, stored) = try Vault.decodeItem(columns, cipher: cipher, path: path)
        let secret = try Vault.openSecret(stored, service: item.service, account: item.account, cipher: cipher, path: path).bytes
        var tampered = stored
        let bit = row.secret.count % max(1, tampered.secret.count)
        tampered.secret[bit] ^= 1
        let tamperedOpened = (try? Vault.openSecret(tampered, service: item.service, account: item.account, cipher: cipher, path: path)) != nil
        return Decoded(item: item, secret: secret, tamperedSecretOpened: tamperedOpened)
    }

    /// The scrypt parameters recorded in a vault's key record (`scrypt$ln=17,r=8,p=1`); nil
    /// when the vault would refuse them.
    package static func kdfParameters(recorded text: String) -> VaultKDFParameters? {
        VaultKDFParameters(recorded: text)
    }

    /// The text a vault records for `parameters`.
    package static func recorded(_ parameters: VaultKDFParameters) -> String {
        parameters.recorded
    }
}
