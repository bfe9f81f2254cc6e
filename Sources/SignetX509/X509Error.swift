import SignetCore

/// Every error `SignetX509` and `SignetTLS` throw. Each names the input and the problem, never
/// a CLI flag.
public enum X509Error: SignetError, Equatable {
    /// The bytes are not a certificate, CSR, chain or PKCS#12 file (truncated, garbage, a
    /// structure nested too deeply, a field of the wrong type).
    case malformed(source: String, detail: String)
    /// Well formed, but uses something Signet does not support (an algorithm, a version).
    case unsupported(source: String, detail: String)
    /// A subject, a SAN list, a validity or another argument is not acceptable.
    case invalidArgument(detail: String)
    /// A signature (a CSR's self-signature, a certificate's) does not verify.
    case signatureInvalid(source: String, detail: String)
    /// The certificate chain does not validate (RFC 5280): untrusted, expired, not a CA, …
    case chainInvalid(subject: String, detail: String)
    /// The validated leaf is not for the host connected to (RFC 6125 server identity).
    case hostnameMismatch(hostname: String, detail: String)
    /// The search for a path to a trust anchor did all the work it may
    /// (``PathBuildingLimits``) without finding a valid one: the certificates offered are built
    /// to make it explode, or are a mesh no real PKI needs.
    case pathBuildingLimit(subject: String, detail: String)
    /// The validation was cancelled (a TLS handshake or request timed out) before it finished.
    case verificationCancelled(subject: String)
    /// No pinned key is in the validated chain. Lists what was presented and what was expected.
    case pinMismatch(host: String, presented: [String], expected: [String])
    /// A pin set is refused on loading: fewer than two pins, no backup pin, a bad field.
    case pinSetInvalid(source: String, detail: String)
    /// A PKCS#12 file's MAC does not verify: the passphrase is wrong or the file was altered.
    case macMismatch(source: String)
    /// The private key and the certificate do not belong together.
    case keyMismatch(detail: String)
    /// Reading or writing a file failed.
    case io(path: String, detail: String)

    /// The message a user can act on.
    public var description: String {
        switch self {
        case .malformed(let source, let detail): return "\(source): \(detail)"
        case .unsupported(let source, let detail): return "\(source): not supported: \(detail)"
        case .invalidArgument(let detail): return detail
        case .signatureInvalid(let source, let detail): return "\(source): signature does not verify: \(detail)"
        case .chainInvalid(let subject, let detail): return "certificate \(subject) is not trusted: \(detail)"
        case .hostnameMismatch(let hostname, let detail): return "the certificate is not valid for \(hostname): \(detail)"
        case .pathBuildingLimit(let subject, let detail): return "certificate \(subject) is not trusted: path building limit reached: \(detail)"
        case .verificationCancelled(let subject): return "the validation of certificate \(subject) was cancelled before it finished"
        case .pinMismatch(let host, let presented, let expected):
            return "\(host): no pinned key in the certificate chain; presented \(presented.joined(separator: ", ")); expected one of \(expected.joined(separator: ", "))"
        case .pinSetInvalid(let source, let detail): return "\(source): pin set refused: \(detail)"
        case .macMismatch(let source): return "\(source): the MAC does not verify: wrong passphrase, or the file was altered"
        case .keyMismatch(let detail): return detail
        case .io(let path, let detail): return "\(path): \(detail)"
        }
    }

    /// The kind of failure, which decides the CLI's exit code: a TLS peer that
    /// fails verification is a failed check, not an environment failure.
    public var category: FailureCategory {
        switch self {
        case .signatureInvalid, .chainInvalid, .hostnameMismatch, .pathBuildingLimit, .pinMismatch, .macMismatch, .keyMismatch: return .checkFailed
        case .invalidArgument: return .usage
        case .malformed, .unsupported, .pinSetInvalid: return .malformedInput
        case .io, .verificationCancelled: return .environment
        }
    }
}

extension X509Error {
    /// The prefix of this module's codes in ``SignetErrorCode/description``.
    public static let codeDomain = "x509"
}

extension X509Error {
    /// A SignetCore failure while reading or decoding `source`, as this module reports it.
    public init(reading error: any Error, source: String) {
        guard let error = error as? SignetCoreError else {
            self = error as? X509Error ?? .malformed(source: source, detail: String(describing: error))
            return
        }
        switch error {
        case .io(let path, let detail): self = .io(path: path, detail: detail)
        case .tooLarge(_, let limit): self = .malformed(source: source, detail: "larger than the \(limit)-byte limit")
        case .malformed(_, let detail): self = .malformed(source: source, detail: detail)
        case .unsupported(_, let detail): self = .unsupported(source: source, detail: detail)
        case .weakKey, .insecureAlgorithm: self = .unsupported(source: source, detail: error.description)
        case .wrongPassphrase: self = .macMismatch(source: source)
        default: self = .malformed(source: source, detail: error.description)
        }
    }
}
