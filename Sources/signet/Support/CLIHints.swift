import SignetAge
import SignetBundle
import SignetCore
import SignetVault
import SignetTLS
import SignetX509

/// What the CLI adds to a library error when it reports it: the flag or command that changes
/// the outcome. Library messages name no flag (a library user has none); the command line
/// does, keyed on the error's stable code.
enum CLIHints {
    /// The message the CLI prints for `error`: the library's, then the hint.
    static func message(for error: any SignetError) -> String { error.description + hint(for: error) }

    /// A hint to append to `error`'s message, or "" for none.
    static func hint(for error: any SignetError) -> String {
        switch error {
        case let error as SignetCoreError:
            switch error {
            case .outputExists: return " (use --force to overwrite it)"
            case .weakKey: return " (pass --allow-weak to use it anyway)"
            case .insecureAlgorithm: return " (pass --insecure to use it anyway)"
            case .legacySignatureNotAllowed: return " (pass --legacy to accept legacy signatures from a publisher known to make them)"
            default: return ""
            }
        case BundleError.outputExists:
            return " (use --force to replace it)"
        case AgeError.noMatchingIdentity:
            return " (give the key file it was encrypted to with -i FILE; without -i, only passphrase-encrypted files are opened)"
        case VaultError.vaultMissing:
            return " (create one with `signet vault init`, or pass --vault PATH)"
        case TLSError.untrusted(_, let reason):
            return hint(for: reason)
        case let error as X509Error:
            switch error {
            case .chainInvalid where error.description.contains("self-signed"):
                return " (trust its issuer with --roots, or pin it with --pinned-self-signed and two --pin values)"
            case .chainInvalid: return " (give the issuing CA with --roots, and intermediates with --untrusted)"
            case .pinSetInvalid: return " (give at least two --pin values, one of them a backup key not in the current chain)"
            default: return ""
            }
        default:
            return ""
        }
    }
}
