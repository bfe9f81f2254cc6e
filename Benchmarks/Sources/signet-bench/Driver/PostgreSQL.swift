import Foundation
import Glibc

// The server section's temporary PostgreSQL, when its server binaries are installed (Debian:
// /usr/lib/postgresql/*/bin): a cluster in tmp/pg on a free port, trust authentication,
// default settings, run as the postgres user (through runuser) when the bench runs as root.

struct StartedPostgres {
    var binaries: String
    var port: Int
    var registered: PostgresCluster
}

extension Bench {
    /// Starts the cluster, or says why not and returns nil.
    func startPostgres() -> StartedPostgres? {
        guard let binaries = findPostgres() else {
            note("warning: PostgreSQL not found (initdb, postgres, pg_ctl, psql, createdb; Debian package postgresql): PostgreSQL rows skipped")
            return nil
        }
        let root = geteuid() == 0
        if root && (findInPath("runuser") == nil || getpwnam("postgres") == nil) {
            note("warning: running as root, PostgreSQL needs runuser and a postgres user to run as: PostgreSQL rows skipped")
            return nil
        }
        note("13 server: starting a temporary PostgreSQL (\(binaries))")
        let folder = tmp + "/pg"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        if root, let user = getpwnam("postgres") {
            // The postgres user must reach its folder inside the temporary one.
            chmod(tmp, 0o755)
            chown(folder, user.pointee.pw_uid, user.pointee.pw_gid)
        }
        let asPostgres: ([String]) -> [String] = { root ? ["runuser", "-u", "postgres", "--"] + $0 : $0 }
        guard let port = freePort() else { die("could not find a free port for PostgreSQL") }
        let data = folder + "/data"
        let initLog = tmp + "/pg-initdb.log"
        let initialized = run(asPostgres(["\(binaries)/initdb", "-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"]),
                              stdout: .file(initLog), stderr: .sameAsStdout, directory: "/")
        guard initialized.succeeded else { die("initdb failed:\n" + tail(readText(initLog), 20)) }
        let serverLog = tmp + "/pg-server.log"
        let pid = spawn(asPostgres(["\(binaries)/postgres", "-D", data, "-p", String(port), "-k", folder, "-c", "listen_addresses=127.0.0.1"]),
                        stdout: .file(serverLog), stderr: .sameAsStdout, directory: "/")
        let cluster = PostgresCluster(binaries: binaries, data: data, pid: pid)
        registry.state.withLock { $0.postgres = cluster }
        var ready = false
        for _ in 0..<300 {
            let probe = ["\(binaries)/psql", "-X", "-q", "-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-d", "postgres", "-Atc", "select 1"]
            if run(probe, stdout: .null, stderr: .null, timeout: 30).succeeded { ready = true; break }
            guard childIsRunning(pid) else { die("postgres exited:\n" + tail(readText(serverLog), 20)) }
            usleep(100_000)
        }
        guard ready else { die("PostgreSQL did not accept connections in 30 s:\n" + tail(readText(serverLog), 20)) }
        mustRun(["\(binaries)/createdb", "-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "signet_bench"], "createdb failed")
        return StartedPostgres(binaries: binaries, port: port, registered: cluster)
    }

    /// The folder holding initdb, postgres, pg_ctl, psql and createdb: initdb's on PATH, else the
    /// newest /usr/lib/postgresql/*/bin.
    private func findPostgres() -> String? {
        var found: String?
        if let initdb = findInPath("initdb") {
            found = URL(fileURLWithPath: initdb).resolvingSymlinksInPath().deletingLastPathComponent().path
        }
        if found == nil || !FileManager.default.isExecutableFile(atPath: found! + "/postgres") {
            let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
            let newest = versions.max { a, b in
                a.split(separator: ".").map { Int($0) ?? 0 }.lexicographicallyPrecedes(b.split(separator: ".").map { Int($0) ?? 0 })
            }
            found = newest.map { "/usr/lib/postgresql/\($0)/bin" }
        }
        guard let found else { return nil }
        for tool in ["initdb", "postgres", "pg_ctl", "psql", "createdb"] where !FileManager.default.isExecutableFile(atPath: "\(found)/\(tool)") {
            return nil
        }
        return found
    }

    /// The database's processes: PostgreSQL's tree under the process the bench started (runuser,
    /// the postmaster, its backends and workers); none for SQLite.
    func databaseProcesses() -> [pid_t] {
        guard let root = registry.state.withLock({ $0.postgres?.pid }), kill(root, 0) == 0 else { return [] }
        var parents: [pid_t: pid_t] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(name) else { continue }
            let stat = readText("/proc/\(pid)/stat")
            guard let close = stat.range(of: ") ", options: .backwards) else { continue }
            let words = fields(stat[close.upperBound...])
            if words.count > 1, let parent = pid_t(words[1]) { parents[pid] = parent }
        }
        var tree: [pid_t] = []
        for pid in parents.keys where pid != root {
            var ancestor = pid
            while let parent = parents[ancestor], ancestor != root, ancestor > 1 { ancestor = parent }
            if ancestor == root { tree.append(pid) }
        }
        return tree + [root]
    }
}

/// The last `count` lines of `text`.
func tail(_ text: String, _ count: Int) -> String {
    text.split(separator: "\n", omittingEmptySubsequences: false).reversed().drop(while: { $0.isEmpty }).prefix(count).reversed().joined(separator: "\n")
}

/// A TCP port on 127.0.0.1 that is free now.
func freePort() -> Int? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0 else { return nil }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard named == 0 else { return nil }
    return Int(UInt16(bigEndian: address.sin_port))
}
