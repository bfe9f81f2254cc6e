import ArgumentParser
import SignetCore
import SignetX509
import X509

/// `signet cert p12`: PKCS#12 files, as openssl pkcs12 writes and reads them.
struct CertP12: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "p12",
        abstract: "PKCS#12 (.p12/.pfx): bundle a key and its certificates, or take them apart.",
        subcommands: [CertP12Export.self, CertP12Import.self])
}

struct CertP12Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a key, its certificate and a chain as a .p12 in OpenSSL 3's default form.",
        discussion: """
        PBES2 (PBKDF2-HMAC-SHA256, AES-256-CBC) for the key and the certificates, an HMAC-SHA256 \
        MAC, as openssl pkcs12 -export writes by default. The .p12's passphrase is new: it comes \
        from --new-passphrase-file or a prompt (--passphrase-file and SIGNET_PASSPHRASE unlock \
        the key, if it is encrypted).
        """)

    @Option(help: ArgumentHelp("The private key (a file or '-'; it must be exportable, so not a token key).", valueName: "KEY"))
    var key: String

    @Option(help: ArgumentHelp("The key's certificate.", valueName: "CERT"))
    var cert: String

    @Option(help: ArgumentHelp("More certificates to include (intermediates), PEM.", valueName: "FILE"))
    var chain: String?

    @Option(help: ArgumentHelp("A friendly name for the key and certificate.", valueName: "NAME"))
    var name: String?

    @OptionGroup var output: OutputOptions<OutputHelpText>
    enum OutputHelpText: OutputHelp {
        static let help = ArgumentHelp("The .p12 to write.", valueName: "OUT.p12")
    }

    @Option(name: .customLong("new-passphrase-file"), help: ArgumentHelp(
        "Read the .p12's passphrase from the first line of FILE (else a prompt).", valueName: "FILE"))
    var newPassphraseFile: String?

    @OptionGroup var keyAccess: KeyAccessOptions

    func run() async throws {
        try output.refuseExisting()
        let privateKey = try keyAccess.resolver.privateKey(path: key)
        let certificates = try X509Files.readCertificates(path: cert)
        let extra = try chain.map { try X509Files.readCertificates(path: $0) } ?? []
        let passphrase = try CLIPassphraseProvider(passphraseFile: newPassphraseFile, useEnvironment: false)
            .passphrase(for: output.path, confirm: true)
        let bytes = try PKCS12.encode(
            privateKey: privateKey, certificate: certificates[0], chain: Array(certificates.dropFirst()) + extra,
            passphrase: passphrase, friendlyName: name)
        try output.write(bytes, binary: true, permissions: .privateToOwner)
    }
}

struct CertP12Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Take a .p12 apart: its key (PKCS#8 PEM, 0600) and its certificates (PEM).",
        discussion: """
        Reads OpenSSL 3's default form and the legacy one (3DES, RC2) older openssl and many \
        .p12 files use. The passphrase comes from --passphrase-file, SIGNET_PASSPHRASE or a \
        prompt. A wrong passphrase or an altered file is exit 1.
        """)

    @Argument(help: ArgumentHelp("The .p12 file.", valueName: "IN.p12"))
    var input: String

    @Option(name: .customLong("key-out"), help: ArgumentHelp("Where to write the private key.", valueName: "KEY"))
    var keyOut: String

    @Option(name: .customLong("cert-out"), help: ArgumentHelp("Where to write the key's certificate.", valueName: "CERT"))
    var certOut: String

    @Option(name: .customLong("chain-out"), help: ArgumentHelp("Where to write the other certificates, if any.", valueName: "FILE"))
    var chainOut: String?

    @Flag(help: "Replace existing output files.")
    var force = false

    @OptionGroup var keyAccess: KeyAccessOptions

    func run() async throws {
        for path in [keyOut, certOut] + (chainOut.map { [$0] } ?? []) where !force && path != "-" && AtomicFile.exists(path) {
            throw SignetCoreError.outputExists(path: path)
        }
        let bytes = try FileInput.readAll(path: input, limit: PKCS12.maximumSize)
        let passphrase = try keyAccess.passphrases.passphrase(for: X509Files.displayName(input), confirm: false)
        let contents = try PKCS12.decode(bytes, passphrase: passphrase, source: X509Files.displayName(input), policy: keyAccess.policy)
        guard let privateKey = contents.privateKey else {
            throw X509Error.malformed(source: X509Files.displayName(input), detail: "it holds no private key")
        }
        guard let leaf = contents.certificates.first else {
            let detail = contents.skippedWeakCertificates > 0
                ? "its certificate has an RSA key under 2048 bits, which swift-certificates cannot read"
                : "it holds no certificate"
            throw X509Error.malformed(source: X509Files.displayName(input), detail: detail)
        }
        // PKCS12.decode puts the key's own certificate first when it has one; else the first
        // is some other certificate (a CA's), which must not be written as the key's.
        guard leaf.publicKey.spkiDER == privateKey.publicKey.spkiDER else {
            let detail = contents.skippedWeakCertificates > 0
                ? "the key's certificate has an RSA key under 2048 bits, which swift-certificates cannot read; the others belong to other keys"
                : "none of its certificates belongs to its private key"
            throw X509Error.malformed(source: X509Files.displayName(input), detail: detail)
        }
        var keyBytes = try privateKey.encoded(as: .pem)
        defer { SecretBytes.zero(&keyBytes) }
        try OutputDestination.write(keyBytes, to: keyOut, binary: false, permissions: .privateToOwner, force: force)
        try OutputDestination.write(try X509Files.encode(leaf, as: .pem), to: certOut, binary: false, permissions: .standard, force: force)
        let rest = Array(contents.certificates.dropFirst())
        if let chainOut, !rest.isEmpty {
            try OutputDestination.write(try X509Files.encodePEM(rest), to: chainOut, binary: false, permissions: .standard, force: force)
        }
    }
}
