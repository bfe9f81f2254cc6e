import ArgumentParser
import SignetCore

/// `signet password hash|verify`: password hashing as OWASP recommends (scrypt or PBKDF2).
struct PasswordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "password",
        abstract: "Hash passwords with scrypt or PBKDF2 and verify them (PHC strings).",
        discussion: """
        The password is read from --password-file F, else from standard input when it is not \
        a terminal, else from a prompt; one trailing newline is removed. It is never taken \
        from the command line.
        """,
        subcommands: [Hash.self, Verify.self]
    )

    /// Options both verbs share.
    struct PasswordOptions: ParsableArguments {
        @Option(name: .customLong("password-file"), help: ArgumentHelp("Read the password from F.", valueName: "F"))
        var passwordFile: String?

        @Option(
            name: .customLong("pepper-file"),
            help: ArgumentHelp("A server secret (the file's exact bytes) mixed into the hash; verification needs the same one.", valueName: "F"))
        var pepperFile: String?

        func hasher(algorithm: PasswordHashAlgorithm = .defaultScrypt) throws -> PasswordHasher {
            var pepper: SecretBytes?
            if let pepperFile {
                var bytes = try FileInput.readAll(path: pepperFile, limit: 4096)
                defer { SecretBytes.zero(&bytes) }
                guard bytes.count >= 16 else {
                    throw SignetCoreError.invalidArgument(detail: "\(pepperFile): a pepper needs at least 16 bytes (it has \(bytes.count))")
                }
                pepper = SecretBytes(bytes)
            }
            return PasswordHasher(algorithm: algorithm, pepper: pepper)
        }
    }

    struct Hash: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the PHC string of a password.",
            discussion: "scrypt uses N=2^17, r=8, p=1; pbkdf2-sha256 uses 600,000 iterations (OWASP's figures).")

        @Option(name: .shortAndLong, help: ArgumentHelp("scrypt (default) or pbkdf2-sha256.", valueName: "ALG"))
        var algorithm: String = "scrypt"

        @OptionGroup var options: PasswordOptions

        func run() async throws {
            let chosen: PasswordHashAlgorithm
            switch algorithm.lowercased() {
            case "scrypt": chosen = .defaultScrypt
            case "pbkdf2-sha256", "pbkdf2": chosen = .defaultPBKDF2
            default:
                throw SignetCoreError.invalidArgument(detail: "unknown password hash '\(algorithm)' (choose scrypt or pbkdf2-sha256)")
            }
            let hasher = try options.hasher(algorithm: chosen)
            let password = try SecretInput.read(file: options.passwordFile, what: "password", confirm: true)
            Console.write(try hasher.hash(password) + "\n")
        }
    }

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a password against a PHC string: exit 0 on a match, 1 otherwise.",
            discussion: """
            On a match, a note says when the stored hash is below the current policy (another \
            function or a lower cost) and should be replaced by a new `signet password hash`.
            """)

        @Argument(help: ArgumentHelp("The stored hash, e.g. '$scrypt$ln=17,r=8,p=1$…$…'.", valueName: "PHC"))
        var phc: String

        @OptionGroup var options: PasswordOptions
        @OptionGroup var output: QuietOption

        func run() async throws {
            let hasher = try options.hasher()
            _ = try PHCString(parsing: phc)  // a malformed hash is reported before asking for the password
            let password = try SecretInput.read(file: options.passwordFile, what: "password", confirm: false)
            guard try hasher.verify(password, against: phc) else {
                throw SignetCoreError.mismatch(detail: "the password does not match the hash")
            }
            Console.note("password matches", quiet: output.quiet)
            if try hasher.needsRehash(phc) {
                Console.note(
                    "the hash is below the current policy (\(hasher.algorithm)): rehash the password and store the new hash",
                    quiet: output.quiet)
            }
        }
    }
}
