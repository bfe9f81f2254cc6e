import ArgumentParser
import SignetCore
import SignetPKCS11

/// `signet minisign sign` (minisign -S).
struct MinisignSign: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign",
        abstract: "Sign files with a minisign secret key (as minisign -S).",
        discussion: """
        Writes FILE.minisig (or -x SIG for the first file). The file's BLAKE2b-512 digest is \
        signed ("ED", streamed, any size); -l signs the whole file ("Ed", legacy, at most \
        128 MiB). The trusted comment (default: timestamp:<unix time>, file:<name>, hashed) \
        is signed too. Existing signature files are replaced only with -f. -s may name an \
        Ed25519 key on a PKCS#11 token (pkcs11:token=…;object=…): the signature's key id is \
        then derived from the key, and 'signet token public URI --format minisign' writes the \
        matching public key file.
        """
    )

    @Option(name: .customShort("s"), help: ArgumentHelp(
        "The secret key file, or a pkcs11: URI (default: ~/.minisign/minisign.key, or $MINISIGN_CONFIG_DIR/minisign.key).",
        valueName: "SEC"))
    var secretKeyPath: String?

    @Option(name: .customShort("p"), help: ArgumentHelp("A public key file to check the secret key against.", valueName: "PUB"))
    var publicKeyPath: String?

    @Option(name: .customShort("m"), help: ArgumentHelp("The file to sign.", valueName: "FILE"))
    var file: String

    @Argument(help: ArgumentHelp("More files to sign (each to FILE.minisig).", valueName: "FILE"))
    var moreFiles: [String] = []

    @Option(name: .customShort("x"), help: ArgumentHelp("The signature file (default: FILE.minisig).", valueName: "SIG"))
    var signaturePath: String?

    @Option(name: .customShort("t"), help: ArgumentHelp("The trusted (signed) comment, one line.", valueName: "COMMENT"))
    var trustedComment: String?

    @Option(name: .customShort("c"), help: ArgumentHelp(
        "The untrusted comment, one line (default: signature from minisign secret key).", valueName: "COMMENT"))
    var untrustedComment: String?

    @Flag(name: [.customShort("l"), .customLong("legacy")], help: "Sign the whole file (legacy \"Ed\") instead of its digest.")
    var legacy = false

    @Flag(name: [.customShort("f"), .customLong("force")], help: "Replace existing signature files.")
    var force = false

    @OptionGroup var passphrase: MinisignPassphraseOption
    @OptionGroup var pkcs11: PKCS11Options
    @OptionGroup var quietOption: QuietOption

    func validate() throws {
        if file == "-" || moreFiles.contains("-") {
            throw ValidationError("minisign signs files, not standard input (-m FILE)")
        }
        if signaturePath == "-" { throw ValidationError("-x needs a file name") }
    }

    func run() async throws {
        let jobs = [(file, signaturePath ?? file + MinisignFile.signatureSuffix)]
            + moreFiles.map { ($0, $0 + MinisignFile.signatureSuffix) }
        if !force {
            for (_, output) in jobs where AtomicFile.exists(output) { throw SignetCoreError.outputExists(path: output) }
        }
        let (signer, publicKey) = try await signerAndPublicKey()
        if let publicKeyPath {
            guard try MinisignPublicKey.read(path: publicKeyPath) == publicKey else {
                throw SignetCoreError.mismatch(detail: "\(publicKeyPath): is not the public key of this secret key (verification would fail)")
            }
        }
        let options = MinisignFile.Options(trustedComment: trustedComment, untrustedComment: untrustedComment, legacy: legacy)
        for (path, output) in jobs {
            let bar = ProgressBar.make(label: "signing", total: FileSize.of(path), quiet: quietOption.quiet)
            defer { bar?.finish() }
            let signature = try await MinisignFile.sign(path: path, signer: signer, keyID: publicKey.keyID, options: options, progress: bar?.callback)
            bar?.finish()
            try AtomicFile.write(signature.fileContents, to: output, permissions: .standard, overwrite: force)
            Console.note("\(path): signed with key \(publicKey.keyID) to \(output)", quiet: quietOption.quiet)
        }
    }

    /// The signer and minisign public key of `-s`: a minisign secret key file, or an Ed25519
    /// key on a token, whose key id is derived from the key.
    private func signerAndPublicKey() async throws -> (any Signer, MinisignPublicKey) {
        let path = secretKeyPath ?? MinisignCommand.defaultSecretKeyPath
        guard path.hasPrefix("pkcs11:") else {
            let key = try MinisignCommand.loadSecretKey(path, passphraseFile: passphrase.passphraseFile)
            return (key.signer, key.publicKey)
        }
        let resolver = KeySourceResolver(providers: [pkcs11.keySource])
        let publicKey = try await resolver.publicKey(path)
        guard publicKey.ed25519Key != nil else {
            throw SignetCoreError.unsupported(source: PKCS11URI.redacted(path), detail: "minisign signs with Ed25519 keys; this is \(publicKey.kind)")
        }
        let signer = try await resolver.signer(path, algorithm: .ed25519)
        guard let raw = signer.publicKey.ed25519Key?.rawRepresentation else {
            throw SignetCoreError.unsupported(source: PKCS11URI.redacted(path), detail: "minisign signs with Ed25519 keys; this is \(signer.publicKey.kind)")
        }
        return (signer, try MinisignPublicKey(keyID: MinisignKeyID.derived(fromEd25519: Array(raw)), rawKey: Array(raw)))
    }
}

