import ArgumentParser
import SignetCore
import SignetVault

/// `--quiet`, shared by every command that can print progress or notes.
struct QuietOption: ParsableArguments {
    @Flag(name: .shortAndLong, help: "Print no progress bar and no notes on standard error.")
    var quiet = false
}

/// How a command reads keys: passphrase source and key policy.
struct KeyAccessOptions: ParsableArguments {
    @Option(name: .customLong("passphrase-file"), help: ArgumentHelp(
        "Read the passphrase from the first line of FILE (else SIGNET_PASSPHRASE, else a prompt).",
        valueName: "FILE"))
    var passphraseFile: String?

    @Flag(name: .customLong("allow-weak"), help: "Accept RSA keys of 1024 to 2047 bits.")
    var allowWeak = false

    @Option(name: .customLong("vault"), help: ArgumentHelp(
        "The vault that vault:SERVICE/ACCOUNT keys come from (else $SIGNET_VAULT, else the per-user default).",
        valueName: "PATH"))
    var vault: String?

    @OptionGroup var pkcs11: PKCS11Options

    var policy: KeyPolicy { KeyPolicy(allowWeakRSA: allowWeak) }

    var passphrases: CLIPassphraseProvider { CLIPassphraseProvider(passphraseFile: passphraseFile) }

    /// The resolver that turns `--key` values into signers and public keys: files, `-`,
    /// `vault:SERVICE/ACCOUNT` (the vault is opened only when such a key is used; its
    /// passphrase comes from the same sources as a key file's) and `pkcs11:` URIs (keys on
    /// tokens, with `--module` and the PIN sources).
    var resolver: KeySourceResolver {
        let vaultAccess = VaultAccess(explicitPath: vault, passphraseFile: passphraseFile, keyFile: nil)
        return KeySourceResolver(policy: policy, passphrases: passphrases, providers: [vaultAccess.keySource, pkcs11.keySource])
    }
}

/// Where a command's data goes: standard output or a file written atomically.
enum OutputDestination {
    /// Writes `bytes` to `path` (nil or `-`: standard output).
    /// - Parameters:
    ///   - binary: the bytes are not text; refused on a terminal.
    ///   - permissions: mode of a written file.
    ///   - force: replace an existing file.
    static func write(
        _ bytes: [UInt8], to path: String?, binary: Bool, permissions: AtomicFile.Permissions, force: Bool
    ) throws {
        guard let path, path != "-" else {
            if binary, Console.stdoutIsTerminal {
                throw SignetCoreError.invalidArgument(
                    detail: "refusing to write binary output to a terminal (use -o FILE, --base64, a text format, or a pipe)")
            }
            Console.write(bytes: bytes)
            return
        }
        try AtomicFile.write(bytes, to: path, permissions: permissions, overwrite: force)
    }
}
