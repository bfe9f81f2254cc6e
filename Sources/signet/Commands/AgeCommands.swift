import ArgumentParser
import SignetAge
import SignetCore
import SignetVault

/// `signet encrypt`: an age v1 file (age-encryption.org/v1) for X25519 recipients or a
/// passphrase, with age's flags, readable by `age -d`, rage and pyrage.
struct EncryptCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "encrypt",
        abstract: "Encrypt a file with age (for age1… or SSH recipients, or a passphrase with -p).",
        discussion: """
        Flags are age's: -r RECIPIENT (an age1… X25519 public key, or an OpenSSH \
        'ssh-ed25519 …' or 'ssh-rsa …' public key line (2048 bits or more), repeatable; also \
        vault:SERVICE/ACCOUNT, the public key of a vault key, with --vault), -R FILE (a \
        recipients file: one age1… key or OpenSSH authorized_keys line a line, # comments and \
        blank lines ignored, or one PEM public key; '-' is standard input; repeatable), -p (a passphrase instead of recipients: scrypt with work \
        factor 2^18, as age uses; never together with -r or -R), -a (armored text instead of \
        binary). Unlike age -p, which always asks on the terminal, the passphrase may also \
        come from --passphrase-file or SIGNET_PASSPHRASE, for scripts (there is no current \
        passphrase here for those sources to be mistaken for); at the prompt it is asked \
        twice. -o FILE is written atomically (0644) and only once everything was encrypted; \
        an existing file is replaced only with --force. Binary output is refused on a \
        terminal: use -a, -o or a pipe. Files of any size are streamed in constant memory.
        """
    )

    @Option(name: [.customShort("r"), .customLong("recipient")], help: ArgumentHelp(
        "Encrypt to this age1… or OpenSSH (ssh-ed25519, ssh-rsa) public key, or vault:SERVICE/ACCOUNT (repeatable).",
        valueName: "RECIPIENT"))
    var recipients: [String] = []

    @Option(name: [.customShort("R"), .customLong("recipients-file")], help: ArgumentHelp(
        "Encrypt to the keys listed in FILE, one a line ('-': standard input; repeatable).", valueName: "FILE"))
    var recipientFiles: [String] = []

    @Flag(name: [.customShort("p"), .customLong("passphrase")], help: "Encrypt with a passphrase (scrypt) instead of recipients.")
    var passphrase = false

    @Flag(name: [.customShort("a"), .customLong("armor")], help: "Write armored text (PEM-like) instead of binary.")
    var armor = false

    @OptionGroup var output: OptionalOutputOptions<OutputHelpText>
    enum OutputHelpText: OutputHelp {
        static let help = ArgumentHelp("Where to write the encrypted file (default: standard output).", valueName: "OUT")
    }

    @OptionGroup var passphraseOption: AgePassphraseOption
    @OptionGroup var quietOption: QuietOption

    @Argument(help: ArgumentHelp("The file to encrypt ('-' or none: standard input).", valueName: "IN"))
    var input: String = "-"

    func validate() throws {
        if passphrase && !(recipients.isEmpty && recipientFiles.isEmpty) {
            throw ValidationError("-p/--passphrase cannot be combined with -r/--recipient or -R/--recipients-file")
        }
        if !passphrase && recipients.isEmpty && recipientFiles.isEmpty {
            throw ValidationError("give at least one recipient with -r or -R, or -p to encrypt with a passphrase")
        }
        if passphraseOption.passphraseFile != nil && !passphrase && !recipients.contains(where: { $0.hasPrefix("vault:") }) {
            throw ValidationError("--passphrase-file applies only with -p or a vault:SERVICE/ACCOUNT recipient")
        }
        let readers = [input] + recipientFiles + [passphraseOption.passphraseFile].compactMap { $0 }
        if readers.filter({ $0 == "-" }).count > 1 { throw ValidationError("standard input ('-') can be read only once") }
    }

    func run() async throws {
        let sink = try output.streamed(binary: !armor, permissions: .standard)
        let source = try FileInput(path: input)
        var chosen: [any AgeRecipient] = []
        for string in recipients {
            if string.hasPrefix(VaultKeyReference.scheme + ":") {
                let reference = try VaultKeyReference(parsing: string)
                let key = try await passphraseOption.vaultAccess.openUnlocked().privateKey(service: reference.service, account: reference.account)
                chosen.append(try AgeSSH.recipient(publicKey: key.publicKey, source: string))
            } else {
                chosen.append(try AgeKeyFile.recipient(string))
            }
        }
        for path in recipientFiles {
            let bytes = try FileInput.readAll(path: path, limit: AgeKeyFile.maximumSize)
            for recipient in try AgeKeyFile.recipients(in: bytes, source: StreamedOutput.displayName(input: path)) {
                chosen.append(recipient)
            }
        }
        if passphrase {
            let secret = try passphraseOption.provider.passphrase(for: sink.displayName, confirm: true)
            chosen.append(try ScryptRecipient(passphrase: secret, logN: EncryptCommand.scryptLogN))
        }
        let encryptor = try AgeEncryptor(recipients: chosen, armor: armor)
        let bar = ProgressBar.make(label: "encrypting", total: source.size, quiet: quietOption.quiet)
        defer { bar?.finish() }
        try encryptor.encrypt(
            read: { buffer in try source.fill(buffer, progress: bar) },
            writeBuffer: { buffer in try sink.write(buffer: buffer) })
        bar?.finish()
        try sink.commit()
    }

    /// The scrypt work factor of `-p`: age's (2^18, 256 MiB, well under a second).
    static let scryptLogN = 18
}

