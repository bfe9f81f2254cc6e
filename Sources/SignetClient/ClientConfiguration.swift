import Foundation
import SignetBundle
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
    /// The trust root the app ships with: resources must be signed by it, or by a later root
    /// it signed (the client walks the server's rotations and keeps the newest it accepted).
    public var trustRoot: TrustRoot?
    /// The folder where the client keeps what it learned about resources: the versions
    /// accepted (rollback state), the newest trust root, partial downloads.
    public var resourceState: String?
    /// The largest resource downloaded (1 GiB), and the longest a download may take (ten
    /// minutes), however the server paces it.
    public var maximumResourceSize: Int64 = 1 << 30
    public var maximumResourceDownloadTime: Duration = .seconds(600)
    /// The time a resource's expiry is judged against.
    public var clock: WallClock = .system
    /// This install's hardware key, proven by attestation: once enrolled
    /// (``SignetClient/enrolDevice()``), it signs every request instead of ``appSigner``. One
    /// ``SignetClient`` per device identity.
    public var device: (any DeviceIdentity)?

    /// A configuration; `server` must be an https URL with no path. `trustRoot` and
    /// `resourceState` are needed for ``SignetClient/fetchResource(_:into:)``.
    public init(server: String, appSigner: any Signer, serverKey: PublicKey? = nil, trustRoot: TrustRoot? = nil, resourceState: String? = nil) {
        self.server = server
        self.appSigner = appSigner
        self.serverKey = serverKey
        self.trustRoot = trustRoot
        self.resourceState = resourceState
    }
}
