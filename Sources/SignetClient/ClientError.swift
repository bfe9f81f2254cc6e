import SignetCore

/// Every error `SignetClient` throws, each with a stable code an app can switch on.
public enum ClientError: Error, Sendable, Equatable {
    /// The server presented a key that is not pinned: a man in the middle, or a server that
    /// moved to a key the app does not know.
    case pinMismatch(host: String)
    /// The server's certificate failed another check (chain, hostname, dates).
    case untrustedServer(detail: String)
    /// The server could not be reached or the connection broke.
    case unreachable(detail: String)
    /// The server refused the app's signature (401): the app's key is not enrolled, or the
    /// request was altered on the way.
    case signatureRefused(detail: String)
    /// The key that signed the request — the app's, or an ``AdminClient``'s admin key — has
    /// been revoked (403, `server.revoked`).
    case revokedApp(detail: String)
    /// The device key that signed the request has been revoked (403, `server.revoked`); the
    /// client forgot its key id: enrol again (``SignetClient/enrolDevice()``).
    case revokedDevice(detail: String)
    /// The app takes its user routes only from enrolled devices, and this request was signed by
    /// the app key (403, `server.attestationRequired`): enrol the device first.
    case attestationRequired(detail: String)
    /// The server refused the device's attestation (403, `server.attestationRefused`, or an
    /// expired challenge, `server.challengeExpired`); `detail` names the check.
    case attestationRefused(detail: String)
    /// No user is signed in on this client; `request` needs a session.
    case notSignedIn(request: String)
    /// The server no longer knows the session (signed out elsewhere, revoked, expired).
    case sessionEnded(detail: String)
    /// Wrong e-mail address or password; `detail` is the server's.
    case wrongCredentials(detail: String)
    /// Too many attempts; retry after this many seconds.
    case rateLimited(retryAfter: Int)
    /// The server refused the request for another reason: its status, code and detail.
    case refused(status: Int, code: String, detail: String)
    /// The response's signature is missing or does not verify under the server's key: the
    /// answer did not come, unaltered, from the server.
    case responseSignatureInvalid(detail: String)
    /// The response is not what the API answers.
    case malformedResponse(detail: String)
    /// A resource older than the one accepted before, or the same version with other content:
    /// refused, the previous one kept.
    case rollback(detail: String)
    /// A resource that fails a check — signatures against the trust root, a file's digest,
    /// its name, its expiry, an unsafe entry: refused, the previous one kept. `code` is the
    /// bundle check's stable code (`bundle.expired`, `bundle.verificationFailed`, …).
    case resourceRefused(code: String, detail: String)
    /// A trust root the server offered that the current one did not sign (or not with enough
    /// keys): the pinned root is kept.
    case trustRotationRefused(detail: String)
    /// Local storage (the resource state folder, the destination) failed.
    case storage(detail: String)
    /// The session could not be kept in or read from the vault.
    case sessionStore(detail: String)
    /// The configuration cannot be used.
    case invalidConfiguration(detail: String)
}

extension ClientError: SignetError {
    public var description: String {
        switch self {
        case .pinMismatch(let host): return "\(host): the server's key is not one of the pinned keys"
        case .untrustedServer(let detail): return "the server is not trusted: \(detail)"
        case .unreachable(let detail): return "the server cannot be reached: \(detail)"
        case .signatureRefused(let detail): return "the server refused the app's signature: \(detail)"
        case .revokedApp(let detail): return "the signing key is revoked: \(detail)"
        case .revokedDevice(let detail): return "the device key is revoked: \(detail)"
        case .attestationRequired(let detail): return "the app requires an enrolled device: \(detail)"
        case .attestationRefused(let detail): return "the device's attestation was refused: \(detail)"
        case .notSignedIn(let request): return "no user is signed in (\(request) needs a session)"
        case .sessionEnded(let detail): return "the session has ended: \(detail)"
        case .wrongCredentials(let detail): return "sign-in refused: \(detail)"
        case .rateLimited(let retryAfter): return "too many attempts; retry in \(retryAfter) s"
        case .refused(let status, let code, let detail): return "the server answered \(status) (\(code)): \(detail)"
        case .responseSignatureInvalid(let detail): return "the response is not signed by the server: \(detail)"
        case .malformedResponse(let detail): return "the server's answer is malformed: \(detail)"
        case .rollback(let detail): return "rollback refused: \(detail)"
        case .resourceRefused(_, let detail): return "the resource is refused: \(detail)"
        case .trustRotationRefused(let detail): return "the new trust root is refused: \(detail)"
        case .storage(let detail): return detail
        case .sessionStore(let detail): return "the session store: \(detail)"
        case .invalidConfiguration(let detail): return detail
        }
    }

    public var category: FailureCategory {
        switch self {
        case .unreachable, .sessionStore, .storage: return .environment
        case .invalidConfiguration: return .usage
        case .malformedResponse: return .malformedInput
        default: return .checkFailed
        }
    }

    public static let codeDomain = "client"
}