/// `signet decrypt`: opens an age v1 file with identities (`-i`) or, without them, a passphrase.
struct DecryptCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decrypt",
        abstract: "Decrypt an age file (with -i key files or SSH keys, or a passphrase).",
        discussion: """
        -i names an identity, repeatable: an age key file (as age-keygen writes: \
        AGE-SECRET-KEY-1… lines, # comments; one that is itself passphrase-encrypted with \
        age -p is opened with the passphrase first), an RSA or Ed25519 private key for \
        files encrypted to its ssh-rsa / ssh-ed25519 public key (OpenSSH's own format as in \
        ~/.ssh/id_ed25519 when it has no passphrase, or PEM/DER as Signet reads them, \
        encrypted PKCS#8 too), or vault:SERVICE/ACCOUNT (with --vault). Without -i the file must be passphrase-encrypted \
        (its header's stanza is scrypt); the passphrase comes from --passphrase-file, \
        SIGNET_PASSPHRASE or a prompt, and is asked for only once the header shows one is \
        needed; a file may ask for a scrypt work factor up to 2^22 (4 GiB of memory), age's \
        limit. Binary and armored files are both read. -o FILE is written atomically with \
        mode 0600 (the content was secret) and only once the whole file has authenticated: \
        a failure (wrong key, truncated or altered file: exit 1) leaves no output file and \
        an existing one untouched. On standard output, data is written as it authenticates, \
        chunk by chunk, as age does. --legacy-rsa-pkcs1 reads the old tutorial scheme instead \
        (RSA PKCS#1 v1.5 blocks, base64): with exactly one -i, the RSA key (a key file, a \
        .p12 or vault:); it is unsafe, and Signet never writes it.
        """
    )

    @Option(name: [.customShort("i"), .customLong("identity")], help: ArgumentHelp(
        "An age key file, SSH/RSA/Ed25519 private key or vault:SERVICE/ACCOUNT ('-': standard input; repeatable).",
        valueName: "IDENTITY"))
    var identities: [String] = []

    @OptionGroup var output: OptionalOutputOptions<OutputHelpText>
    enum OutputHelpText: OutputHelp {
        static let help = ArgumentHelp("Where to write the decrypted file (default: standard output).", valueName: "OUT")
    }

    @Flag(name: .customLong("legacy-rsa-pkcs1"), help: ArgumentHelp(
        "Decrypt the old tutorial scheme instead of age: base64 of RSA PKCS#1 v1.5 blocks (unsafe; read-only)."))
    var legacyRSAPKCS1 = false

    @Flag(name: .customLong("allow-weak"), help: "Accept RSA private keys of 1024 to 2047 bits as identities.")
    var allowWeak = false

    @OptionGroup var passphraseOption: AgePassphraseOption
    @OptionGroup var quietOption: QuietOption

    @Argument(help: ArgumentHelp("The file to decrypt ('-' or none: standard input).", valueName: "IN"))
    var input: String = "-"

    func validate() throws {
        if legacyRSAPKCS1 && identities.count != 1 {
            throw ValidationError("--legacy-rsa-pkcs1 needs exactly one -i: the RSA private key (a key file, a .p12, or vault:SERVICE/ACCOUNT)")
        }
        let readers = [input] + identities + [passphraseOption.passphraseFile].compactMap { $0 }
        if readers.filter({ $0 == "-" }).count > 1 { throw ValidationError("standard input ('-') can be read only once") }
    }

    func run() async throws {
        try output.refuseExisting()
        if legacyRSAPKCS1 { return try await runLegacy() }
        let passphrases = passphraseOption.provider
        // Without -i: a passphrase, asked for only if the header holds a scrypt stanza.
        let onDemand = identities.isEmpty ? OnDemandPassphraseIdentity(passphrases: passphrases) : nil
        var chosen: [any AgeIdentity] = []
        if let onDemand { chosen.append(onDemand) }
        for path in identities {
            for identity in try await AgeIdentityFile.load(path, options: passphraseOption, policy: KeyPolicy(allowWeakRSA: allowWeak)) {
                chosen.append(identity)
            }
        }
        let source = try FileInput(path: input)
        let sink = try output.streamed(binary: false, permissions: .privateToOwner)
        let decryptor = AgeDecryptor(identities: chosen)
        let bar = ProgressBar.make(label: "decrypting", total: source.size, quiet: quietOption.quiet)
        defer { bar?.finish() }
        do {
            try decryptor.decrypt(
                read: { buffer in try source.fill(buffer, progress: bar) },
                writeBuffer: { buffer in try sink.write(buffer: buffer) },
                source: source.displayName)
        } catch {
            // The passphrase could not be had (no terminal, no file): report that, not its echo.
            if let failure = onDemand?.failure { throw failure }
            throw error
        }
        bar?.finish()
        try sink.commit()
    }

    /// The highest scrypt work factor a passphrase-encrypted file may ask for: age's own limit
    /// (2^22, 4 GiB). rage and pyrage choose the factor by timing the machine, and pick 2^20
    /// and more on ordinary hardware, so the library's default bound would refuse their files.
    static let maximumScryptLogN = 22
}