/// `signet minisign verify` (minisign -V).
struct MinisignVerify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify a minisign signature (as minisign -V; exit 0 valid, 1 invalid).",
        discussion: """
        Checks that the signature's key id is the public key's, the signature over the file \
        (prehashed "ED"; legacy "Ed" only with --legacy), and the signature over the trusted \
        comment; then prints "Signature and comment signature verified" and the trusted \
        comment, as minisign does. Unlike minisign, legacy signatures are refused unless \
        --legacy is given.
        """
    )

    @Option(name: .customShort("p"), help: ArgumentHelp("The public key file (default: ./minisign.pub).", valueName: "PUB"))
    var publicKeyPath: String?

    @Option(name: .customShort("P"), help: ArgumentHelp("The public key as a base64 string (minisign -P).", valueName: "KEY"))
    var publicKeyString: String?

    @Option(name: .customShort("m"), help: ArgumentHelp("The signed file.", valueName: "FILE"))
    var file: String

    @Option(name: .customShort("x"), help: ArgumentHelp("The signature file (default: FILE.minisig).", valueName: "SIG"))
    var signaturePath: String?

    @Flag(name: [.customShort("Q"), .customLong("pretty-quiet")], help: "Print only the trusted comment.")
    var prettyQuiet = false

    @Flag(name: [.customShort("o"), .customLong("output")], help: "After verification, copy the file to standard output.")
    var output = false

    @Flag(name: [.customShort("H"), .customLong("require-prehashed")], help: "Refuse legacy (non-prehashed) signatures (the default; kept for minisign's -H).")
    var requirePrehashed = false

    @Flag(name: .customLong("legacy"), help: "Also accept legacy \"Ed\" signatures over the whole file (off by default: a prehashed signature relabelled as legacy would verify for a 64-byte file holding the digest).")
    var legacy = false

    @OptionGroup var quietOption: QuietOption

    func validate() throws {
        if publicKeyPath != nil, publicKeyString != nil {
            throw ValidationError("a public key cannot be given both inline (-P) and as a file (-p)")
        }
        if file == "-" { throw ValidationError("minisign verifies files, not standard input (-m FILE)") }
        if legacy, requirePrehashed { throw ValidationError("--legacy and -H (--require-prehashed) contradict each other") }
    }

    func run() async throws {
        let publicKey: MinisignPublicKey
        if let publicKeyString {
            publicKey = try MinisignPublicKey(base64: publicKeyString, source: "-P")
        } else {
            publicKey = try MinisignPublicKey.read(path: publicKeyPath ?? MinisignCommand.defaultPublicKeyPath)
        }
        let signature = try MinisignSignature.read(path: signaturePath ?? file + MinisignFile.signatureSuffix)
        let bar = ProgressBar.make(label: "verifying", total: FileSize.of(file), quiet: quietOption.quiet || prettyQuiet)
        defer { bar?.finish() }
        try MinisignFile.verify(signature, path: file, publicKey: publicKey, allowLegacy: legacy, progress: bar?.callback)
        bar?.finish()
        // Like minisign: the report goes to standard output, or to standard error with -o.
        let report: (String) -> Void = output ? { Console.writeError($0) } : { Console.write($0) }
        if prettyQuiet {
            report(PrintableText.terminalSafe(signature.trustedCommentText) + "\n")
        } else if !quietOption.quiet {
            report("Signature and comment signature verified\nTrusted comment: \(PrintableText.terminalSafe(signature.trustedCommentText))\n")
        }
        if output { try Self.copyToStandardOutput(file) }
    }

    private static func copyToStandardOutput(_ path: String) throws {
        let input = try FileInput(path: path)
        try input.forEachChunk { Console.write(bytes: Array($0)) }
    }
}
