import Foundation
import SignetCore
import SignetVault

/// What a vault decodes from its file: item rows, the recorded scrypt parameters, and
/// `vault:SERVICE/ACCOUNT` key references.
enum VaultTargets {
    static let all: TargetList = [
        ("vault-item", { VaultTargets.item($0) }),
        ("vault-kdf", { VaultTargets.kdf($0) }),
        ("vault-key-ref", { VaultTargets.keyReference($0) }),
    ]

    /// One `items` row from NUL-separated fields: kind, service, account, created, modified,
    /// details (JSON), secret; missing fields take the values of a valid password item. The
    /// details and secret are sealed for the row, then the row is decoded as `Vault.query`
    /// and `Vault.secret` do (a private key's secret also as `Vault.privateKey` does).
    /// Invariants: the secret opens to what was sealed and not once a bit of it is flipped;
    /// decoded details written again decode equal.
    static func item(_ bytes: [UInt8]) {
        let defaults: [[UInt8]] = [
            Array("password".utf8), Array("api.example.com".utf8), Array("deploy-bot".utf8), Array("1700000000000".utf8),
            Array("1700000000000".utf8), Array(#"{"attributes":{},"label":"x"}"#.utf8), Array("s3cret".utf8),
        ]
        var fields = Fuzz.parts(bytes, separator: 0, limit: defaults.count)
        if fields.count < defaults.count { fields += defaults[fields.count...] }
        let row = VaultFuzzing.Row(
            kind: Fuzz.text(fields[0]), service: Fuzz.text(fields[1]), account: Fuzz.text(fields[2]), created: Fuzz.text(fields[3]),
            modified: Fuzz.text(fields[4]), details: fields[5], secret: fields[6])
        guard let decoded = try? VaultFuzzing.decode(row) else { return }
        Fuzz.require(decoded.secret == row.secret, "vault-item", "the secret opens to other bytes than were sealed")
        Fuzz.require(!decoded.tamperedSecretOpened, "vault-item", "a secret with a flipped bit still opens")
        Fuzz.require(decoded.item.service == row.service && decoded.item.account == row.account, "vault-item", "the names changed")
        if let details = decoded.item.details {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            let json = try? encoder.encode(details)
            let again = json.flatMap { try? JSONDecoder().decode(VaultItemDetails.self, from: $0) }
            Fuzz.require(again == details, "vault-item", "the details written again decode to others")
        }
        if decoded.item.kind == .privateKey {
            _ = try? KeyDecoder.decode(decoded.secret, source: "vault:fuzz/item", policy: KeyPolicy(allowWeakRSA: true))
        }
    }

    /// `VaultKDFParameters(recorded:)`, as a vault's key record is read. Invariant: what
    /// parses, recorded again, parses equal.
    static func kdf(_ bytes: [UInt8]) {
        guard let parameters = VaultFuzzing.kdfParameters(recorded: Fuzz.text(bytes)) else { return }
        let again = VaultFuzzing.kdfParameters(recorded: VaultFuzzing.recorded(parameters))
        Fuzz.require(again == parameters, "vault-kdf", "\(VaultFuzzing.recorded(parameters)) does not parse back to the same parameters")
    }

    /// `VaultKeyReference(parsing:)`. Invariant: the reference's description parses equal.
    static func keyReference(_ bytes: [UInt8]) {
        guard let reference = try? VaultKeyReference(parsing: Fuzz.text(bytes)) else { return }
        let again = try? VaultKeyReference(parsing: reference.description)
        Fuzz.require(again == reference, "vault-key-ref", "\(reference.description) does not parse back to the same reference")
    }
}
