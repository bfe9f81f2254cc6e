/// The broad kind of a failure, which decides the CLI's exit code.
public enum FailureCategory: Sendable, Equatable {
    /// A check failed: signature invalid, digest mismatch, wrong passphrase. Exit 1.
    case checkFailed
    /// The command line itself is wrong. Exit 2.
    case usage
    /// The input is malformed, of the wrong kind or unreadable as data. Exit 3.
    case malformedInput
    /// The environment failed: a missing file, a full disk, a permission. Exit 4.
    case environment
}

/// What every module's error enum provides, so that one place (the CLI's exit path, a
/// server's error middleware) can report any of them: a message a user can act on (naming
/// the input, never a CLI flag: a command line adds its own hints), the category that decides
/// the exit code, and a stable, data-free ``SignetErrorCode`` to match on.
public protocol SignetError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure, which the CLI maps to its exit code.
    var category: FailureCategory { get }
    /// The prefix of the module's codes: `core`, `bundle`, `http`, `vault`.
    static var codeDomain: String { get }
    /// What went wrong, without the data.
    var code: SignetErrorCode<Self> { get }
}

extension SignetError {
    /// The code as text, `domain.name` (`bundle.rollback`): for logs, problem documents and
    /// matching an error whose type is not known statically.
    public var codeName: String { code.description }
}

/// A stable, data-free identifier of what went wrong, in the shape of swift-certificates'
/// `X509Error.ErrorCode`: compare an error's ``SignetError/code`` with a static member
/// (`error.code == .rollback`) rather than its message, which may change. `Owner` is the error
/// type the code belongs to, so a bundle code never equals a vault code. Codes are only ever
/// added, never renamed.
public struct SignetErrorCode<Owner: SignetError>: Hashable, Sendable, CustomStringConvertible {
    /// The name within the module (the error case's name).
    public let name: String

    /// A code named `name`; modules define theirs as static members.
    public init(_ name: String) {
        self.name = name
    }

    /// `domain.name`, e.g. `bundle.rollback`.
    public var description: String { Owner.codeDomain + "." + name }
}

/// Every error `SignetCore` throws. Each case carries what a user needs to act on it: the
/// file (or other source) concerned and the exact problem.
public enum SignetCoreError: Error, Sendable, Equatable {
    /// A file could not be opened, read or written. `detail` is the system's reason.
    case io(path: String, detail: String)
    /// The output file exists and overwriting was not allowed.
    case outputExists(path: String)
    /// Input is not in any format we understand, or is damaged.
    case malformed(source: String, detail: String)
    /// Input is well formed but uses something we do not support (a curve, a cipher …).
    case unsupported(source: String, detail: String)
    /// Input is larger than the bound we accept for something read into memory.
    case tooLarge(source: String, limit: Int)
    /// A private key was needed but the source holds a public key only.
    case publicKeyWherePrivateNeeded(source: String)
    /// A key was given to an algorithm it cannot be used with.
    case algorithmMismatch(algorithm: String, keyDescription: String, hint: String)
    /// An RSA key below the accepted minimum size.
    case weakKey(source: String, bits: Int)
    /// The passphrase did not decrypt the key.
    case wrongPassphrase(source: String)
    /// A passphrase was needed and none could be obtained.
    case passphraseUnavailable(source: String, detail: String)
    /// A signature did not verify.
    case signatureInvalid(detail: String)
    /// A legacy minisign (`Ed`, non-prehashed) signature was given where only prehashed ones
    /// are accepted: the caller did not opt in to legacy signatures.
    case legacySignatureNotAllowed(source: String)
    /// An authentication tag or digest did not match.
    case mismatch(detail: String)
    /// An argument's value is not acceptable.
    case invalidArgument(detail: String)
    /// A broken digest (MD5, SHA-1) where the caller did not allow insecure algorithms.
    case insecureAlgorithm(source: String, algorithm: String)
    /// The underlying crypto library refused an operation.
    case cryptoFailure(detail: String)
}

extension SignetCoreError: SignetError {
    /// The message a user can act on: the input concerned and the problem, never a CLI flag.
    public var description: String {
        switch self {
        case .io(let path, let detail): return "\(path): \(detail)"
        case .outputExists(let path): return "\(path): already exists"
        case .malformed(let source, let detail): return "\(source): \(detail)"
        case .unsupported(let source, let detail): return "\(source): unsupported: \(detail)"
        case .tooLarge(let source, let limit):
            return "\(source): too large (the limit is \(ByteCountDescription.describe(limit)))"
        case .publicKeyWherePrivateNeeded(let source):
            return "\(source): is a public key, but a private key is needed here"
        case .algorithmMismatch(let algorithm, let key, let hint):
            return "algorithm \(algorithm) cannot be used with \(key)\(hint.isEmpty ? "" : " (\(hint))")"
        case .weakKey(let source, let bits):
            return "\(source): RSA key of \(bits) bits is below the 2048-bit minimum"
        case .wrongPassphrase(let source): return "\(source): wrong passphrase, or the encrypted key is damaged"
        case .passphraseUnavailable(let source, let detail): return "\(source): \(detail)"
        case .signatureInvalid(let detail): return detail
        case .legacySignatureNotAllowed(let source):
            return "\(source): legacy (non-prehashed \"Ed\") signature refused: such signatures are accepted only when legacy signatures are explicitly allowed (a prehashed signature relabelled as legacy would verify for its 64-byte BLAKE2b digest as if it were the file)"
        case .mismatch(let detail): return detail
        case .invalidArgument(let detail): return detail
        case .insecureAlgorithm(let source, let algorithm):
            return "\(source): \(algorithm) is broken (collisions are practical); it is used only when insecure digests are allowed explicitly"
        case .cryptoFailure(let detail): return "cryptographic operation failed: \(detail)"
        }
    }

