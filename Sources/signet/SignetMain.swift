import ArgumentParser
import SignetCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The root command: `signet <noun> <verb>` for families, bare verbs for daily ones.
struct Signet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signet",
        abstract: "Hashes, MACs, keys and signatures that interoperate with openssl.",
        discussion: """
        Exit codes: 0 success; 1 a check failed (signature invalid, digest or HMAC mismatch, \
        wrong passphrase); 2 usage error; 3 malformed or unreadable input; 4 environment or \
        I/O failure.
        Passphrases come from --passphrase-file, the SIGNET_PASSPHRASE environment variable \
        or a prompt on the terminal, never from the command line.
        """,
        version: SignetVersion.string,
        subcommands: [
            HashCommand.self, HMACCommand.self, KeyCommand.self, SignCommand.self, VerifyCommand.self, PasswordCommand.self,
            VaultCommand.self, BundleCommand.self, MinisignCommand.self, RequestCommand.self, CertCommand.self,
            EncryptCommand.self, DecryptCommand.self, AgeCommand.self, TokenCommand.self, AttestCommand.self, ServeCommand.self, ServerCommand.self, ClientCommand.self,
        ]
    )
}

/// The entry point: runs the command and turns every failure into a message on stderr and
/// an exit code: 1 a failed check, 2 usage, 3 malformed input, 4 environment (``ExitStatus``).
@main
enum SignetMain {
    static func main() async {
        // A reader that goes away (`signet hash … | head -1`) must not kill us with a signal;
        // writes then fail with EPIPE and are dropped.
        signal(SIGPIPE, SIG_IGN)
        MemoryTuning.keepFreedMemory()
        do {
            var command = try Signet.parseAsRoot()
            if !(command is ServeCommand) { SignalCleanup.install() }
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(ExitStatus.report(error))
        }
    }
}

/// Maps errors to messages and exit codes.
enum ExitStatus {
    static let checkFailed: Int32 = 1
    static let usage: Int32 = 2
    static let malformedInput: Int32 = 3
    static let environment: Int32 = 4

    static func code(for category: FailureCategory) -> Int32 {
        switch category {
        case .checkFailed: return checkFailed
        case .usage: return usage
        case .malformedInput: return malformedInput
        case .environment: return environment
        }
    }

    /// Prints what went wrong and returns the exit code to use.
    static func report(_ error: any Error) -> Int32 {
        switch error {
        case let error as any SignetError:
            Console.error(CLIHints.message(for: error))
            return code(for: error.category)
        case let error as ExitCode:
            return error.rawValue
        default:
            switch Signet.exitCode(for: error) {
            case .success:
                // --help, --version: ArgumentParser prints them and exits 0.
                Signet.exit(withError: error)
            case .validationFailure:
                // ArgumentParser quotes the arguments it refuses: escaped, PINs hidden.
                Console.writeError(SecretRedaction.forTerminal(Signet.fullMessage(for: error)) + "\n")
                return usage
            default:
                Console.error("\(error)")
                return environment
            }
        }
    }
}
