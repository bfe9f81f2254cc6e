import SignetAPI
import SignetCore
import SignetHTTP

/// How a server behaves: where it listens, how requests are authenticated, and the rules for
/// passwords, sessions and sign-in attempts. The defaults are what `signet serve` runs with.
public struct ServerConfiguration: Sendable {
    /// The address to bind (`127.0.0.1` by default: loopback only).
    public var hostname = "127.0.0.1"
    /// The port; 0 picks a free one (the bound port is reported when the server runs).
    public var port = 8443

    /// What a request signature must cover and how fresh it must be; `nonce` is required so
    /// that a replay on any node is refused, and `authorization` must be covered when a request
    /// carries a bearer token.
    public var signaturePolicy: HTTPSignaturePolicy = {
        var policy = HTTPSignaturePolicy()
        policy.requiredComponents = APISignatureRules.requiredComponents.map { SignatureComponent($0) }
        policy.requireContentDigestWithBody = APISignatureRules.contentDigestWithBody
        policy.requireNonce = APISignatureRules.requiresNonce
        policy.fieldsCoveredWhenPresent = APISignatureRules.fieldsCoveredWhenPresent
        // A client signs once; a proxy in front may add one. More are not checked.
        policy.maximumSignaturesChecked = 2
        return policy
    }()
    /// The scheme and authority clients sign when the server sits behind a TLS-terminating
    /// proxy; nil uses what the server itself sees.
    public var publicScheme: String?
    public var publicAuthority: String?
    /// How long a revocation may take to reach every node: principals are cached this long.
    public var revocationLatency: Duration = .seconds(1)

    /// The largest request body any endpoint reads (but a resource upload).
    public var maximumBodySize = 64 << 10
    /// The largest resource upload (a tar or a bundle), streamed to ``workFolder``.
    public var maximumResourceSize: Int64 = 1 << 30
    /// Where uploads are unpacked and bundles built before they are stored (the system's
    /// temporary folder when nil).
    public var workFolder: String?

    /// How passwords are hashed (scrypt, stored as a PHC string); a stored hash weaker than this is
    /// replaced at the next sign-in.
    public var passwordHasher = PasswordHasher()
    /// The shortest and longest password accepted, in characters.
    public var passwordLength = 10...1024
    /// The longest display name, in characters.
    public var maximumDisplayNameLength = 100
    /// The longest display name, in bytes of UTF-8 (a few characters can carry kilobytes of combining marks).
    public var maximumDisplayNameBytes = 400
    /// How long a session lasts (30 days; whole seconds).
    public var sessionLifetime: Duration = .seconds(30 * 24 * 3600)

    /// What a connection or request may cost before it has proved anything (docs/server.md "Limits").
    public var limits = ServerLimits()
    /// The proxies whose `Forwarded`/`X-Forwarded-For` fields name the client; from any other
    /// peer those fields are ignored and the peer's address is the client's.
    public var trustedProxies: [IPAddressRange] = []

    /// Failed sign-ins allowed per account from one client address, in one window.
    public var failedSignInsPerAccount = 5
    /// Failed sign-ins allowed per client address, whatever the account, in one window.
    public var failedSignInsPerAddress = 50
    /// Failed sign-ins of one account, from all addresses, after which each address gets
    /// ``failedSignInsPerAccountUnderAlarm`` failed attempts at that account for the rest of the window. The owner signing in
    /// from an address that has not failed is never refused (docs/server.md "Sign-in attempts").
    public var failedSignInsBeforeAccountAlarm = 20
    /// Failed sign-ins allowed per account from one client address while the account's alarm is
    /// on: two, so that an owner's one typo does not lock them out.
    public var failedSignInsPerAccountUnderAlarm = 2
    /// Successful sign-ins allowed per account in one window: past it, 429 before any hashing.
    /// Only someone who knows the password can spend it, and it bounds the scrypt work such a
    /// person can make the server do (docs/server.md "Sign-in attempts").
    public var signInsPerAccount = 30
    /// The most sessions one account keeps; a new sign-in past it ends the oldest.
    public var maximumSessionsPerAccount = 100
    /// Registrations allowed per client address, and from everyone together, in one window.
    public var registrationsPerAddress = 10
    public var registrationsPerWindow = 1000
    /// The rate-limit window (15 minutes; whole seconds).
    public var rateLimitWindow: Duration = .seconds(15 * 60)

    /// What devices' attestations are verified against (Apple's and Google's roots and
    /// Google's revocation list by default).
    public var attestation = DeviceAttestationTrust()
    /// Device challenges issued per client address in one window.
    public var deviceChallengesPerAddress = 30
    /// Device challenges of one app, from all addresses, in one window, after which each
    /// address gets ``deviceChallengesPerAddressUnderAlarm`` for the rest of the window: a flood
    /// from many addresses is slowed, and an install asking from a clean address still gets one.
    public var deviceChallengesPerApp = 10_000
    public var deviceChallengesPerAddressUnderAlarm = 2
    /// How long a device challenge may wait for its enrolment (5 minutes; whole seconds).
    public var deviceChallengeLifetime: Duration = .seconds(300)

    /// The defaults.
    public init() {}
}
