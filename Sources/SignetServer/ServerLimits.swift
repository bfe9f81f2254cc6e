import Foundation

/// What any connection or request may cost before it has proved anything: the server's
/// envelope (docs/server.md "Limits"). Every limit is enforced where the bytes are first seen,
/// and every default is one an operator never needs to touch.
public struct ServerLimits: Sendable, Equatable {
    /// The largest request head (request line and header fields together), in bytes; a larger
    /// one is refused with 431 and the connection closed.
    public var maximumHeaderBytes = 16 << 10
    /// The most header fields a request may carry.
    public var maximumHeaderFields = 100
    /// How long a connection may stay silent: before its TLS handshake and request head are
    /// complete, while a request body stalls, and between requests (keep-alive). Then it is closed.
    public var idleTimeout: Duration = .seconds(30)
    /// How long a request body (of the JSON endpoints) may take to arrive whole, however
    /// steadily it trickles in; then the answer is 408 and the connection is closed.
    public var bodyReadTimeout: Duration = .seconds(30)
    /// How long a response may wait for a client that does not read it; then the connection is closed.
    public var writeTimeout: Duration = .seconds(30)
    /// The most connections open at once. When all are taken, the connection that has waited
    /// longest on its client (silent since accepted, in its handshake or request head, idle
    /// between requests) is closed to make room; one whose request is being served never is.
    public var maximumConnections = 4096
    /// The most connections open at once from one client address (the peer's, before any
    /// proxy header is read); further ones are closed at once.
    public var maximumConnectionsPerAddress = 128
    /// The kernel's send buffer of each connection, in bytes (`SO_SNDBUF`; Linux keeps twice
    /// this): without a cap it grows to megabytes per socket, and a thousand clients that do not
    /// read a download would pin gigabytes of the host's TCP memory, which RSS does not show.
    public var socketSendBuffer = 256 << 10
    /// After SIGTERM, how long open requests may take to finish before their connections are closed.
    public var shutdownTimeout: Duration = .seconds(10)
    /// The threads that hash passwords (scrypt takes a core and up to 128 MiB each).
    public var passwordWorkers = max(1, min(ProcessInfo.processInfo.activeProcessorCount, 8))
    /// The password jobs that may wait for a worker; beyond that the answer is 503 with `Retry-After`.
    public var passwordQueue = 32
    /// The most nonces a node on SQLite remembers (those of the signatures it accepted within
    /// their lifetime, ``HTTPSignaturePolicy/maximumAge``): about 110 bytes each, taken as they
    /// come. When it is full of unexpired ones, signed requests are refused with 503 and
    /// `Retry-After` rather than one forgotten. Nodes on PostgreSQL keep nonces in the database.
    public var replayCacheCapacity = 1_000_000

    /// The defaults.
    public init() {}

    /// The first limit that cannot work (a zero or negative value), as a sentence, or nil.
    public var problem: String? {
        if maximumHeaderBytes < 1024 { return "the largest request head must be at least 1024 bytes" }
        if maximumHeaderFields < 8 { return "a request must be allowed at least 8 header fields" }
        for (name, value) in [("idle", idleTimeout), ("body read", bodyReadTimeout), ("write", writeTimeout)] where value <= .zero {
            return "the \(name) timeout must be longer than zero"
        }
        if shutdownTimeout < .zero { return "the shutdown timeout cannot be negative" }
        if maximumConnections < 1 || maximumConnectionsPerAddress < 1 { return "at least one connection must be allowed" }
        if socketSendBuffer < 4096 { return "the socket send buffer must be at least 4096 bytes" }
        if passwordWorkers < 1 { return "at least one password worker is needed" }
        if passwordQueue < 0 { return "the password queue cannot be negative" }
        if replayCacheCapacity < 1000 { return "the replay cache must hold at least 1000 nonces" }
        return nil
    }
}
