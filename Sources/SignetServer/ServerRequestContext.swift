import Hummingbird
import HummingbirdAuth
import NIOCore

/// The request context of every route: the principal (app or admin) whose signature the
/// request carries, once verified, and the client's address for rate limits.
public struct ServerRequestContext: AuthRequestContext, RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The enrolled app or admin that signed the request.
    public var identity: Principal?
    /// The client's IP address: the peer's, or behind a trusted proxy the one the proxy names
    /// (``ServerConfiguration/trustedProxies``).
    public internal(set) var clientAddress: String
    /// The peer's IP address (a proxy's, behind one).
    public let peerAddress: String
    /// The port the connection came in on.
    let localPort: Int?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.identity = nil
        self.peerAddress = source.channel.remoteAddress?.ipAddress ?? "unknown"
        self.clientAddress = peerAddress
        self.localPort = source.channel.localAddress?.port
    }

    /// The signing principal; 401 when there is none (a route reached without the
    /// authenticator is a programming error, refused rather than served).
    func principal(role: Principal.Role) throws -> Principal {
        guard let identity else { throw ServerError.unauthorized(detail: "the request is not signed by an enrolled key") }
        guard identity.role == role else {
            throw ServerError.forbidden(detail: role == .admin
                ? "the admin API takes requests signed by an admin key; \(identity.name) is an app"
                : "this endpoint takes requests signed by an app key; \(identity.name) is an admin")
        }
        return identity
    }

    /// The app (or one of its devices) calling a user route: 403 ``ServerError/attestationRequired(app:)``
    /// when the app takes those only from enrolled devices and its own key signed.
    func userCaller() throws -> Principal {
        let app = try principal(role: .app)
        if app.requiresAttestation, app.device == nil { throw ServerError.attestationRequired(app: app.name) }
        return app
    }
}

/// Names the client of every request before anything else reads it (see ``ClientAddress``).
struct ClientAddressMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    let trusted: [IPAddressRange]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard !trusted.isEmpty else { return try await next(request, context) }
        var context = context
        context.clientAddress = ClientAddress.resolve(peer: context.peerAddress, fields: request.headers, trusted: trusted)
        return try await next(request, context)
    }
}

/// Refuses a request addressed to another server (``ServerAuthorities``) before its signature is checked.
struct AuthorityMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    let authorities: ServerAuthorities
    let scheme: String

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        try check(request, context: context)
        return try await next(request, context)
    }

    /// The check alone, for a route outside the group the middleware guards.
    func check(_ request: Request, context: Context) throws {
        try authorities.check(request.head.authority, localPort: context.localPort, scheme: scheme)
    }
}
