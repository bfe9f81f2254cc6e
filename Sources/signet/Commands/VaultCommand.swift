import ArgumentParser
import Foundation
import SignetCore
import SignetVault

/// `signet vault …`: the encrypted secret store, a keychain for Linux.
struct VaultCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vault",
        abstract: "Keep passwords and private keys in an encrypted vault (a keychain for Linux).",
        discussion: """
        Items are keyed by SERVICE and ACCOUNT. Secrets, labels, comments and attributes are \
        encrypted (AES-256-GCM); service and account names, kinds and dates are not, so \
        'list' works without the passphrase. Private keys stored with 'import' are usable \
        wherever a key is accepted, as vault:SERVICE/ACCOUNT.
        The vault is --vault PATH, else $SIGNET_VAULT, else $XDG_DATA_HOME/signet/vault.db \
        (~/.local/share/signet/vault.db). Its passphrase comes from --passphrase-file, \
        SIGNET_PASSPHRASE or a prompt; secrets from --secret-file, standard input or a \
        prompt, never from the command line.
        Exit codes as for every command; 'get' of a missing item and 'init' of an existing \
        vault exit 1.
        """,
        subcommands: [
            VaultInit.self, VaultSet.self, VaultGet.self, VaultDelete.self, VaultList.self, VaultShow.self,
            VaultRename.self, VaultImport.self, VaultGenerate.self, VaultExport.self, VaultPasswd.self,
        ]
    )

    @OptionGroup var options: VaultOptions
}

/// `signet vault init`.
struct VaultInit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create an empty vault (mode 0600); refuses, leaving it untouched, if one exists.",
        discussion: """
        The vault is unlocked with a passphrase (asked twice at a prompt) and, with \
        --vault-key-file F, also with a key file; with --no-passphrase, with the key file \
        alone. A key file that does not exist is created with 32 random bytes (0600).
        """)

    @Flag(name: .customLong("no-passphrase"), help: "Unlock with the key file alone (needs --vault-key-file).")
    var noPassphrase = false

    @Option(name: .customLong("scrypt-log-n"), help: ArgumentHelp(
        "scrypt cost: N = 2^VALUE (10 to 18; default 17, about 0.5 s and 128 MiB per unlock; below 15 only for tests).",
        valueName: "VALUE"))
    var scryptLogN = VaultKDFParameters.default.logN

    @OptionGroup var options: VaultOptions
    @OptionGroup var quietOption: QuietOption

    func run() async throws {
        let access = options.access
        let path = try access.path
        guard (10...18).contains(scryptLogN) else {
            throw VaultError.invalidArgument(detail: "--scrypt-log-n must be from 10 to 18, not \(scryptLogN)")
        }
        if noPassphrase, options.keyFile == nil {
            throw VaultError.invalidArgument(detail: "--no-passphrase needs --vault-key-file F (something must unlock the vault)")
        }
        if AtomicFile.exists(path) { throw VaultError.vaultExists(path: path) }
        try VaultFolders.createParent(of: path, explicit: options.vault != nil)
        var credentials = VaultCredentials()
        if let keyFile = options.keyFile {
            credentials.keyFile = try VaultFolders.readOrCreateKeyFile(keyFile, quiet: quietOption.quiet)
        }
        if !noPassphrase {
            credentials.passphrase = try CLIPassphraseProvider(passphraseFile: options.passphraseFile).passphrase(for: path, confirm: true)
        }
        if scryptLogN < 15, !noPassphrase {
            Console.warning("scrypt N = 2^\(scryptLogN) is a test setting: the passphrase is cheap to guess")
        }
        _ = try await Vault.create(at: path, credentials: credentials, kdf: VaultKDFParameters(logN: scryptLogN))
        Console.note("created the vault \(path)", quiet: quietOption.quiet)
    }
}

