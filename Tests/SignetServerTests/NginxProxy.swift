import Foundation
import SignetTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// nginx (Debian's package, `/usr/sbin/nginx`; Scripts/test installs it) run by a test as a
/// reverse proxy on 127.0.0.1: its own configuration, pid file, logs and temporary folders in a
/// ``TemporaryFolder``, in the foreground (`daemon off`) as this process's child and as the
/// current user. One worker, so that round robin alternates strictly between the upstreams.
/// ``stop()`` ends it (and so does `deinit`).
final class NginxProxy: Sendable {
    let process: BackgroundProcess
    /// The port it listens on, on 127.0.0.1.
    let port: Int
    /// Where its configuration, logs and temporary files are.
    let folder: TemporaryFolder

    private init(process: BackgroundProcess, port: Int, folder: TemporaryFolder) {
        self.process = process
        self.port = port
        self.folder = folder
    }

    deinit { process.stop() }

    /// The nginx executable, or nil when it is not installed (it is in /usr/sbin, which may not be
    /// on `PATH`).
    static var binary: String? {
        FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx") ? "/usr/sbin/nginx" : ProcessRunner.which("nginx")
    }

    /// One request nginx handled, from its access log.
    struct LogEntry: Sendable, CustomStringConvertible {
        /// The address the client connected from (`$remote_addr`).
        var client: String
        /// The node that answered, `127.0.0.1:PORT` (`$upstream_addr`; `-` when none did).
        var upstream: String
        var status: Int
        /// The request line, `POST /v1/sessions HTTP/1.1`.
        var request: String

        var description: String { "\(client) \(upstream) \(status) \(request)" }
    }

    /// The access log so far, a line per request handled (written as each ends: read it after
    /// ``stop()`` to be sure of the last one).
    var accessLog: [LogEntry] {
        let text = (try? folder.readText("access.log")) ?? ""
        return text.split(whereSeparator: \.isNewline).compactMap { line -> LogEntry? in
            // `$remote_addr $upstream_addr $status "$request"`
            let parts = line.split(separator: " ", maxSplits: 3)
            guard parts.count == 4, let status = Int(parts[2]) else { return nil }
            return LogEntry(
                client: String(parts[0]), upstream: String(parts[1]), status: status,
                request: String(parts[3].trimmingCharacters(in: CharacterSet(charactersIn: "\"")))
            )
        }
    }

    /// What nginx wrote to its error log.
    var errorLog: String { (try? folder.readText("error.log")) ?? "" }

    /// Stops nginx (SIGTERM: it closes its connections and exits) and waits for the end.
    func stop() { process.stop() }

    /// The configuration: listen on 127.0.0.1:`port`, pass every request to `upstreams`
    /// (127.0.0.1 ports, round robin) with the client's address appended to `X-Forwarded-For`,
    /// and the lines of `extraProxyDirectives` (each ending in `;`) in the `location`. Every
    /// timeout is the hang guard: nginx is never the one that gives up on a slow node.
    static func configuration(port: Int, upstreams: [Int], extraProxyDirectives: [String], folder: TemporaryFolder) -> String {
        let timeout = "\(TestTimeouts.hangGuardSeconds)s"
        // As root without a `user`, the workers would run as nobody, who cannot use the folder.
        let user = getuid() == 0 ? "user root;\n" : ""
        let servers = upstreams.map { "        server 127.0.0.1:\($0);" }.joined(separator: "\n")
        let extra = extraProxyDirectives.map { "            \($0)" }.joined(separator: "\n")
        return """
            \(user)worker_processes 1;
            pid "\(folder.file("nginx.pid"))";
            error_log "\(folder.file("error.log"))" warn;
            events {
                worker_connections 512;
            }
            http {
                client_body_temp_path "\(folder.file("client-body"))";
                proxy_temp_path "\(folder.file("proxy"))";
                fastcgi_temp_path "\(folder.file("fastcgi"))";
                uwsgi_temp_path "\(folder.file("uwsgi"))";
                scgi_temp_path "\(folder.file("scgi"))";
                log_format upstreams '$remote_addr $upstream_addr $status "$request"';
                access_log "\(folder.file("access.log"))" upstreams;
                client_header_timeout \(timeout);
                client_body_timeout \(timeout);
                send_timeout \(timeout);
                upstream signet {
            \(servers)
                }
                server {
                    listen 127.0.0.1:\(port);
                    location / {
                        proxy_pass http://signet;
                        proxy_http_version 1.1;
                        proxy_set_header Connection "";
                        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
                        proxy_set_header Host $http_host;
                        proxy_read_timeout \(timeout);
                        proxy_send_timeout \(timeout);
                        # One node per request: the access log says which answered.
                        proxy_next_upstream off;
            \(extra)
                    }
                }
            }

            """
    }

    /// Starts nginx on 127.0.0.1:`port` in front of `upstreams` (see
    /// ``configuration(port:upstreams:extraProxyDirectives:folder:)``) and waits (a hang guard)
    /// until it has written its pid file — it has bound its port — and accepts a connection.
    /// Returns nil when another program had taken `port` (the caller picks another); throws when
    /// nginx is not installed or does not start for another reason.
    static func start(port: Int, upstreams: [Int], extraProxyDirectives: [String] = []) async throws -> NginxProxy? {
        guard let binary = Self.binary else { throw ServerTestError(description: "nginx is not installed (Debian: nginx; Scripts/test installs it)") }
        let folder = try TemporaryFolder(prefix: "signet-nginx")
        let configurationFile = try folder.write(
            "nginx.conf", Self.configuration(port: port, upstreams: upstreams, extraProxyDirectives: extraProxyDirectives, folder: folder))
        // `-e`: the error log from the start, before the configuration is read (else nginx tries
        // /var/log/nginx/error.log first).
        let process = try BackgroundProcess(
            binary, ["-c", configurationFile, "-p", folder.path + "/", "-e", folder.file("error.log"), "-g", "daemon off;"], in: folder.url,
            log: folder.fileURL("nginx.out"))
        let proxy = NginxProxy(process: process, port: port, folder: folder)
        let deadline = TestTimeouts.deadline
        while ContinuousClock.now < deadline {
            guard process.process.isRunning else {
                let said = process.output + proxy.errorLog
                proxy.stop()
                if said.contains("Address already in use") { return nil }
                let text = (try? folder.readText("nginx.conf")) ?? ""
                throw ServerTestError(description: "nginx did not start:\n\(said)\nits configuration:\n\(text)")
            }
            // The pid file is written once the listening socket is bound: only then can a
            // connection to the port be nginx's rather than another program's.
            if folder.exists("nginx.pid"), await Self.accepts(port: port) { return proxy }
            try await Task.sleep(for: .milliseconds(50))
        }
        let said = process.output + proxy.errorLog
        proxy.process.stop(signal: SIGKILL)
        throw ServerTestError(description: "nginx did not accept connections on 127.0.0.1:\(port) within the hang guard:\n\(said)")
    }

    /// Whether a connection to 127.0.0.1:`port` is accepted (it is closed at once, unused).
    static func accepts(port: Int) async -> Bool {
        guard let socket = try? LoopbackSocket(port: port) else { return false }
        defer { socket.close() }
        return (try? await socket.waitUntilConnected()) != nil
    }
}
