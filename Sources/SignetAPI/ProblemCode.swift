import HTTPTypes

/// What a refusal from `signet serve` means: the stable `code` of its RFC 9457 problem
/// document (`server.<name>`), and the status it comes with.
///
/// The one list of the server's problem codes: the server answers with these, the clients
/// match on them (never on a message's text), and the suite holds `docs/api/openapi.yaml` and
/// docs/server.md to them.
public enum ProblemCode: String, CaseIterable, Sendable, Codable {
    /// The body is not valid UTF-8 or JSON, a path segment or the HTTP framing is broken (400).
    case badRequest
    /// No request signature, or one failing a check; `Accept-Signature` says what to sign (401).
    case unauthorized
    /// A sign-in's e-mail address or password is wrong; an unknown address gets the same (401).
    case invalidCredentials
    /// No, unknown or ended session token; with `WWW-Authenticate: Bearer` (401).
    case sessionEnded
    /// The request was addressed, and so signed, for another server (401).
    case wrongAuthority
    /// The signing key's role may not do this (an app on the admin API, an admin on the user
    /// API), or the account is disabled (403).
    case forbidden
    /// The app or admin key that signed the request has been revoked (403).
    case revoked
    /// The app takes its user routes only from devices enrolled by attestation; the request
    /// was signed by the app key (403).
    case attestationRequired
    /// A device's attestation failed a check; the detail names it (`attestation.<check>`) (403).
    case attestationRefused
    /// The enrolment's challenge is unknown, used, expired or another app's: ask for a new one (403).
    case challengeExpired
    /// No such app, admin, user or resource; an unknown path or a method the path does not
    /// take (404).
    case notFound
    /// The request body did not arrive whole in time; the connection is closed (408).
    case requestTimeout
    /// The e-mail address, the name or the key is taken; revoking the last admin (409).
    case conflict
    /// The body is over the endpoint's limit (413).
    case payloadTooLarge
    /// The body is not of the endpoint's media type (415).
    case unsupportedMediaType
    /// A `Range` that starts past the end of the resource (416).
    case rangeNotSatisfiable
    /// A field breaks a rule; the detail is `field: rule` (422).
    case unprocessable
    /// Too many attempts; `Retry-After` gives the seconds to wait (429).
    case rateLimited
    /// Too much expensive work (password hashing) queued; `Retry-After` (503).
    case overloaded
    /// The database or another dependency failed; retry later (503).
    case unavailable

    /// The status's reason phrase (RFC 9110's names): the problem document's `title`.
    public var title: String {
        switch status {
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 408: return "Request Timeout"
        case 409: return "Conflict"
        case 413: return "Content Too Large"
        case 415: return "Unsupported Media Type"
        case 416: return "Range Not Satisfiable"
        case 422: return "Unprocessable Content"
        case 429: return "Too Many Requests"
        default: return "Service Unavailable"
        }
    }

    /// The status with its reason phrase, for a response's status line.
    public var httpStatus: HTTPResponse.Status { HTTPResponse.Status(code: status, reasonPhrase: title) }

    /// The problem document's `code`: `server.<name>`.
    public var code: String { Self.domain + "." + rawValue }

    /// The problem document's `type`: a URI ending in ``code``.
    public var type: String { Self.typePrefix + code }

    /// The HTTP status the code is answered with.
    public var status: Int {
        switch self {
        case .badRequest: return 400
        case .unauthorized, .invalidCredentials, .sessionEnded, .wrongAuthority: return 401
        case .forbidden, .revoked, .attestationRequired, .attestationRefused, .challengeExpired: return 403
        case .notFound: return 404
        case .requestTimeout: return 408
        case .conflict: return 409
        case .payloadTooLarge: return 413
        case .unsupportedMediaType: return 415
        case .rangeNotSatisfiable: return 416
        case .unprocessable: return 422
        case .rateLimited: return 429
        case .overloaded, .unavailable: return 503
        }
    }

    /// The code a problem document's `code` names (`server.revoked`), nil for one this version
    /// does not know.
    public init?(code: String) {
        guard code.hasPrefix(Self.domain + ".") else { return nil }
        self.init(rawValue: String(code.dropFirst(Self.domain.count + 1)))
    }

    /// The domain of the server's codes.
    public static let domain = "server"
    /// What a problem `type` starts with.
    public static let typePrefix = "https://signet.dev/problems/"
}

/// An RFC 9457 problem document: every refusal the server gives. `code` repeats the stable
/// code (``ProblemCode``) for clients that do not parse `type`.
public struct ProblemDocument: Codable, Sendable, Equatable {
    public var type: String
    public var title: String
    public var status: Int
    public var detail: String
    public var code: String
    public var instance: String?

    public init(type: String, title: String, status: Int, detail: String, code: String, instance: String? = nil) {
        self.type = type
        self.title = title
        self.status = status
        self.detail = detail
        self.code = code
        self.instance = instance
    }

    /// The document for `code`, with the status's reason phrase as its title.
    public init(code: ProblemCode, detail: String, instance: String?) {
        self.init(type: code.type, title: code.title, status: code.status, detail: detail, code: code.code, instance: instance)
    }

    /// The code, when this version knows it.
    public var problemCode: ProblemCode? { ProblemCode(code: code) }

    /// The media type of a problem document.
    public static let mediaType = "application/problem+json"
}