/// `signet vault passwd`.
struct VaultPasswd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passwd",
        abstract: "Change the vault's passphrase and/or key file (the items are not re-encrypted).",
        discussion: """
        The current credentials come from the usual options; the new passphrase from \
        --new-passphrase-file or a prompt (asked twice). --new-vault-key-file F adds or \
        replaces the key file (created with 32 random bytes if it does not exist); \
        --remove-key-file drops it; --no-passphrase keeps the key file alone.
        """)

    @Option(name: .customLong("new-passphrase-file"), help: ArgumentHelp("Read the new passphrase from the first line of F.", valueName: "F"))
    var newPassphraseFile: String?

    @Option(name: .customLong("new-vault-key-file"), help: ArgumentHelp("Unlock with this key file from now on.", valueName: "F"))
    var newKeyFile: String?

    @Flag(name: .customLong("remove-key-file"), help: "Unlock with the passphrase alone from now on.")
    var removeKeyFile = false

    @Flag(name: .customLong("no-passphrase"), help: "Unlock with the key file alone from now on.")
    var noPassphrase = false

    @Option(name: .customLong("scrypt-log-n"), help: ArgumentHelp("scrypt cost for the new passphrase (default 17).", valueName: "VALUE"))
    var scryptLogN = VaultKDFParameters.default.logN

    @OptionGroup var options: VaultOptions
    @OptionGroup var quietOption: QuietOption

    func run() async throws {
        guard (10...18).contains(scryptLogN) else {
            throw VaultError.invalidArgument(detail: "--scrypt-log-n must be from 10 to 18, not \(scryptLogN)")
        }
        if removeKeyFile, newKeyFile != nil {
            throw VaultError.invalidArgument(detail: "--remove-key-file and --new-vault-key-file contradict each other")
        }
        let access = options.access
        let path = try access.path
        let vault = try await access.openUnlocked()
        let current = await vault.unlockMethod
        var credentials = VaultCredentials()
        if !removeKeyFile {
            if let newKeyFile {
                credentials.keyFile = try VaultFolders.readOrCreateKeyFile(newKeyFile, quiet: quietOption.quiet)
            } else if current.needsKeyFile {
                credentials.keyFile = try access.credentials(for: .keyFile, path: path, confirm: false).keyFile
            }
        }
        if !noPassphrase {
            // Not from SIGNET_PASSPHRASE: that holds the current passphrase.
            credentials.passphrase = try CLIPassphraseProvider(passphraseFile: newPassphraseFile, useEnvironment: false)
                .passphrase(for: "\(path) (new)", confirm: true)
        }
        if scryptLogN < 15, !noPassphrase {
            Console.warning("scrypt N = 2^\(scryptLogN) is a test setting: the passphrase is cheap to guess")
        }
        try await vault.changeCredentials(to: credentials, kdf: VaultKDFParameters(logN: scryptLogN))
        Console.note("changed how \(path) is unlocked (\(await vault.unlockMethod.rawValue))", quiet: quietOption.quiet)
    }
}

extension VaultFolders {
    /// The key file at `path`, created first with 32 random bytes (0600) if it is missing.
    static func readOrCreateKeyFile(_ path: String, quiet: Bool) throws -> SecretBytes {
        if !AtomicFile.exists(path) {
            var random = RandomBytes.make(32)
            defer { SecretBytes.zero(&random) }
            try AtomicFile.write(random, to: path, permissions: .privateToOwner, overwrite: false)
            Console.note("wrote a new key file to \(path): keep a copy, the vault cannot be opened without it", quiet: quiet)
        }
        return try VaultAccess.readKeyFile(path)
    }
}

/// Makes the vault's folder when it is the per-user default (an explicit path's folder must
/// exist: a typo should not create folders).
enum VaultFolders {
    static func createParent(of path: String, explicit: Bool) throws {
        let folder = AtomicFile.parentFolder(of: path)
        if FileManager.default.fileExists(atPath: folder) { return }
        guard !explicit else {
            throw VaultError.io(path: path, detail: "the folder \(folder) does not exist")
        }
        do {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw VaultError.io(path: folder, detail: "cannot create the folder: \(error.localizedDescription)")
        }
    }
}
