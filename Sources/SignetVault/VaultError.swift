import SignetCore

/// Every error `SignetVault` throws. Each case says what happened and, where there is one,
/// what to do about it.
public enum VaultError: SignetError, Equatable {
    /// There is no item for this service and account.
    case itemNotFound(service: String, account: String)
    /// An item for this service and account exists and adding was asked for, not replacing.
    case duplicateItem(service: String, account: String)
    /// The item exists but holds another kind of value (a password where a key was asked for).
    case wrongKind(service: String, account: String, expected: VaultItemKind, found: VaultItemKind)
    /// The vault was locked with ``Vault/lock()``; unlock it first.
    case locked(path: String)
    /// The passphrase or key file does not unlock the vault.
    case wrongPassphrase(path: String)
    /// The vault needs a credential that was not given (or was given one it does not use).
    case credentialsRequired(path: String, detail: String)
    /// The file is not a Signet vault at all.
    case notAVault(path: String, detail: String)
    /// The vault is damaged or was tampered with; `detail` says where.
    case corrupted(path: String, detail: String)
    /// `create` was asked for a path that already exists.
    case vaultExists(path: String)
    /// There is no vault at the path.
    case vaultMissing(path: String)
    /// Another process held the vault's write lock for longer than the busy timeout.
    case busy(path: String)
    /// The file system or SQLite failed (permissions, a full disk, an I/O error).
    case io(path: String, detail: String)
    /// A name, secret or option is not acceptable.
    case invalidArgument(detail: String)

    /// The message a user can act on: the input concerned and the problem, never a CLI flag.
    public var description: String {
        switch self {
        case .itemNotFound(let service, let account):
            return "no item for service '\(service)' and account '\(account)'"
        case .duplicateItem(let service, let account):
            return "an item for service '\(service)' and account '\(account)' already exists (delete or rename it first, or replace it)"
        case .wrongKind(let service, let account, let expected, let found):
            return "the item for service '\(service)' and account '\(account)' is a \(found.displayName), not a \(expected.displayName)"
        case .locked(let path):
            return "\(path): the vault is locked (unlock it with its passphrase or key file)"
        case .wrongPassphrase(let path):
            return "\(path): wrong passphrase or key file (or the vault's key record is damaged)"
        case .credentialsRequired(let path, let detail):
            return "\(path): \(detail)"
        case .notAVault(let path, let detail):
            return "\(path): not a Signet vault (\(detail))"
        case .corrupted(let path, let detail):
            return "\(path): the vault is damaged or was tampered with: \(detail)"
        case .vaultExists(let path):
            return "\(path): a vault (or another file) already exists there; it was left untouched"
        case .vaultMissing(let path):
            return "\(path): no vault there"
        case .busy(let path):
            return "\(path): the vault stayed locked by another process; try again"
        case .io(let path, let detail):
            return "\(path): \(detail)"
        case .invalidArgument(let detail):
            return detail
        }
    }

    /// The kind of failure, which decides the CLI's exit code.
    public var category: FailureCategory {
        switch self {
        case .itemNotFound, .duplicateItem, .locked, .wrongPassphrase, .vaultExists: return .checkFailed
        case .invalidArgument: return .usage
        case .wrongKind, .notAVault, .corrupted: return .malformedInput
        case .credentialsRequired, .vaultMissing, .busy, .io: return .environment
        }
    }
}

extension VaultError {
    /// The prefix of this module's codes in ``SignetErrorCode/description``.
    public static let codeDomain = "vault"
}
