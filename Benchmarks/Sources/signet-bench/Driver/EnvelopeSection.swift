import Foundation
import Glibc

// 15. envelope: what hostile traffic costs `signet serve` (docs/server.md "Limits"): server CPU
// per unauthenticated request for the most expensive kinds that need no key, and GET /v1/health
// latency with no attack, during a flood of the worst of them, with 2,000 silent sockets, with
// 1,000 stalled downloads (and the server's RSS meanwhile) and during a registration flood.
// Scripts/bench-envelope.py sends the traffic (a load generator of its own, like wrk); every
// attack is bounded in count and time, on loopback only. About 70 s (BENCH_ENVELOPE_*).

extension Bench {
    func envelopeSection() {
        let modules = findInPath("python3") == nil ? nil : run(["python3", "-c", "import requests, http_message_signatures, cryptography"], stdout: .null, stderr: .null)
        guard modules?.succeeded == true else {
            return note("warning: the envelope rows need python3 with requests, http-message-signatures and cryptography (Scripts/test installs them): skipped")
        }
        guard FileManager.default.isReadableFile(atPath: "/proc/self/stat") else {
            return note("warning: the envelope rows read the server's CPU time and RSS from /proc: skipped")
        }
        let folder = tmp + "/envelope"
        let mib = settings.envelopeResourceMiB
        try? FileManager.default.createDirectory(atPath: folder + "/site", withIntermediateDirectories: true)
        note("15 envelope: signet serve --plain-http (SQLite, --scrypt-log-n 14, --trusted-proxy 127.0.0.1), an app, a \(mib) MiB resource")
        mustRun([signet, "key", "generate", "-q", "-t", "ed25519", "-o", folder + "/admin.pem"], "signet key generate (admin) failed")
        mustRun([signet, "key", "generate", "-q", "-t", "ed25519", "-o", folder + "/app.pem"], "signet key generate (app) failed")
        mustRun([signet, "key", "public", folder + "/app.pem", "-o", folder + "/app.pub"], "signet key public (app) failed")
        mustRun([signet, "server", "init", "--data", folder + "/data", "--admin-key", folder + "/admin.pem"], "signet server init failed")
        // 127.0.0.1 is a trusted proxy so that the registration flood can name its clients in
        // X-Forwarded-For; every other attack comes from other loopback addresses.
        let server = spawn(
            [signet, "serve", "--data", folder + "/data", "--port", "0", "--plain-http", "--scrypt-log-n", "14", "--trusted-proxy", "127.0.0.1",
             "--log-level", "error"],
            stdout: .file(folder + "/serve.out"), stderr: .file(folder + "/serve.err"))
        let printed = waitForLine("trust-root: ", in: folder + "/serve.out", of: server, errors: folder + "/serve.err", name: "signet serve (envelope)")
        let url = printed.split(separator: "\n").map(fields).first { $0.first == "url:" }.flatMap { $0.count > 1 ? $0[1] : nil } ?? ""
        guard url.hasPrefix("http://127.0.0.1:") else { die("signet serve --plain-http did not print an http://127.0.0.1 url: \(printed)") }
        // `signet server app add` and `server resource publish` speak https only: the admin API
        // directly, with requests signed by the admin key.
        let enrolment: [String: String] = ["name": "bench", "publicKey": readText(folder + "/app.pub")]
        guard let body = try? JSONSerialization.data(withJSONObject: enrolment, options: [.sortedKeys]),
            FileManager.default.createFile(atPath: folder + "/enrol.json", contents: body)
        else { die("could not write the enrolment") }
        let post: (String, String, String, String) -> Void = { [self] path, file, type, answer in
            let status = run([signet, "request", "send", "-X", "POST", "--url", url + path, "--key", folder + "/admin.pem", "--body", file,
                              "-H", "Content-Type: \(type)"], stdout: .file(answer))
            if !status.succeeded {
                failWithStderr("\(path.hasSuffix("apps") ? "enrolling the app" : "publishing the resource") failed: \(String(readText(answer).prefix(300)))")
            }
        }
        post("/v1/admin/apps", folder + "/enrol.json", "application/json", folder + "/enrolled.json")
        writeRandom(folder + "/site/payload.bin", bytes: mib * 1_048_576)
        mustRun(["tar", "-C", folder + "/site", "-cf", folder + "/site.tar", "."], "tar of the resource failed")
        post("/v1/admin/resources/big", folder + "/site.tar", "application/x-tar", folder + "/published.json")
        for name in ["site", "site.tar"] { try? FileManager.default.removeItem(atPath: "\(folder)/\(name)") }

        note("15 envelope: server CPU per unauthenticated request (\(settings.envelopeCPUSeconds) s per kind), then health under each attack (\(settings.envelopeSeconds) s each)")
        let started = monotonicMicroseconds()
        let results = folder + "/results"
        let sender = run(
            ["python3", root + "/Scripts/bench-envelope.py", "run", "--url", url, "--pid", String(server), "--app-key", folder + "/app.pem",
             "--resource", "big", "--seconds", String(settings.envelopeSeconds), "--cpu-seconds", String(settings.envelopeCPUSeconds),
             "--flood-senders", String(settings.envelopeFloodSenders)],
            stdout: .file(results), stderr: .inherit, timeout: 1800)
        guard sender.succeeded else {
            die("Scripts/bench-envelope.py failed (its lines so far: \(readText(results).replacingOccurrences(of: "\t", with: " ").trimmingCharacters(in: .newlines)))")
        }
        let took = monotonicMicroseconds() - started
        guard childIsRunning(server) else {
            showIndented(readText(folder + "/serve.err"))
            die("signet serve (envelope) died during the attacks")
        }
        var worst = "", worstMicroseconds = "0"
        let healthTarget = targets["envelope.health-p99-ms"]
        for line in readText(results).split(separator: "\n") {
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            func at(_ index: Int) -> String { index < f.count ? f[index] : "" }
            switch at(0) {
            case "cpu":  // NAME DESCRIPTION SENT µS ANSWERS CONNECTIONS BYTES
                row("envelope: server CPU per request: \(at(2)) (\(at(7)) B; \(at(3)) sent, answered \(at(5)))", "\(at(4)) µs", "-", "-", "-")
                if at(1) != "health" && value(at(4)) > value(worstMicroseconds) { (worst, worstMicroseconds) = (at(1), at(4)) }
            case "health":  // SCENARIO P50 P99 PROBES FAILED DETAIL
                let what = switch at(1) {
                case "baseline": "no attack (baseline)"
                case "label-flood": "during a flood of the worst request (\(worst), 4 senders)"
                case "silent": "with 2000 silent sockets"
                case "downloads": "during 1000 stalled downloads of a \(mib) MiB resource"
                case "registrations": "during a registration flood (\(settings.envelopeFloodSenders) senders)"
                default: at(1)
                }
                let met = Int(at(5)) == 0 && healthTarget.isMet(by: value(at(3)))
                let target = met ? "yes (p99 \(healthTarget.text) ms)" : "NO (p99 \(healthTarget.text) ms, every probe answered 200: \(at(5)) of \(at(4)) failed)"
                row("envelope: GET /v1/health, fresh connections, \(what)", "p50 \(at(2)) / p99 \(at(3)) ms", "-", "-", "\(target); \(at(4)) probes; \(at(6))")
            case "rss":  // CONNECTIONS, KiB: VmRSS BEFORE, PEAK, VmHWM, AFTER; BEGUN; KERNEL-TCP;
                // "QUEUED COUNT LARGEST-SNDBUF" of the server's sockets; "QUEUED COUNT" of the clients';
                // seconds until the server settled (its CPU low, its sockets' queues full), or -
                let connections = value(at(1))
                let perConnection = format("%.0f", connections != 0 ? (value(at(3)) - value(at(2))) / connections : 0)
                let tcp = Int(at(7)) != nil ? "+\(mebibytes(at(7))) MiB" : "-"
                var sockets = ""
                let server = at(8).split(separator: " ").compactMap { Int($0) }
                if server.count == 3 { sockets = "; the server's \(server[1]) sockets queue \(mebibytes(String(server[0]))) MiB (send buffers up to \(server[2]) KiB)" }
                let clients = at(9).split(separator: " ").compactMap { Int($0) }
                if clients.count == 2 { sockets += ", the stalled clients' \(mebibytes(String(clients[0]))) MiB" }
                let settled = at(10) == "-" ? "not settled in 25 s" : "settled after \(at(10)) s"
                row("envelope: server VmRSS while \(at(1)) downloads of a \(mib) MiB resource stall vs before", "\(mebibytes(at(3))) MiB", "\(mebibytes(at(2))) MiB",
                    ratio(at(3), at(2)),
                    "- (+\(perConnection) KiB per connection (peak); VmHWM \(mebibytes(at(4))) MiB; \(mebibytes(at(5))) MiB 2 s after closing them; \(at(6)) answers begun, \(settled); kernel TCP memory \(tcp)\(sockets))")
            case "flood":  // SENDERS 201 429 503 OTHER DRAINED
                row("envelope: registration flood answers (\(at(1)) senders, signed POST /v1/users, a new X-Forwarded-For each)",
                    "201: \(at(2)), 429: \(at(3)), 503: \(at(4))", "-", "-", "- (other: \(at(5)); the last answers in flight took \(at(6)) s)")
            default: break
            }
        }
        guard !worst.isEmpty else { die("Scripts/bench-envelope.py reported no server CPU figures") }
        let worstTarget = targets["envelope.worst-request-cpu-us"]
        row("envelope: the worst unauthenticated request's server CPU (\(worst))", "\(worstMicroseconds) µs", "-", "-",
            "\(yesNo(worstTarget.isMet(by: value(worstMicroseconds)))) (\(worstTarget.text) µs)")
        // SIGTERM after the attacks: how long the server takes to stop (its --shutdown-timeout is 10 s).
        let stopping = monotonicMicroseconds()
        stopChild(server)
        row("envelope: SIGTERM to exit, after the attacks", "\(secondsText(monotonicMicroseconds() - stopping)) s", "-", "-", "- (--shutdown-timeout 10 s)")
        let errors = readText(folder + "/serve.err").split(separator: "\n", omittingEmptySubsequences: true)
        if errors.isEmpty {
            row("envelope: error-level log lines during the attacks", "0", "-", "-", "yes (none)")
        } else {
            note("warning: signet serve logged \(errors.count) error-level lines during the envelope attacks; the first:")
            showIndented(errors.prefix(5).joined(separator: "\n"))
            row("envelope: error-level log lines during the attacks", "\(errors.count)", "-", "-", "NO (none: \(errors[0].prefix(160)))")
        }
        note("15 envelope: the attacks took \(secondsText(took)) s")
        let s = settings
        notes["envelope"] = "signet serve --plain-http on 127.0.0.1 (SQLite, --scrypt-log-n 14, --trusted-proxy 127.0.0.1, default limits), on the same \(processorCount()) cores as Scripts/bench-envelope.py; server CPU = utime + stime from /proc/PID/stat over \(s.envelopeCPUSeconds) s of one kind of request sent back to back on keep-alive, per request (no key: made-up labels, components and key ids, or bogus signatures under the app's public key id); health = GET /v1/health on a fresh connection from 127.0.0.1 every 20 ms for \(s.envelopeSeconds) s from a process of its own (a probe failing, or taking over 10 s, counts as failed at its time); attacks from 127.0.0.2 (the flood of the worst request), 127.0.1.1-40 (50 silent sockets each), 127.0.2.x (100 stalled downloads each, never read) and 127.0.0.1 naming 10.x.y.z in X-Forwarded-For (registrations, a new address and e-mail each)"
    }
}

/// KiB as MiB with one decimal.
private func mebibytes(_ kib: String) -> String { format("%.1f", value(kib) / 1024) }
