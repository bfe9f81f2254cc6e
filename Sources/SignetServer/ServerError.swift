import HTTPTypes
import SignetAPI
import SignetCore

/// Every error `SignetServer` gives a client or an operator.
///
/// Each case a client can be answered with maps to one ``ProblemCode`` (SignetAPI): its status
/// and its stable problem `type` (`https://signet.dev/problems/server.<code>`, RFC 9457). Its
/// message names what the client sent and never echoes secrets, SQL or internals.
public enum ServerError: Error, Sendable, Equatable {
    /// The request body or a field is not what the endpoint takes (400).
    case badRequest(detail: String)
    /// The request's signature, session or credentials are missing or wrong (401).
    case unauthorized(detail: String)
    /// The request has no session token, or one the server no longer knows (signed out,
    /// revoked, expired, started by another app, the account disabled): 401 with
    /// `WWW-Authenticate: Bearer`. Its own code, inside the signed body, so a client can tell it
    /// from a refused signature without trusting an unsigned header.
    case sessionEnded(detail: String)
    /// The e-mail address or password of a sign-in is wrong (401); unknown addresses get the
    /// same answer. `email` is the address tried; the message does not repeat it.
    case invalidCredentials(email: String)
    /// The caller is known but may not do this: a key of the wrong role, a disabled account
    /// (403).
    case forbidden(detail: String)
    /// The app or admin key that signed the request has been revoked (403).
    case revoked(detail: String)
    /// The app `app` takes its user routes only from enrolled devices, and the request was
    /// signed by the app key (403).
    case attestationRequired(app: String)
    /// A device's attestation failed the check `check` (an `AttestationError` code,
    /// `attestation.<name>`); `detail` says how (403).
    case attestationRefused(check: String, detail: String)
    /// An enrolment's challenge is unknown, used, expired or another app's (403).
    case challengeExpired(detail: String)
    /// Nothing exists under that name (404).
    case notFound(what: String)
    /// The name or e-mail address is already taken (409).
    case conflict(detail: String)
    /// The body is over the endpoint's limit (413).
    case payloadTooLarge(limit: Int)
    /// The body is not `application/json` (415).
    case unsupportedMediaType(contentType: String)
    /// Well-formed input that breaks a rule: a short password, an invalid e-mail (422).
    case unprocessable(field: String, detail: String)
    /// A `Range` that starts past the end of a resource of `size` bytes (416).
    case rangeNotSatisfiable(size: Int64)
    /// Too many attempts; retry after the given seconds (429).
    case rateLimited(retryAfter: Int)
    /// The request is addressed (and so signed) for another server than this one: its
    /// authority is not one of the server's names and port (401).
    case wrongAuthority(authority: String)
    /// The request's body did not arrive whole in time (408); the connection is closed.
    case requestTimeout(limit: Duration)
    /// The server has more expensive work (password hashing) queued than it takes; retry after
    /// the given seconds (503 with `Retry-After`).
    case overloaded(retryAfter: Int)
    /// The database or another dependency failed; retry later (503). The detail is logged,
    /// never sent.
    case unavailable(detail: String)
    /// The server's own configuration or data folder cannot be used (start-up only).
    case configuration(detail: String)
}

extension ServerError: SignetError {
    /// What went wrong, for the client (``unavailable(detail:)`` says only that it is
    /// temporary: its detail is for the log).
    public var description: String {
        switch self {
        case .badRequest(let detail), .unauthorized(let detail), .forbidden(let detail), .revoked(let detail), .conflict(let detail),
             .sessionEnded(let detail):
            return detail
        case .invalidCredentials: return "wrong e-mail address or password"
        case .attestationRequired(let app):
            return "the app \(app) takes this route only from devices enrolled by attestation; the request was signed by the app key"
        case .attestationRefused(let check, let detail): return "the attestation was refused (\(check)): \(detail)"
        case .challengeExpired(let detail): return detail
        case .notFound(let what): return "\(what) does not exist"
        case .payloadTooLarge(let limit): return "the body is over the limit of \(limit) bytes"
        case .unsupportedMediaType(let contentType): return "the body must be application/json, not \(contentType.isEmpty ? "nothing" : contentType)"
        case .unprocessable(let field, let detail): return "\(field): \(detail)"
        case .rangeNotSatisfiable(let size): return "the range starts past the end of the resource (\(size) bytes)"
        case .rateLimited(let retryAfter): return "too many attempts; retry in \(retryAfter) s"
        case .wrongAuthority(let authority):
            return "the request is addressed to \"\(authority)\", which is not this server: a signature binds the server it was made for"
        case .requestTimeout(let limit): return "the request body did not arrive within \(limit.components.seconds) s"
        case .overloaded(let retryAfter): return "the server is busy; retry in \(retryAfter) s"
        case .unavailable: return "the server cannot answer this now; retry later"
        case .configuration(let detail): return detail
        }
    }

    /// The kind of failure, which decides a CLI's exit code.
    public var category: FailureCategory {
        switch self {
        case .badRequest, .payloadTooLarge, .unsupportedMediaType, .unprocessable: return .malformedInput
        case .unavailable, .configuration, .overloaded, .requestTimeout: return .environment
        default: return .checkFailed
        }
    }

    public static let codeDomain = "server"

    /// The problem code a client is answered with (the one named as the case); nil for
    /// ``configuration(detail:)``, which is never sent.
    public var problemCode: ProblemCode? {
        ProblemCode(rawValue: code.name)
    }

    /// The HTTP status the error is answered with.
    public var status: HTTPResponse.Status {
        HTTPResponse.Status(code: (problemCode ?? .unavailable).status)
    }
}
