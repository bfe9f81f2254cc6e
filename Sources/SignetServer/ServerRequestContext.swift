import Hummingbird
import HummingbirdAuth
import NIOCore

/// The request context of every route: the principal (app or admin) whose signature the
/// request carries, once verified, and the client's address for rate limits.
public struct ServerRequestContext: AuthRequestContext, RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The enrolled app or admin that signed the request.
    public var identity: Principal?
    /// The peer's IP address (the TLS proxy's, behind one).
    public let clientAddress: String

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.identity = nil
        self.clientAddress = source.channel.remoteAddress?.ipAddress ?? "unknown"
    }

    /// The signing principal; 401 when there is none (a route reached without the
    /// authenticator is a programming error, refused rather than served).
    func principal(role: Principal.Role) throws(ServerError) -> Principal {
        guard let identity else { throw .unauthorized(detail: "the request is not signed by an enrolled key") }
        guard identity.role == role else {
            throw .forbidden(detail: role == .admin
                ? "the admin API takes requests signed by an admin key; \(identity.name) is an app"
                : "this endpoint takes requests signed by an app key; \(identity.name) is an admin")
        }
        return identity
    }
}
