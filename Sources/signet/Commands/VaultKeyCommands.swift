import ArgumentParser
import SignetCore
import SignetVault

/// `signet vault import SERVICE ACCOUNT KEYFILE`.
struct VaultImport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Store a private key file in the vault, usable afterwards as --key vault:SERVICE/ACCOUNT.",
        discussion: """
        Any private key format signet reads is accepted (PKCS#8, encrypted PKCS#8, PKCS#1, \
        SEC1, JWK, iOS). An encrypted key's passphrase comes from --key-passphrase-file, else \
        SIGNET_PASSPHRASE, else a prompt. The key file is left where it is: delete it once the \
        vault is its home.
        """)

    @OptionGroup var name: VaultItemName

    @Argument(help: ArgumentHelp("The private key file ('-': standard input).", valueName: "KEYFILE"))
    var keyFile: String

    @Option(name: .customLong("key-passphrase-file"), help: ArgumentHelp(
        "Read the key file's passphrase from the first line of F.", valueName: "F"))
    var keyPassphraseFile: String?

    @Flag(name: .customLong("allow-weak"), help: "Accept RSA keys of 1024 to 2047 bits.")
    var allowWeak = false

    @Flag(help: "Replace an existing private key item (keeping its creation date).")
    var replace = false

    @Option(help: ArgumentHelp("A human-readable name for the item.", valueName: "TEXT"))
    var label: String?

    @OptionGroup var options: VaultOptions
    @OptionGroup var quietOption: QuietOption

    func run() async throws {
        let resolver = KeySourceResolver(
            policy: KeyPolicy(allowWeakRSA: allowWeak), passphrases: CLIPassphraseProvider(passphraseFile: keyPassphraseFile))
        let decoded = try resolver.decodeFile(keyFile)
        let key = try resolver.privateKey(from: decoded, source: resolver.displayName(keyFile))
        let vault = try await options.access.openUnlocked()
        try await vault.setPrivateKey(
            key, service: name.service, account: name.account, details: label.map { VaultItemDetails(label: $0) }, replace: replace)
        let reference = VaultKeyReference(service: name.service, account: name.account)
        Console.note("stored \(key.kind) \(key.publicKey.fingerprint) as \(reference)", quiet: quietOption.quiet)
        if keyFile != "-" {
            Console.note("\(keyFile) is still on disk: delete it if the vault is to be the key's only home", quiet: quietOption.quiet)
        }
    }
}

/// `signet vault generate SERVICE ACCOUNT -t TYPE`.
struct VaultGenerate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Generate a private key inside the vault: it never exists in a file.",
        discussion: "Print its public key with 'signet key public vault:SERVICE/ACCOUNT'.")

    @OptionGroup var name: VaultItemName

    @Option(name: [.customShort("t"), .long], help: ArgumentHelp("The key type (not rsa1024: a vault holds no weak keys).", valueName: "TYPE"))
    var type: KeyGenerationType

    @Option(help: ArgumentHelp("A human-readable name for the item.", valueName: "TEXT"))
    var label: String?

    @OptionGroup var options: VaultOptions
    @OptionGroup var quietOption: QuietOption

    func run() async throws {
        guard type != .rsa1024 else { throw ValidationError("-t rsa1024: a vault holds no keys below 2048 bits") }
        let vault = try await options.access.openUnlocked()
        let key = try PrivateKey.generate(type)
        try await vault.setPrivateKey(key, service: name.service, account: name.account, details: label.map { VaultItemDetails(label: $0) })
        let reference = VaultKeyReference(service: name.service, account: name.account)
        Console.note("generated \(key.kind) \(key.publicKey.fingerprint) as \(reference)", quiet: quietOption.quiet)
    }
}

/// `signet vault export SERVICE ACCOUNT`.
struct VaultExport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a stored private key (or, with --public, its public key) to a file or standard output.",
        discussion: """
        Private keys are written 0600 and never over an existing file without --force; \
        --encrypt writes encrypted PKCS#8 (the new passphrase from --new-passphrase-file or \
        a prompt).
        """)

    @OptionGroup var name: VaultItemName

    @OptionGroup var output: DefaultedOutputOptions<OutputHelpText>
    enum OutputHelpText: OutputHelp {
        static let help = ArgumentHelp("Where to write ('-': standard output, the default).", valueName: "OUT")
    }

    @OptionGroup var export: KeyExportOptions

    @OptionGroup var options: VaultOptions

    func run() async throws {
        try output.refuseExisting()
        let vault = try await options.access.openUnlocked()
        let key = try await vault.privateKey(service: name.service, account: name.account, policy: KeyPolicy(allowWeakRSA: true))
        if export.public {
            try export.writePublic(key.publicKey, to: output)
        } else {
            try export.writePrivate(key, to: output)
        }
    }
}
