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
///
/// The code is derived, not listed: it is the name of the enum case (`BundleError.rollback(…)`
/// has the code `bundle.rollback`), so adding a case adds its code and no second list is kept.
/// For that, every case of a conforming enum carries a payload (the input it concerns, a
/// detail): a case without one has no name reflection can read.
public protocol SignetError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure, which the CLI maps to its exit code.
    var category: FailureCategory { get }
    /// The prefix of the module's codes: `core`, `bundle`, `http`, `vault`.
    static var codeDomain: String { get }
    /// What went wrong, without the data; by default the case's name.
    var code: SignetErrorCode<Self> { get }
}

extension SignetError {
    /// What went wrong, without the data: the name of the enum case.
    public var code: SignetErrorCode<Self> {
        SignetErrorCode(Mirror(reflecting: self).children.first?.label ?? "unnamed")
    }

    /// The code as text, `domain.name` (`bundle.rollback`): for logs, problem documents and
    /// matching an error whose type is not known statically.
    public var codeName: String { code.description }
}

/// A stable, data-free identifier of what went wrong: the name of an error's case, in its
/// module's domain. Compare an error's ``SignetError/code`` with the name (`error.code ==
/// "rollback"`) rather than matching its message, which may change; in Swift code that knows
/// the type, a pattern (`catch BundleError.rollback`) says the same with the compiler's check.
/// `Owner` is the error type the code belongs to, so a bundle code never equals a vault code.
/// Codes are only ever added, never renamed.
public struct SignetErrorCode<Owner: SignetError>: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The name within the module (the error case's name).
    public let name: String

    /// The code named `name`.
    public init(_ name: String) {
        self.name = name
    }

    /// The code named by the literal: `error.code == "rollback"`.
    public init(stringLiteral name: String) {
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

extension SignetCoreError {
    /// The prefix of this module's codes in ``SignetErrorCode/description``.
    public static let codeDomain = "core"
}
