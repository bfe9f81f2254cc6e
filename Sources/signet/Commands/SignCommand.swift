import ArgumentParser
import SignetCore

/// `signet sign`: a signature over a file, byte-compatible with `openssl dgst -sign`.
struct SignCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign",
        abstract: "Sign a file (raw signature bytes as openssl dgst -sign writes them).",
        discussion: """
        Algorithms: rsa-v1_5-sha256 (RSA default), rsa-v1_5-sha512, rsa-pss-sha256, \
        rsa-pss-sha512 (salt as long as the digest), ecdsa-p256-sha256 (P-256 default, DER), \
        ecdsa-p384-sha384 (P-384 default, DER), ed25519 (the whole file is the message, as \
        openssl pkeyutl -sign -rawin; at most 128 MiB). Hash-then-sign algorithms stream \
        files of any size.
        """
    )

    @Option(help: ArgumentHelp("The private key: a file in any format, or '-'.", valueName: "KEY"))
    var key: String

    @Option(name: .shortAndLong, help: ArgumentHelp("Signature algorithm (default: the key's).", valueName: "ALG"))
    var algorithm: SignatureAlgorithm?

    @OptionGroup var output: OptionalOutputOptions<OutputHelpText>
    enum OutputHelpText: OutputHelp {
        static let help = ArgumentHelp("Where to write the signature (default: standard output).", valueName: "SIG")
    }

    @Flag(help: "Write the signature in base64 (one line) instead of raw bytes.")
    var base64 = false

    @OptionGroup var keyAccess: KeyAccessOptions
    @OptionGroup var quietOption: QuietOption

    @Argument(help: ArgumentHelp("The file to sign ('-': standard input).", valueName: "FILE"))
    var file: String

    func validate() throws {
        if key == "-" && file == "-" { throw ValidationError("the key and the file cannot both come from standard input") }
    }

    func run() async throws {
        let chosen = try algorithm.map { (algorithm) throws in try algorithm.requireFileSignature() }
        try output.refuseExisting()
        let signer = try await keyAccess.resolver.signer(key, algorithm: chosen)
        let bar = ProgressBar.make(label: "signing", total: FileSize.of(file), quiet: quietOption.quiet)
        defer { bar?.finish() }
        let signature = try await FileSignature.sign(path: file, with: signer, progress: bar?.callback)
        bar?.finish()
        let bytes = base64 ? Array((Base64.encode(signature) + "\n").utf8) : signature
        try output.write(bytes, binary: !base64, permissions: .standard)
    }
}

/// `signet verify`: checks a signature over a file; exit 0 valid, 1 invalid.
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify a file's signature (exit 0 valid, 1 invalid).",
        discussion: """
        The signature file holds raw bytes (as openssl dgst -sign writes them) or base64; \
        the form is detected. The key may be public or private, in any format.
        """
    )

    @Option(help: ArgumentHelp("The public key (a private key works too), or '-'.", valueName: "PUB"))
    var key: String

    @Option(name: .shortAndLong, help: ArgumentHelp("Signature algorithm (default: the key's).", valueName: "ALG"))
    var algorithm: SignatureAlgorithm?

    @Option(help: ArgumentHelp("The signature file ('-': standard input).", valueName: "SIG"))
    var signature: String

    @Flag(help: "The signature file is base64 (normally detected).")
    var base64 = false

    @OptionGroup var keyAccess: KeyAccessOptions
    @OptionGroup var quietOption: QuietOption

    @Argument(help: ArgumentHelp("The signed file ('-': standard input).", valueName: "FILE"))
    var file: String

    func validate() throws {
        if [key, signature, file].filter({ $0 == "-" }).count > 1 {
            throw ValidationError("only one of --key, --signature and FILE can come from standard input")
        }
    }

    func run() async throws {
        let chosen = try algorithm.map { (algorithm) throws in try algorithm.requireFileSignature() }
        let signatureBytes = try FileSignature.readSignatureFile(path: signature, encoding: base64 ? .base64 : .detect)
        let publicKey = try await keyAccess.resolver.publicKey(key)
        let verifier = try PublicKeyVerifier(key: publicKey, algorithm: chosen)
        let bar = ProgressBar.make(label: "verifying", total: FileSize.of(file), quiet: quietOption.quiet)
        defer { bar?.finish() }
        try FileSignature.verify(signature: signatureBytes, path: file, with: verifier, progress: bar?.callback)
        bar?.finish()
        let subject = file == "-" ? "standard input" : file
        Console.note("\(subject): signature OK (\(verifier.algorithm.rawValue), key \(publicKey.fingerprint))", quiet: quietOption.quiet)
    }
}

extension SignatureAlgorithm {
    /// Refuses a MAC where a file signature is meant.
    func requireFileSignature() throws -> SignatureAlgorithm {
        if isMAC { throw SignetCoreError.invalidArgument(detail: "\(rawValue) is a MAC, not a signature; use 'signet hmac'") }
        return self
    }
}
