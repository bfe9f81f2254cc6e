import ArgumentParser
import Foundation
import SignetCore

/// `signet minisign generate|sign|verify`: minisign's key pairs and `.minisig` signatures,
/// with minisign's own flags, readable and writable by the `minisign` tool both ways.
struct MinisignCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "minisign",
        abstract: "minisign-compatible key pairs and signatures (as minisign -G, -S, -V).",
        discussion: """
        Flags are minisign's: generate -p PUB -s SEC [-W] [-f]; sign -s SEC -m FILE [-x SIG] \
        [-t TRUSTED] [-c UNTRUSTED] [-l]; verify -p PUB|-P KEY -m FILE [-x SIG] [-q|-Q] [-o]. \
        Signatures are prehashed (BLAKE2b-512, "ED") unless -l asks for legacy "Ed"; both are \
        verified. Secret keys are encrypted with scrypt as minisign does (1 GiB, a few \
        seconds) unless generated with -W. The passphrase comes from --passphrase-file, \
        SIGNET_PASSPHRASE or a prompt.
        """,
        subcommands: [MinisignGenerate.self, MinisignSign.self, MinisignVerify.self]
    )

    /// minisign's default secret key: `$MINISIGN_CONFIG_DIR/minisign.key`, else
    /// `~/.minisign/minisign.key`.
    static var defaultSecretKeyPath: String {
        let environment = ProcessInfo.processInfo.environment
        if let folder = environment["MINISIGN_CONFIG_DIR"], !folder.isEmpty { return folder + "/minisign.key" }
        if let home = environment["HOME"], !home.isEmpty { return home + "/.minisign/minisign.key" }
        return "minisign.key"
    }

    /// minisign's default public key file.
    static let defaultPublicKeyPath = "minisign.pub"

    /// Reads and decrypts a secret key file, asking for the passphrase only when it is encrypted.
    static func loadSecretKey(_ path: String, passphraseFile: String?) throws -> MinisignSecretKey {
        let file = try MinisignSecretKeyFile.read(path: path)
        guard file.isEncrypted else { return try file.decrypt(passphrase: nil) }
        let passphrase = try CLIPassphraseProvider(passphraseFile: passphraseFile).passphrase(for: file.source, confirm: false)
        return try file.decrypt(passphrase: passphrase)
    }
}

/// The passphrase file of the minisign verbs; else SIGNET_PASSPHRASE, else a prompt (``CLIPassphraseProvider``).
struct MinisignPassphraseOption: ParsableArguments {
    @Option(name: .customLong("passphrase-file"), help: ArgumentHelp(
        "Read the passphrase from the first line of FILE (else SIGNET_PASSPHRASE, else a prompt).", valueName: "FILE"))
    var passphraseFile: String?
}

/// `signet minisign generate` (minisign -G).
struct MinisignGenerate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Generate a minisign key pair (as minisign -G).",
        discussion: """
        The secret key is written with mode 0600 and encrypted with a passphrase (scrypt, \
        N=2^20, r=8, p=1, as minisign does) unless -W is given. Existing files are replaced \
        only with -f.
        """
    )

    @Option(name: .customShort("p"), help: ArgumentHelp("The public key file to write.", valueName: "PUB"))
    var publicKeyPath: String = MinisignCommand.defaultPublicKeyPath

    @Option(name: .customShort("s"), help: ArgumentHelp(
        "The secret key file to write (default: ~/.minisign/minisign.key, or $MINISIGN_CONFIG_DIR/minisign.key).",
        valueName: "SEC"))
    var secretKeyPath: String?

    @Flag(name: [.customShort("W"), .customLong("unencrypted")], help: "Do not encrypt the secret key with a passphrase.")
    var unencrypted = false

    @Flag(name: [.customShort("f"), .customLong("force")], help: "Replace existing key files.")
    var force = false

    @OptionGroup var passphrase: MinisignPassphraseOption
    @OptionGroup var quietOption: QuietOption

    func validate() throws {
        if publicKeyPath == "-" || secretKeyPath == "-" { throw ValidationError("key files cannot be standard output") }
        if publicKeyPath == (secretKeyPath ?? MinisignCommand.defaultSecretKeyPath) {
            throw ValidationError("the public and the secret key need two different files")
        }
    }

    func run() async throws {
        let secretPath = secretKeyPath ?? MinisignCommand.defaultSecretKeyPath
        if !force {
            for path in [secretPath, publicKeyPath] where AtomicFile.exists(path) {
                throw SignetCoreError.outputExists(path: path)
            }
        }
        let passphrase = unencrypted
            ? nil : try CLIPassphraseProvider(passphraseFile: passphrase.passphraseFile).passphrase(for: secretPath, confirm: true)
        let key = MinisignSecretKey.generate()
        if secretKeyPath == nil { try Self.createPrivateFolder(for: secretPath) }
        if !unencrypted { Console.note("deriving a key from the passphrase (scrypt, 1 GiB)…", quiet: quietOption.quiet) }
        var secret = try key.fileContents(passphrase: passphrase)
        defer { SecretBytes.zero(&secret) }
        try AtomicFile.write(secret, to: secretPath, permissions: .privateToOwner, overwrite: force)
        let publicKey = key.publicKey
        try AtomicFile.write(Array(publicKey.fileContents.utf8), to: publicKeyPath, permissions: .standard, overwrite: force)
        Console.note("the secret key was saved as \(secretPath) - keep it secret!", quiet: quietOption.quiet)
        Console.note("the public key was saved as \(publicKeyPath) (key id \(publicKey.keyID)) - that one can be public", quiet: quietOption.quiet)
        Console.note("verify files signed with it: signet minisign verify -m FILE -P \(publicKey.base64)", quiet: quietOption.quiet)
    }

    /// Creates the default key's folder (`~/.minisign`) with mode 0700, as minisign does.
    static func createPrivateFolder(for path: String) throws {
        let folder = AtomicFile.parentFolder(of: path)
        guard !FileManager.default.fileExists(atPath: folder) else { return }
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw SignetCoreError.io(path: folder, detail: "cannot create the folder: \(error.localizedDescription)")
        }
    }
}
