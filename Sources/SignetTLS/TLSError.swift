import SignetCore
import SignetX509

/// Every error `SignetTLS`'s connections throw: a server whose certificates were refused (with
/// the certificate check's reason), one that could not be reached or broke the connection, or
/// an argument that cannot be used.
public enum TLSError: Error, Sendable, Equatable {
    /// The server's certificates were refused: its chain, its name or its pins. `reason` is
    /// the check's error (``X509Error/pinMismatch(host:presented:expected:)``,
    /// ``X509Error/chainInvalid(subject:detail:)``, ``X509Error/hostnameMismatch(hostname:detail:)``…).
    case untrusted(host: String, reason: X509Error)
    /// The server could not be reached, or TLS or the connection failed before a whole
    /// answer came: `detail` says what happened (refused, timed out, closed, too large).
    case connectionFailed(host: String, detail: String)
    /// An argument cannot be used: a URL that is not `https` or has no host, a bad port.
    case invalidArgument(detail: String)
}

extension TLSError: SignetError {
    /// The message a user can act on, naming the server.
    public var description: String {
        switch self {
        case .untrusted(_, let reason): return reason.description
        case .connectionFailed(let host, let detail): return "\(host): \(detail)"
        case .invalidArgument(let detail): return detail
        }
    }

    /// The kind of failure, which decides a CLI's exit code: a refused server is its check's
    /// (a failed check), a failed connection the environment's.
    public var category: FailureCategory {
        switch self {
        case .untrusted(_, let reason): return reason.category
        case .connectionFailed: return .environment
        case .invalidArgument: return .usage
        }
    }

    /// The prefix of this module's codes.
    public static let codeDomain = "tls"
}