/// `--passphrase-file`, for `encrypt -p`, `decrypt` and passphrase-encrypted key files.
struct AgePassphraseOption: ParsableArguments {
    @Option(name: .customLong("passphrase-file"), help: ArgumentHelp(
        "Read the passphrase from the first line of FILE (else SIGNET_PASSPHRASE, else a prompt).", valueName: "FILE"))
    var passphraseFile: String?

    @Option(name: .customLong("vault"), help: ArgumentHelp(
        "The vault that vault:SERVICE/ACCOUNT keys come from (else $SIGNET_VAULT, else the per-user default).",
        valueName: "PATH"))
    var vault: String?

    var provider: CLIPassphraseProvider { CLIPassphraseProvider(passphraseFile: passphraseFile) }

    /// The vault of `vault:` keys, unlocked with the same passphrase sources.
    var vaultAccess: VaultAccess { VaultAccess(explicitPath: vault, passphraseFile: passphraseFile, keyFile: nil) }
}

/// Where streamed output goes: a file written atomically — committed only once all of it was
/// produced, so a failure leaves no file and an existing one as it was — or standard output.
final class StreamedOutput {
    private let file: AtomicFileWriter?
    private let force: Bool
    /// The output's name in prompts and messages.
    let displayName: String

    /// Refuses an existing `path` without `force`: checked before any work or prompt.
    static func refuseExisting(_ path: String?, force: Bool) throws {
        if let path, path != "-", !force, AtomicFile.exists(path) { throw SignetCoreError.outputExists(path: path) }
    }

    /// The name of an input in messages.
    static func displayName(input path: String) -> String { path == "-" ? "standard input" : path }

    /// Opens the output: `path` nil or `-` is standard output, where `binary` output is
    /// refused on a terminal; a file gets a temporary sibling with `permissions`.
    init(path: String?, binary: Bool, permissions: AtomicFile.Permissions, force: Bool) throws {
        self.force = force
        if let path, path != "-" {
            displayName = path
            try StreamedOutput.refuseExisting(path, force: force)
            file = try AtomicFileWriter(path: path, permissions: permissions)
        } else {
            displayName = "standard output"
            if binary, Console.stdoutIsTerminal {
                throw SignetCoreError.invalidArgument(
                    detail: "refusing to write binary output to a terminal (use -a for armored text, -o FILE, or a pipe)")
            }
            file = nil
        }
    }

    /// Appends `bytes`.
    func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { buffer in try write(buffer: buffer) }
    }

    /// Appends the bytes `buffer` points to.
    func write(buffer: UnsafeRawBufferPointer) throws {
        if let file {
            try file.write(buffer)
        } else {
            Console.write(buffer: buffer)
        }
    }

    /// Moves a file into place (nothing for standard output). Without a commit the temporary
    /// file is removed when this object goes away.
    func commit() throws {
        try file?.commit(overwrite: force)
    }
}

extension FileInput {
    /// Reads until `buffer` is full or the input ends (pipes deliver less at a time); returns
    /// the count, 0 only at the end. Reports the bytes to `progress`.
    func fill(_ buffer: UnsafeMutableRawBufferPointer, progress: ProgressBar?) throws -> Int {
        var total = 0
        while total < buffer.count {
            let count = try read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[total...]))
            if count == 0 { break }
            total += count
        }
        if total > 0 { progress?.advance(total) }
        return total
    }
}
