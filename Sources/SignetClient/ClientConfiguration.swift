import SignetCore
import SignetHTTP

/// What an app configures once: the server, how it is trusted, the app's key, and the server's
/// response-signing key when responses are to be checked.
public struct ClientConfiguration: Sendable {
    /// `https://host[:port]`.
    public var server: String
    /// Signs every request (any `Signer`: a key file, a vault key, a token key).
    public var appSigner: any Signer
    /// The server's response-signing key: when set, every response must carry its signature
    /// (the client asks with `Accept-Signature`) over the status, the body and the request it
    /// answers, or it is refused as ``ClientError/responseSignatureInvalid(detail:)``.
    public var serverKey: PublicKey?

    /// A configuration; `server` must be an https URL with no path.
    public init(server: String, appSigner: any Signer, serverKey: PublicKey? = nil) {
        self.server = server
        self.appSigner = appSigner
        self.serverKey = serverKey
    }
}
