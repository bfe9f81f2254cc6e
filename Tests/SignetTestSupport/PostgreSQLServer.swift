import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real PostgreSQL server for the tests: Debian's `initdb` and `pg_ctl` in a temporary folder,
/// listening on 127.0.0.1 at a free port, trusting local connections. One per test process,
/// started on first use and stopped (`pg_ctl stop -m immediate`) when the process exits.
///
/// Both programs refuse to run as root, so as root they run as the `postgres` user.
public final class PostgreSQLServer: Sendable {
    /// The port it listens on (127.0.0.1).
    public let port: Int
    /// Its data folder.
    public let dataFolder: String
    let binaries: String

    private init(port: Int, dataFolder: String, binaries: String) {
        self.port = port
        self.dataFolder = dataFolder
        self.binaries = binaries
    }

    private static let started = StartOnce()

    /// The process's server, started on the first call. Throws when PostgreSQL is not
    /// installed (Scripts/test installs it) or does not start.
    public static func shared() async throws -> PostgreSQLServer {
        try await started.server()
    }

    /// A new, empty database; returns its `postgres://` URL.
    public func makeDatabase() throws -> String {
        let name = "signet_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        let result = try ProcessRunner.run(
            binaries + "/psql", ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-q",
                                 "-c", "CREATE DATABASE \(name)"])
        guard result.status == 0 else { throw PostgreSQLError(description: "CREATE DATABASE failed: \(result)") }
        return "postgres://postgres@127.0.0.1:\(port)/\(name)?sslmode=disable"
    }

    /// Runs one SQL statement with psql in `database` and returns its rows, one per line,
    /// columns separated by `|`.
    public func query(_ sql: String, database url: String) throws -> [String] {
        let name = String(url.split(separator: "/").last?.split(separator: "?").first ?? "postgres")
        let result = try ProcessRunner.run(
            binaries + "/psql", ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-d", name, "-v", "ON_ERROR_STOP=1",
                                 "-A", "-t", "-c", sql])
        guard result.status == 0 else { throw PostgreSQLError(description: "psql failed: \(result)") }
        return result.out.split(whereSeparator: \.isNewline).map(String.init)
    }

    static func start() throws -> PostgreSQLServer {
        let candidates = ["/usr/lib/postgresql/17/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/15/bin"]
        guard let binaries = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0 + "/initdb") })
            ?? ProcessRunner.which("initdb").map({ URL(fileURLWithPath: $0).deletingLastPathComponent().path })
        else { throw PostgreSQLError(description: "PostgreSQL is not installed (Debian: postgresql; Scripts/test installs it)") }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("signet-postgres-\(UUID().uuidString)").path
        let data = root + "/data"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let asRoot = getuid() == 0
        if asRoot {
            guard let user = getpwnam("postgres") else { throw PostgreSQLError(description: "running as root, but there is no postgres user to run PostgreSQL as") }
            guard chown(root, user.pointee.pw_uid, user.pointee.pw_gid) == 0 else { throw PostgreSQLError(description: "chown \(root) failed") }
        }
        func run(_ program: String, _ arguments: [String]) throws -> RunResult {
            if asRoot { return try ProcessRunner.run("/usr/sbin/runuser", ["-u", "postgres", "--", binaries + "/" + program] + arguments) }
            return try ProcessRunner.run(binaries + "/" + program, arguments)
        }
        let initialised = try run("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"])
        guard initialised.status == 0 else { throw PostgreSQLError(description: "initdb failed: \(initialised)") }
        // postgres runs in the foreground as our child rather than daemonised by `pg_ctl start`:
        // Foundation's Process never sees the end of a program whose daemon inherits its
        // descriptors.
        var failures: [String] = []
        for attempt in 1...3 {
            let port = try freePort()
            let postgres = [binaries + "/postgres", "-D", data, "-p", String(port), "-k", root, "-c", "listen_addresses=127.0.0.1",
                            "-c", "fsync=off", "-c", "max_connections=200"]
            let log = URL(fileURLWithPath: root + "/server-\(attempt).log")
            let process = try BackgroundProcess(
                asRoot ? "/usr/sbin/runuser" : postgres[0], asRoot ? ["-u", "postgres", "--"] + postgres : Array(postgres.dropFirst()),
                in: URL(fileURLWithPath: root), log: log)
            let server = PostgreSQLServer(port: port, dataFolder: data, binaries: binaries)
            let deadline = TestTimeouts.deadline
            while process.process.isRunning, ContinuousClock.now < deadline {
                if (try? server.query("SELECT 1", database: "postgres")) == ["1"] {
                    StopAtExit.register(binaries: binaries, data: data, root: root, asRoot: asRoot, process: process)
                    return server
                }
                usleep(100_000)
            }
            failures.append(process.output)
            _ = try? run("pg_ctl", ["-D", data, "-m", "immediate", "stop"])
        }
        throw PostgreSQLError(description: "PostgreSQL did not start:\n" + failures.joined(separator: "\n---\n"))
    }

    /// A port nothing listens on now (the kernel's pick for a socket bound to port 0).
    public static func freePort() throws -> Int {
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketFD >= 0 else { throw PostgreSQLError(description: "socket() failed") }
        defer { close(socketFD) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketFD, $0, length) == 0 && getsockname(socketFD, $0, &length) == 0 }
        }
        guard bound else { throw PostgreSQLError(description: "bind() failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// The error of a PostgreSQL server that cannot be started or used.
public struct PostgreSQLError: Error, CustomStringConvertible {
    public var description: String
    public init(description: String) { self.description = description }
}

/// Starts the server once, however many tests ask at the same time.
private actor StartOnce {
    private var result: Result<PostgreSQLServer, any Error>?

    func server() throws -> PostgreSQLServer {
        if let result { return try result.get() }
        let outcome = Result { try PostgreSQLServer.start() }
        result = outcome
        return try outcome.get()
    }
}

/// `pg_ctl stop -m immediate` and the folder's removal when the test process exits.
private enum StopAtExit {
    nonisolated(unsafe) static var command: [String] = []
    nonisolated(unsafe) static var root = ""
    /// Kept until the process exits: releasing it would kill and wait for the server.
    nonisolated(unsafe) static var process: BackgroundProcess?

    static func register(binaries: String, data: String, root: String, asRoot: Bool, process: BackgroundProcess) {
        Self.process = process
        let stop = [binaries + "/pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"]
        command = asRoot ? ["/usr/sbin/runuser", "-u", "postgres", "--"] + stop : stop
        Self.root = root
        atexit {
            _ = try? ProcessRunner.run(StopAtExit.command[0], Array(StopAtExit.command.dropFirst()))
            try? FileManager.default.removeItem(atPath: StopAtExit.root)
        }
    }
}