    /// The kind of failure, which the CLI maps to its exit code.
    public var category: FailureCategory {
        switch self {
        case .signatureInvalid, .legacySignatureNotAllowed, .mismatch, .wrongPassphrase: return .checkFailed
        case .outputExists, .invalidArgument, .insecureAlgorithm, .algorithmMismatch: return .usage
        case .malformed, .unsupported, .tooLarge, .publicKeyWherePrivateNeeded, .weakKey: return .malformedInput
        case .io, .passphraseUnavailable, .cryptoFailure: return .environment
        }
    }
}

/// Human-readable byte counts for messages ("64 MiB").
enum ByteCountDescription {
    static func describe(_ count: Int) -> String {
        let units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024, unit < units.count - 1, value.truncatingRemainder(dividingBy: 1024) == 0 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(count) bytes" : "\(Int(value)) \(units[unit])"
    }
}


/// The stable codes of ``SignetCoreError``: one per case, named after it.
extension SignetErrorCode where Owner == SignetCoreError {
    /// A file could not be opened, read or written. `detail` is the system's reason.
    public static let io = Self("io")
    /// The output file exists and overwriting was not allowed.
    public static let outputExists = Self("outputExists")
    /// Input is not in any format we understand, or is damaged.
    public static let malformed = Self("malformed")
    /// Input is well formed but uses something we do not support (a curve, a cipher …).
    public static let unsupported = Self("unsupported")
    /// Input is larger than the bound we accept for something read into memory.
    public static let tooLarge = Self("tooLarge")
    /// A private key was needed but the source holds a public key only.
    public static let publicKeyWherePrivateNeeded = Self("publicKeyWherePrivateNeeded")
    /// A key was given to an algorithm it cannot be used with.
    public static let algorithmMismatch = Self("algorithmMismatch")
    /// An RSA key below the accepted minimum size.
    public static let weakKey = Self("weakKey")
    /// The passphrase did not decrypt the key.
    public static let wrongPassphrase = Self("wrongPassphrase")
    /// A passphrase was needed and none could be obtained.
    public static let passphraseUnavailable = Self("passphraseUnavailable")
    /// A signature did not verify.
    public static let signatureInvalid = Self("signatureInvalid")
    /// A legacy minisign (`Ed`, non-prehashed) signature was given where only prehashed ones
    /// are accepted: the caller did not opt in to legacy signatures.
    public static let legacySignatureNotAllowed = Self("legacySignatureNotAllowed")
    /// An authentication tag or digest did not match.
    public static let mismatch = Self("mismatch")
    /// An argument's value is not acceptable.
    public static let invalidArgument = Self("invalidArgument")
    /// A broken digest (MD5, SHA-1) where the caller did not allow insecure algorithms.
    public static let insecureAlgorithm = Self("insecureAlgorithm")
    /// The underlying crypto library refused an operation.
    public static let cryptoFailure = Self("cryptoFailure")
}

extension SignetCoreError {
    /// The prefix of this module's codes in ``SignetErrorCode/description``.
    public static let codeDomain = "core"

    /// What went wrong, without the data: what callers and tests match on.
    public var code: SignetErrorCode<SignetCoreError> {
        switch self {
        case .io: return .io
        case .outputExists: return .outputExists
        case .malformed: return .malformed
        case .unsupported: return .unsupported
        case .tooLarge: return .tooLarge
        case .publicKeyWherePrivateNeeded: return .publicKeyWherePrivateNeeded
        case .algorithmMismatch: return .algorithmMismatch
        case .weakKey: return .weakKey
        case .wrongPassphrase: return .wrongPassphrase
        case .passphraseUnavailable: return .passphraseUnavailable
        case .signatureInvalid: return .signatureInvalid
        case .legacySignatureNotAllowed: return .legacySignatureNotAllowed
        case .mismatch: return .mismatch
        case .invalidArgument: return .invalidArgument
        case .insecureAlgorithm: return .insecureAlgorithm
        case .cryptoFailure: return .cryptoFailure
        }
    }
}
