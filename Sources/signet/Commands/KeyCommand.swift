import ArgumentParser
import SignetCore

/// `signet key …`: generate, export, fingerprint and convert keys.
struct KeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key",
        abstract: "Generate, export, fingerprint and convert keys.",
        discussion: """
        Input formats are detected from the content: PKCS#8 (PEM/DER, also encrypted), \
        PKCS#1, SEC1, SPKI, OpenSSH public one-liners, JWK, and the raw base64 of iOS's \
        SecKeyCopyExternalRepresentation.
        """,
        subcommands: [KeyGenerate.self, KeyPublic.self, KeyFingerprintCommand.self, KeyConvert.self]
    )
}

/// `signet key generate -t TYPE -o KEY`.
struct KeyGenerate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Generate a private key (written 0600, never over an existing file without --force).",
        discussion: "Print its public key with 'signet key public KEY'."
    )

    @Option(name: [.customShort("t"), .long], help: ArgumentHelp("The key type (rsa1024 only with --allow-weak).", valueName: "TYPE"))
    var type: KeyGenerationType

    @OptionGroup var output: OutputOptions<OutputHelpText>
    enum OutputHelpText: OutputHelp {
        static let help = ArgumentHelp("Where to write the key ('-': standard output).", valueName: "KEY")
    }

    @Option(help: ArgumentHelp("The format (pem is PKCS#8).", valueName: "FORMAT"))
    var format: PrivateKeyFormat = .pem

    @Flag(help: "Encrypt the key with a passphrase (PKCS#8, PBKDF2-SHA256 + AES-256-CBC).")
    var encrypt = false

    @OptionGroup var keyAccess: KeyAccessOptions
    @OptionGroup var quietOption: QuietOption

    func run() async throws {
        try output.refuseExisting()
        let passphrase = encrypt ? try keyAccess.passphrases.passphrase(for: output.path, confirm: true) : nil
        let key = try PrivateKey.generate(type, policy: keyAccess.policy)
        var encoded = try key.encoded(as: format, passphrase: passphrase)
        defer { SecretBytes.zero(&encoded) }
        try output.write(encoded, binary: format.isBinary, permissions: .privateToOwner)
        Console.note("wrote \(key.kind) to \(output.displayName) (fingerprint \(key.publicKey.fingerprint))", quiet: quietOption.quiet)
    }
}

/// `signet key public KEY`.
struct KeyPublic: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "public",
        abstract: "Write the public key of KEY (a private or public key in any format)."
    )

    @Argument(help: ArgumentHelp("The key ('-': standard input).", valueName: "KEY"))
    var key: String

    @Option(help: ArgumentHelp("The format (pem is SPKI).", valueName: "FORMAT"))
    var format: PublicKeyFormat = .pem

    @Option(help: ArgumentHelp("Comment for the openssh format.", valueName: "TEXT"))
    var comment: String?

    @OptionGroup var output: OptionalOutputOptions<OutputHelpText>
    enum OutputHelpText: OutputHelp {
        static let help = ArgumentHelp("Output file (default: standard output).", valueName: "OUT")
    }

    @OptionGroup var keyAccess: KeyAccessOptions

    func run() async throws {
        if comment != nil, format != .openssh {
            throw SignetCoreError.invalidArgument(detail: "--comment applies only to --format openssh")
        }
        let publicKey = try await keyAccess.resolver.publicKey(key)
        let encoded = try publicKey.encoded(as: format, comment: comment)
        try output.write(encoded, binary: format.isBinary, permissions: .standard)
    }
}

/// `signet key fingerprint KEY`.
struct KeyFingerprintCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fingerprint",
        abstract: "Print the key's fingerprint: sha256/<base64 of SHA-256 over the DER SPKI>.",
        discussion: """
        The same value is an HTTP public key pin and the key id in bundles and signed \
        requests. It equals: openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64
        """
    )

    @Argument(help: ArgumentHelp("The key, public or private ('-': standard input).", valueName: "KEY"))
    var key: String

    @OptionGroup var keyAccess: KeyAccessOptions

    func run() async throws {
        let publicKey = try await keyAccess.resolver.publicKey(key)
        Console.write("\(publicKey.fingerprint)\n")
    }
}

/// `signet key convert IN -o OUT --format F`.
struct KeyConvert: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert a key between formats (private keys stay private unless --public).",
        discussion: """
        A private key is written 0600. --encrypt writes an encrypted PKCS#8 key (pem or der); \
        an encrypted input is decrypted with the passphrase from --passphrase-file, \
        SIGNET_PASSPHRASE or the terminal. With --encrypt, the new passphrase comes only from \
        --new-passphrase-file or the terminal, never from the sources of the current one.
        """
    )

    @Argument(help: ArgumentHelp("The key to convert ('-': standard input).", valueName: "IN"))
    var input: String

    @OptionGroup var output: OutputOptions<OutputHelpText>
    enum OutputHelpText: OutputHelp {
        static let help = ArgumentHelp("Output file ('-': standard output).", valueName: "OUT")
    }

    @OptionGroup var export: KeyExportOptions

    @OptionGroup var keyAccess: KeyAccessOptions

    func run() async throws {
        try output.refuseExisting()
        let resolver = keyAccess.resolver
        let decoded = try resolver.decodeFile(input)
        let source = resolver.displayName(input)
        if case .publicKey = decoded {
            if export.encrypt { throw SignetCoreError.invalidArgument(detail: "\(source): is a public key; there is nothing to encrypt") }
            try export.writePublic(try resolver.publicKey(from: decoded, source: source), to: output)
        } else if export.public {
            try export.writePublic(try resolver.publicKey(from: decoded, source: source), to: output)
        } else {
            try export.writePrivate(try resolver.privateKey(from: decoded, source: source), to: output)
        }
    }
}
