import Foundation
import Glibc

// 13. server: `signet serve` over TLS on 127.0.0.1 under wrk, on SQLite and, when its server
// binaries are installed, on a temporary PostgreSQL cluster.

/// What the server section's runs share.
private struct ServerRun {
    var folder: String          // tmp/server
    var label = ""              // SQLite or PostgreSQL
    var url = ""
    var pins: [String] = []
    var authority = ""
    var scryptBound = ""        // cores / one scrypt, "%.2f"
    var verifyMicroseconds = "" // one Ed25519 check in process, "%.1f"
    var meCount = 0             // GET /v1/me requests signed per run
    var passwordCount = 0       // sign-ins and registrations signed per run
}

extension Bench {
    func serverSection() {
        guard findInPath("wrk") != nil else { return note("warning: wrk not found (Debian package wrk): server rows skipped") }
        var run = ServerRun(folder: tmp + "/server")
        let srv = run.folder
        try? FileManager.default.createDirectory(atPath: srv, withIntermediateDirectories: true)
        let cores = processorCount()
        let seconds = settings.serverSeconds
        // The bound on password checks: every core running scrypt (ln=17, r=8, p=1, what
        // `signet serve --scrypt-log-n 17` hashes with) back to back. One scrypt = `signet password
        // hash` less signet's start-up (`signet hash` of 32 bytes), each the best of BENCH_RUNS.
        note("13 server: one scrypt ln=17 r=8 p=1 (signet password hash less signet hash of 32 bytes, best of \(settings.runs))")
        writeText(srv + "/scrypt-password", "bench-password-scrypt\n")
        let scryptTotal = bestOf { timed([signet, "password", "hash", "--password-file", srv + "/scrypt-password"]) }
        let startup = bestOf { timed([signet, "hash", "-q", tmp + "/tiny.bin"]) }
        var scryptMicroseconds = scryptTotal - startup
        if scryptMicroseconds <= 0 { scryptMicroseconds = scryptTotal }
        let scryptMilliseconds = format("%.1f", Double(scryptMicroseconds) / 1000)
        run.scryptBound = format("%.2f", Double(cores) * 1e6 / Double(scryptMicroseconds))
        row("one scrypt ln=17 r=8 p=1: signet password hash less start-up (\(startup / 1000) ms, signet hash)", "\(scryptMilliseconds) ms", "-", "-",
            "bound: \(cores) cores / \(scryptMilliseconds) ms = \(run.scryptBound) /s")
        // Enough distinct pre-signed requests that wrk never repeats one (a repeat is a replay,
        // refused with 401): 20,000 per second of run for GET /v1/me; twice the scrypt bound, plus
        // 100, for sign-ins and registrations. A run that forms more requests than that, or has
        // any refused or failed, fails the bench.
        run.meCount = seconds * 20_000
        run.passwordCount = Int(Double(cores) * 1e6 / Double(scryptMicroseconds) * Double(seconds) * 2) + 101

        mustRun([signet, "key", "generate", "-q", "-t", "ed25519", "-o", srv + "/admin.pem"], "signet key generate (admin) failed")
        mustRun([signet, "key", "generate", "-q", "-t", "ed25519", "-o", srv + "/app.pem"], "signet key generate (app) failed")
        mustRun([signet, "key", "public", srv + "/app.pem", "-o", srv + "/app.pub"], "signet key public (app) failed")
        writeText(srv + "/register.json", #"{"email":"bench-user@bench.example","password":"bench-password-user","displayName":"Bench user"}"#)
        writeText(srv + "/signin.json", #"{"email":"bench-user@bench.example","password":"bench-password-user"}"#)
        writeText(srv + "/requests.lua", requestsLua)
        // One Ed25519 check in process (signet-bench, distinct signatures), for the overhead figure.
        run.verifyMicroseconds = format("%.1f", 1e6 / value(verifyRateOf("ed25519")))

        serverDatabase(&run, slug: "sqlite", label: "SQLite", data: srv + "/sqlite", extra: [])
        var databases = "SQLite (the data folder's, WAL, synchronous=FULL, on \(fileSystemType(srv)))"
        if let cluster = startPostgres() {
            let version = firstLine(capture(["\(cluster.binaries)/postgres", "--version"], stderr: .null).output)
            let database = "postgres://postgres@127.0.0.1:\(cluster.port)/signet_bench?sslmode=disable"
            serverDatabase(&run, slug: "postgres", label: "PostgreSQL", data: srv + "/postgres", extra: ["--database", database])
            registry.stopPostgres(cluster.registered)
            databases += "; \(version.isEmpty ? "PostgreSQL" : version) (a temporary cluster on 127.0.0.1, default settings, fsync on)"
        }
        notes["server"] = "signet serve over TLS on 127.0.0.1 (its self-signed certificate), --scrypt-log-n 17; databases: \(databases); wrk \(wrkVersion()), 1 thread, \(seconds) s per run (health and /v1/me: medians of \(settings.serverRounds) rounds, CPU per request from /proc), 16 connections (sign-ins and registrations: 4; timeout 10 s), on the same \(cores) cores as the server; every signed request distinct (its own nonce; signed by signet-bench server-requests just before its run, Ed25519 app key); sign-in and registration bound = cores / one scrypt ln=17 r=8 p=1 (\(scryptMilliseconds) ms: signet password hash less signet's start-up)"
    }

    /// A server on its own data folder (and database), an app, a user and a session; then the
    /// four runs and their rows.
    private func serverDatabase(_ run: inout ServerRun, slug: String, label: String, data: String, extra: [String]) {
        let srv = run.folder
        run.label = label
        let seconds = settings.serverSeconds
        note("13 server (\(label)): signet server init and serve, enrolling an app, registering and signing in a user")
        mustRun([signet, "server", "init", "--data", data, "--admin-key", srv + "/admin.pem"] + extra, "signet server init (\(label)) failed", stdout: .file(data + ".init"))
        // --trusted-proxy: the pre-signed registrations each name a client address of their own
        // (X-Forwarded-For), since registrations are limited per address; --sign-ins-per-account:
        // the sign-in row signs one account in back to back to measure throughput.
        let server = spawn(
            [signet, "serve", "--data", data, "--port", "0", "--scrypt-log-n", "17", "--log-level", "error", "--trusted-proxy", "127.0.0.1",
             "--sign-ins-per-account", "1000000"] + extra,
            stdout: .file(data + ".out"), stderr: .file(data + ".err"))
        let printed = waitForLine("response-key: ", in: data + ".out", of: server, errors: data + ".err", name: "signet serve (\(label))")
        func field(_ name: String) -> String {
            printed.split(separator: "\n").map(fields).first { $0.first == name }.flatMap { $0.count > 1 ? $0[1] : nil } ?? ""
        }
        run.url = field("url:")
        run.pins = [field("pin:"), field("backup-pin:")]
        guard run.url.hasPrefix("https://"), !run.pins[0].isEmpty, !run.pins[1].isEmpty else {
            die("signet serve (\(label)) did not print an https url and two pins: \(printed)")
        }
        run.authority = String(run.url.dropFirst("https://".count))
        mustRun([signet, "server", "app", "add", "bench", "--key", srv + "/app.pub", "--server", run.url, "--pin", run.pins[0], "--pin", run.pins[1],
                 "--admin-key", srv + "/admin.pem", "--server-key", data + "/response-key.pem"], "signet server app add (\(label)) failed", stdout: .file(data + ".app"))
        // POST the JSON file with `signet request send`, signed by the app, over TLS pinned to the server's key.
        for (path, body, answer) in [("/v1/users", "register.json", ".user"), ("/v1/sessions", "signin.json", ".session")] {
            let status = self.run([signet, "request", "send", "-X", "POST", "--url", run.url + path, "--key", srv + "/app.pem", "--body", "\(srv)/\(body)",
                                   "-H", "Content-Type: application/json", "--pin", run.pins[0], "--pin", run.pins[1], "--pinned-self-signed"],
                                  stdout: .file(data + answer))
            if !status.succeeded { failWithStderr("signet request send POST \(path) failed: \(String(readText(data + answer).prefix(300)))") }
        }
        let session = FileManager.default.contents(atPath: data + ".session") ?? Data()
        guard let object = try? JSONSerialization.jsonObject(with: session) as? [String: Any], let token = object["token"] as? String else {
            die("no token in the sign-in's answer: \(String(readText(data + ".session").prefix(300)))")
        }

        // Rounds of the unsigned health route and the signed /v1/me (requests signed just before
        // their run), back to back so a neighbour's load hits both; medians over the rounds. CPU
        // per request is the server process's user + system time over the run (/proc) divided by
        // the requests; on PostgreSQL the database's processes too.
        var figures: [String: [String]] = [:]
        var problems = ""
        let requests = srv + "/requests.txt"
        for round in 1...settings.serverRounds {
            note("13 server (\(label)): round \(round)/\(settings.serverRounds): wrk -t1 -c16 -d\(seconds)s on GET /v1/health (unsigned)")
            var (report, cpu, db) = measuredWrk(run, server: server, connections: 16, path: "/v1/health", requests: nil)
            var problem = serverProblem(report, signed: false)
            if !problem.isEmpty { problems += " health: \(problem);" }
            let (healthRPS, healthCPU) = (format("%.1f", report.requestsPerSecond ?? 0), cpu)
            figures["health_rps", default: []].append(healthRPS)
            figures["health_p99", default: []].append(report.p99Milliseconds)
            figures["health_cpu", default: []].append(cpu)
            figures["health_db", default: []].append(db)
            signRequests(run, "me", count: run.meCount, into: requests, [token])
            note("13 server (\(label)): round \(round)/\(settings.serverRounds): wrk -t1 -c16 -d\(seconds)s on GET /v1/me, signed by the app, with the session's bearer token")
            (report, cpu, db) = measuredWrk(run, server: server, connections: 16, path: "/v1/me", requests: requests)
            problem = serverProblem(report, signed: true)
            if !problem.isEmpty { problems += " /v1/me: \(problem);" }
            let meRPS = format("%.1f", report.requestsPerSecond ?? 0)
            figures["me_rps", default: []].append(meRPS)
            figures["me_p99", default: []].append(report.p99Milliseconds)
            figures["me_cpu", default: []].append(cpu)
            figures["me_db", default: []].append(db)
            figures["ratio", default: []].append(format("%.3f", value(healthRPS) > 0 ? value(meRPS) / value(healthRPS) : 0))
            figures["overhead", default: []].append(format("%.1f", value(cpu) - value(healthCPU) - value(run.verifyMicroseconds)))
        }
        func m(_ key: String) -> String { median(figures[key] ?? []) }
        let healthRPS = m("health_rps")
        let postgres = slug == "postgres"
        row("server GET /v1/health, unsigned, over TLS (\(label)) (baseline)", "\(healthRPS) req/s", "-", "-",
            "p99 \(m("health_p99")) ms, \(m("health_cpu")) µs CPU/req\(postgres ? ", PostgreSQL \(m("health_db")) µs CPU/req" : "")")
        let wantRatio = targets["server.\(slug).me-vs-health"], wantP99 = targets["server.\(slug).me-p99-ms"]
        let wantOverhead = targets["server.\(slug).me-overhead-us"]
        let (r, p99, overhead) = (m("ratio"), m("me_p99"), m("overhead"))
        var target: String
        if !problems.isEmpty {
            target = "NO (\(problems.dropFirst()))"
        } else {
            let (ratioMet, p99Met, overheadMet) = (wantRatio.isMet(by: value(r)), wantP99.isMet(by: value(p99)), wantOverhead.isMet(by: value(overhead)))
            target = "\(yesNo(ratioMet && p99Met && overheadMet)) (\(wantRatio.text)x: \(yesNo(ratioMet)); p99 \(p99) ms \(wantP99.text) ms: \(yesNo(p99Met)); overhead \(overhead) µs \(wantOverhead.text) µs: \(yesNo(overheadMet)))"
        }
        let ratios = (figures["ratio"] ?? []).map { " " + $0 }.joined()
        row("server GET /v1/me, signed + bearer session (\(label)) vs /v1/health", "\(m("me_rps")) req/s", "\(healthRPS) req/s", format("%.2fx", value(r)),
            "\(target); \(m("me_cpu")) µs CPU/req\(postgres ? ", PostgreSQL \(m("me_db")) µs CPU/req" : "") (overhead = /v1/me − health − one Ed25519 check of \(run.verifyMicroseconds) µs); ratios:\(ratios)")

        signRequests(run, "signin", count: run.passwordCount, into: requests, ["bench-user@bench.example", "bench-password-user"])
        note("13 server (\(label)): wrk -t1 -c4 -d\(seconds)s on POST /v1/sessions (right password)")
        var report = serverWrk(run, connections: 4, path: "/v1/sessions", requests: requests)
        var rps = format("%.1f", report.requestsPerSecond ?? 0)
        var problem = serverProblem(report, signed: true)
        let signInRatio = ratio(rps, run.scryptBound)
        target = problem.isEmpty ? "\(meets(signInRatio, targets["server.sign-ins-vs-scrypt-bound"])), p99 \(report.p99Milliseconds) ms" : problem
        row("server sign-ins/s, POST /v1/sessions (\(label)) vs cores / one scrypt", "\(rps) /s", "\(run.scryptBound) /s", signInRatio, target)

        signRequests(run, "register", count: run.passwordCount, into: requests, ["reg-\(slug)"])
        note("13 server (\(label)): wrk -t1 -c4 -d\(seconds)s on POST /v1/users (a new address each)")
        report = serverWrk(run, connections: 4, path: "/v1/users", requests: requests)
        rps = format("%.1f", report.requestsPerSecond ?? 0)
        problem = serverProblem(report, signed: true)
        row("server registrations/s, POST /v1/users (\(label)) vs cores / one scrypt", "\(rps) /s", "\(run.scryptBound) /s", ratio(rps, run.scryptBound),
            problem.isEmpty ? "p99 \(report.p99Milliseconds) ms" : problem)
        try? FileManager.default.removeItem(atPath: requests)
        stopChild(server)
    }

    /// wrk against the running server with the pre-signed `requests` file (else the same unsigned GET every time).
    private func serverWrk(_ run: ServerRun, connections: Int, path: String, requests: String?) -> WrkReport {
        var arguments = ["-t1", "-c\(connections)", "-d\(settings.serverSeconds)s", "--timeout", "10s", "--latency"]
        if let requests {
            arguments += ["-s", run.folder + "/requests.lua", run.url + path, "--", requests]
        } else {
            arguments.append(run.url + path)
        }
        return wrk(arguments, seconds: settings.serverSeconds)
    }

    /// A wrk run with the server's (and the database's) CPU per request ("%.1f" µs) over it.
    private func measuredWrk(_ run: ServerRun, server: pid_t, connections: Int, path: String, requests: String?) -> (WrkReport, String, String) {
        let database = databaseProcesses()
        let (server0, database0) = (cpuMicroseconds([server]), cpuMicroseconds(database))
        let report = serverWrk(run, connections: connections, path: path, requests: requests)
        let count = Double(max(report.total ?? 0, 1))
        let cpu = format("%.1f", Double(cpuMicroseconds([server]) - server0) / count)
        let db = format("%.1f", Double(cpuMicroseconds(database) - database0) / count)
        return (report, cpu, db)
    }

    /// Why the run measures nothing, or "". `signed`: a pre-signed file was used, so more
    /// requests formed than distinct lines (replays) is a problem too.
    private func serverProblem(_ report: WrkReport, signed: Bool) -> String {
        let total = report.total ?? 0, bad = report.bad ?? 0
        if total == 0 { return "NO (no request completed)" }
        if bad > 0 { return "NO (\(bad) of \(total) requests refused: the run measures nothing)" }
        if report.errors > 0 { return "NO (\(report.errors) socket errors or timeouts)" }
        guard signed else { return "" }
        guard let formed = report.formed, let lines = report.lines else { return "NO (the wrk script did not report how many requests it formed)" }
        return formed > lines ? "NO (\(formed) requests formed, only \(lines) distinct: replays)" : ""
    }

    /// COUNT pre-signed requests of `kind`, made now by `signet-bench server-requests`.
    private func signRequests(_ run: ServerRun, _ kind: String, count: Int, into file: String, _ arguments: [String]) {
        note("13 server (\(run.label)): pre-signing \(count) \(kind) requests")
        let result = capture([benchBinary, "server-requests", kind, run.folder + "/app.pem", run.authority, String(count), file] + arguments)
        guard result.status.succeeded else { failWithStderr("signet-bench server-requests \(kind) failed") }
        let words = fields(firstLine(result.output))
        note("13 server (\(run.label)): signed \(words.first ?? "") requests in \(words.last ?? "") s")
    }

    /// Waits (up to 60 s) for a line starting with `prefix` in the file a starting server writes;
    /// stops the bench if the server exits first. Returns the file's text.
    func waitForLine(_ prefix: String, in file: String, of server: pid_t, errors: String, name: String) -> String {
        for _ in 0..<600 {
            let text = readText(file)
            if text.split(separator: "\n").contains(where: { $0.hasPrefix(prefix) }) { return text }
            guard childIsRunning(server) else {
                showIndented(readText(errors))
                die("\(name) exited")
            }
            usleep(100_000)
        }
        let text = readText(file)
        guard text.split(separator: "\n").contains(where: { $0.hasPrefix(prefix) }) else { die("\(name) did not report its address in 60 s") }
        return text
    }

    func writeText(_ path: String, _ text: String) {
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8)) else { die("could not write \(path)") }
    }
}
