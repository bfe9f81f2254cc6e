import SignetCore

/// Every error `SignetBundle` throws, each with a message a user can act on.
///
/// Exit codes (docs/formats/bundle.md "Exit codes"): a bundle that is well formed but does not
/// verify — bad or too few signatures, a digest or size that differs from the signed manifest, an
/// entry missing or unlisted, expiry, rollback, another name than expected — is a failed check (1);
/// a file that is not a well-formed, safe bundle (zip structure, hostile entry names, symbolic
/// links, size lies) is malformed input (3).
public enum BundleError: Error, Sendable, Equatable {
    /// A file or folder could not be read or written; `detail` is the system's reason.
    case io(path: String, detail: String)
    /// Input that is not what it should be: a damaged zip, a manifest or trust file that does
    /// not parse or is not canonical.
    case malformed(source: String, detail: String)
    /// A zip entry that could write outside the destination or hide something: refused
    /// before anything is written.
    case unsafeEntry(source: String, entry: String, detail: String)
    /// The bundle (or a trust root, or an extracted folder) did not verify.
    case verificationFailed(source: String, detail: String)
    /// The bundle's version is older than one already accepted or installed; `floor` says where
    /// that one is recorded.
    case rollback(name: String, version: Int, accepted: Int, floor: String)
    /// The bundle has the version already accepted or installed, but another manifest: a
    /// version is never reused for other content.
    case versionReused(name: String, version: Int, floor: String)
    /// The bundle is for another product than the one expected (`reason`: by whom).
    case wrongName(expected: String, found: String, reason: String)
    /// The manifest's expiry date has passed.
    case expired(name: String, expires: String, now: String)
    /// Files extracted from a bundle were changed, removed or added since.
    case changedAtRest(folder: String, problems: [String])
    /// An argument the caller gave cannot be used.
    case invalidArgument(detail: String)
    /// The output exists and replacing it was not allowed.
    case outputExists(path: String)
}

extension BundleError: SignetError {
    /// The message a user can act on: the input concerned and the problem, never a CLI flag.
    public var description: String {
        switch self {
        case .io(let path, let detail): return "\(path): \(detail)"
        case .malformed(let source, let detail): return "\(source): \(detail)"
        case .unsafeEntry(let source, let entry, let detail): return "\(source): entry \"\(Self.printable(entry))\": \(detail)"
        case .verificationFailed(let source, let detail): return "\(source): \(detail)"
        case .rollback(let name, let version, let accepted, let floor):
            return "rollback refused: \(name) version \(version) is older than version \(accepted), \(floor)"
        case .versionReused(let name, let version, let floor):
            return "rollback refused: \(name) version \(version) has other content than the version \(version) \(floor) (a version is never reused)"
        case .wrongName(let expected, let found, let reason):
            return "wrong bundle: it is \"\(Self.printable(found))\", but \"\(Self.printable(expected))\" is \(reason)"
        case .expired(let name, let expires, let now):
            return "\(name) expired at \(expires) (it is now \(now)); ask the publisher for a fresh bundle"
        case .changedAtRest(let folder, let problems):
            return "\(folder): \(problems.count) file(s) changed since extraction:\n" + problems.map { "  " + $0 }.joined(separator: "\n")
        case .invalidArgument(let detail): return detail
        case .outputExists(let path): return "\(path): already exists"
        }
    }

    /// The kind of failure, which decides the CLI's exit code (docs/formats/bundle.md "Exit codes").
    public var category: FailureCategory {
        switch self {
        case .verificationFailed, .rollback, .versionReused, .wrongName, .expired, .changedAtRest: return .checkFailed
        case .malformed, .unsafeEntry: return .malformedInput
        case .invalidArgument, .outputExists: return .usage
        case .io: return .environment
        }
    }

    /// Runs `body`, turning what it refuses into a usage error: for checks on what the caller
    /// gave (a bundle name, the input files) rather than on a bundle read from elsewhere.
    static func asArgument<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch BundleError.invalidArgument(let detail) {
            throw BundleError.invalidArgument(detail: detail)
        } catch let error as BundleError where error.category == .malformedInput {
            throw BundleError.invalidArgument(detail: String(describing: error))
        }
    }

    /// A name from a hostile archive, with control characters (C0, DEL, C1) made visible, so
    /// printing it cannot drive a terminal, and at most 300 Unicode scalars
    /// (SignetCore's `PrintableText.escaped(_:)` with its defaults).
    public static func printable(_ text: String) -> String {
        PrintableText.escaped(text)
    }
}

extension BundleError {
    /// The prefix of this module's codes in ``SignetErrorCode/description``.
    public static let codeDomain = "bundle"
}
