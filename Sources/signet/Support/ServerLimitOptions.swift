import ArgumentParser
import SignetServer
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `signet serve`'s envelope: what a connection or request may cost before it has proved
/// anything (docs/server.md "Limits"). The defaults are ``ServerLimits``'s.
struct ServerLimitOptions: ParsableArguments {
    @Option(name: .customLong("idle-timeout"), help: ArgumentHelp(
        "Seconds a connection may stay silent (TLS handshake, request head, a stalled body, keep-alive) before it is closed.",
        valueName: "SECONDS"))
    var idleTimeout = Self.defaults.idleTimeout.components.seconds

    @Option(name: .customLong("body-timeout"), help: ArgumentHelp(
        "Seconds a request body may take to arrive (plus one per 16 KiB it brings); then 408.", valueName: "SECONDS"))
    var bodyTimeout = Self.defaults.bodyReadTimeout.components.seconds

    @Option(name: .customLong("write-timeout"), help: ArgumentHelp(
        "Seconds a response may wait for a client that does not read it; then the connection is closed.", valueName: "SECONDS"))
    var writeTimeout = Self.defaults.writeTimeout.components.seconds

    @Option(name: .customLong("shutdown-timeout"), help: ArgumentHelp(
        "Seconds open requests get to finish after SIGTERM or SIGINT; then their connections are closed.", valueName: "SECONDS"))
    var shutdownTimeout = Self.defaults.shutdownTimeout.components.seconds

    @Option(name: .customLong("max-connections"), help: ArgumentHelp(
        "Connections open at once; when all are taken, the one that has waited longest on its client is closed to make room.", valueName: "N"))
    var maximumConnections = Self.defaults.maximumConnections

    @Option(name: .customLong("max-connections-per-address"), help: ArgumentHelp(
        "Connections open at once from one peer address (a proxy's, behind one); more are closed.", valueName: "N"))
    var maximumConnectionsPerAddress = Self.defaults.maximumConnectionsPerAddress

    @Option(name: .customLong("max-header-bytes"), help: ArgumentHelp("The largest request head, in bytes.", valueName: "BYTES"))
    var maximumHeaderBytes = Self.defaults.maximumHeaderBytes

    @Option(name: .customLong("send-buffer"), help: ArgumentHelp(
        "The kernel's send buffer of each connection, in bytes (bounds what clients that do not read can pin).", valueName: "BYTES"))
    var socketSendBuffer = Self.defaults.socketSendBuffer

    @Option(name: .customLong("password-workers"), help: ArgumentHelp(
        "Threads hashing passwords at once (scrypt: a core and --scrypt-log-n's memory each).", valueName: "N"))
    var passwordWorkers = Self.defaults.passwordWorkers

    @Option(name: .customLong("password-queue"), help: ArgumentHelp(
        "Password hashes that may wait for a thread; more are answered 503 with Retry-After.", valueName: "N"))
    var passwordQueue = Self.defaults.passwordQueue

    @Option(name: .customLong("replay-cache-size"), help: ArgumentHelp(
        "Nonces a server on SQLite remembers (≈ 110 bytes each, 5 to 10 minutes of accepted signatures); when full, 503 with Retry-After.",
        valueName: "N"))
    var replayCacheCapacity = Self.defaults.replayCacheCapacity

    @Option(name: .customLong("sign-ins-per-account"), help: ArgumentHelp(
        "Successful sign-ins one account may make in 15 minutes; more wait (429) before any password is hashed.", valueName: "N"))
    var signInsPerAccount = ServerConfiguration().signInsPerAccount

    @Option(name: .customLong("trusted-proxy"), help: ArgumentHelp(
        "A proxy (CIDR, e.g. 10.0.0.0/8 or 127.0.0.1) whose Forwarded or X-Forwarded-For field names the client; repeatable.",
        valueName: "CIDR"))
    var trustedProxies: [String] = []

    static let defaults = ServerLimits()

    /// The limits these options give, or a usage error naming the option that cannot work.
    func limits() throws -> ServerLimits {
        var limits = ServerLimits()
        for (option, seconds) in [("--idle-timeout", idleTimeout), ("--body-timeout", bodyTimeout), ("--write-timeout", writeTimeout)]
        where !(1...86_400).contains(seconds) {
            throw ValidationError("\(option) must be 1 to 86400 seconds")
        }
        guard (0...3600).contains(shutdownTimeout) else { throw ValidationError("--shutdown-timeout must be 0 to 3600 seconds") }
        guard maximumConnections >= 1, maximumConnectionsPerAddress >= 1 else {
            throw ValidationError("--max-connections and --max-connections-per-address must be at least 1")
        }
        guard (1024...(1 << 20)).contains(maximumHeaderBytes) else { throw ValidationError("--max-header-bytes must be 1024 to 1048576") }
        guard (4096...(64 << 20)).contains(socketSendBuffer) else { throw ValidationError("--send-buffer must be 4096 to 67108864") }
        guard (1...256).contains(passwordWorkers) else { throw ValidationError("--password-workers must be 1 to 256") }
        guard (0...100_000).contains(passwordQueue) else { throw ValidationError("--password-queue must be 0 to 100000") }
        guard (1000...100_000_000).contains(replayCacheCapacity) else { throw ValidationError("--replay-cache-size must be 1000 to 100000000") }
        limits.idleTimeout = .seconds(idleTimeout)
        limits.bodyReadTimeout = .seconds(bodyTimeout)
        limits.writeTimeout = .seconds(writeTimeout)
        limits.shutdownTimeout = .seconds(shutdownTimeout)
        limits.maximumConnections = maximumConnections
        limits.maximumConnectionsPerAddress = maximumConnectionsPerAddress
        limits.maximumHeaderBytes = maximumHeaderBytes
        limits.socketSendBuffer = socketSendBuffer
        limits.passwordWorkers = passwordWorkers
        limits.passwordQueue = passwordQueue
        limits.replayCacheCapacity = replayCacheCapacity
        return limits
    }

    /// The `--trusted-proxy` blocks.
    func proxies() throws -> [IPAddressRange] {
        try trustedProxies.map { text in
            do {
                return try IPAddressRange(text)
            } catch {
                throw ValidationError("--trusted-proxy: \(error)")
            }
        }
    }

    /// Raises this process's open-file limit to its hard limit, so that `--max-connections`
    /// is what bounds connections rather than running out of descriptors (whose default soft
    /// limit, 1024, a thousand silent sockets reach). Returns the soft limit now in force.
    @discardableResult
    static func raiseOpenFileLimit() -> UInt64 {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { return UInt64(raised.rlim_cur) }
        }
        return UInt64(limit.rlim_cur)
    }
}
