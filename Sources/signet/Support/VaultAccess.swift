import ArgumentParser
import Foundation
import SignetCore
import SignetVault

/// Where the vault is and how it is unlocked: `--vault`, `--passphrase-file`,
/// `--vault-key-file`, shared by every `signet vault` verb (and accepted after each).
struct VaultOptions: ParsableArguments {
    @Option(name: .customLong("vault"), help: ArgumentHelp(
        "The vault file (else $SIGNET_VAULT, else $XDG_DATA_HOME/signet/vault.db, else ~/.local/share/signet/vault.db).",
        valueName: "PATH"))
    var vault: String?

    @Option(name: .customLong("passphrase-file"), help: ArgumentHelp(
        "Read the vault passphrase from the first line of F (else SIGNET_PASSPHRASE, else a prompt).", valueName: "F"))
    var passphraseFile: String?

    @Option(name: .customLong("vault-key-file"), help: ArgumentHelp(
        "The vault's key file, for vaults unlocked with one (else $SIGNET_VAULT_KEY_FILE).", valueName: "F"))
    var keyFile: String?

    var access: VaultAccess { VaultAccess(explicitPath: vault, passphraseFile: passphraseFile, keyFile: keyFile) }
}

/// Finds, opens and unlocks the vault for the CLI; also behind `vault:` key references.
struct VaultAccess: Sendable {
    static let pathVariable = "SIGNET_VAULT"
    static let keyFileVariable = "SIGNET_VAULT_KEY_FILE"

    var explicitPath: String?
    var passphraseFile: String?
    var keyFile: String?

    /// `--vault`, else `$SIGNET_VAULT`, else `$XDG_DATA_HOME/signet/vault.db`, else
    /// `$HOME/.local/share/signet/vault.db` (the XDG default).
    var path: String {
        get throws {
            let environment = ProcessInfo.processInfo.environment
            if let explicitPath { return explicitPath }
            if let value = environment[Self.pathVariable], !value.isEmpty { return value }
            if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") { return data + "/signet/vault.db" }
            guard let home = environment["HOME"], !home.isEmpty else {
                throw VaultError.invalidArgument(detail: "no vault location: pass --vault PATH or set SIGNET_VAULT (HOME is not set)")
            }
            return home + "/.local/share/signet/vault.db"
        }
    }

    /// The vault, unlocked with exactly the credentials it needs (nothing else is asked for).
    func openUnlocked() async throws -> Vault {
        let path = try path
        let method = try Vault.unlockMethod(at: path)
        return try await Vault.open(path: path, credentials: credentials(for: method, path: path, confirm: false))
    }

    /// The vault, locked: enough to list and delete.
    func openLocked() async throws -> Vault {
        try await Vault.open(path: try path)
    }

    /// The credentials `method` needs, from the options, the environment or a prompt.
    func credentials(for method: VaultUnlockMethod, path: String, confirm: Bool) throws -> VaultCredentials {
        var credentials = VaultCredentials()
        if method.needsPassphrase {
            credentials.passphrase = try CLIPassphraseProvider(passphraseFile: passphraseFile).passphrase(for: path, confirm: confirm)
        }
        let keyFilePath = keyFile ?? ProcessInfo.processInfo.environment[Self.keyFileVariable].flatMap { $0.isEmpty ? nil : $0 }
        if method.needsKeyFile {
            guard let keyFilePath else {
                throw VaultError.credentialsRequired(
                    path: path, detail: "this vault is unlocked with \(method == .keyFile ? "a key file" : "a passphrase and a key file"); pass --vault-key-file F or set \(Self.keyFileVariable)")
            }
            credentials.keyFile = try Self.readKeyFile(keyFilePath)
        } else if keyFile != nil {
            throw VaultError.credentialsRequired(path: path, detail: "this vault uses no key file, but --vault-key-file was given")
        }
        return credentials
    }

    static func readKeyFile(_ path: String) throws -> SecretBytes {
        var bytes = try FileInput.readAll(path: path, limit: VaultCredentials.maximumKeyFileLength)
        return SecretBytes(consuming: &bytes)
    }

    /// The provider that lets `--key vault:SERVICE/ACCOUNT` reach this vault.
    var keySource: VaultKeySource {
        let access = self
        return VaultKeySource { try await access.openUnlocked() }
    }
}
