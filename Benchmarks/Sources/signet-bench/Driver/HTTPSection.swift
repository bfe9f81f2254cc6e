import Foundation
import Glibc

// 9. HTTP signatures: signet-bench http-server (Hummingbird, 127.0.0.1) under wrk.

extension Bench {
    func httpSection() {
        guard findInPath("wrk") != nil else { return note("warning: wrk not found (Debian package wrk): HTTP rows skipped") }
        let seconds = settings.httpSeconds, connections = settings.httpConnections, rounds = settings.httpRounds
        // Enough distinct pre-signed requests that wrk never repeats one (a repeat is a replay,
        // refused cheaply with 401, which would flatter the figure): 50,000 per second of run for
        // each round, each round using its own slice; a run that sends more than its slice, or
        // has any request refused, fails the bench.
        let slice = seconds * 50_000
        let count = rounds * slice
        let folder = tmp + "/http"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        note("9 http: starting signet-bench http-server (pre-signing \(count) requests per key type)")
        let log = folder + "/server.log"
        let server = spawn([benchBinary, "http-server", folder, String(count)], stdout: .file(log), stderr: .sameAsStdout)
        var started = false
        for _ in 0..<3000 {
            if !readText(folder + "/port").isEmpty { started = true; break }
            guard childIsRunning(server) else {
                FileHandle.standardError.write(Data(readText(log).utf8))
                die("signet-bench http-server exited")
            }
            usleep(100_000)
        }
        guard started else { die("signet-bench http-server did not start in 300 s") }
        let port = readText(folder + "/port").trimmingCharacters(in: .whitespacesAndNewlines)
        guard FileManager.default.createFile(atPath: folder + "/signed.lua", contents: Data(signedLua.utf8)) else { die("could not write the wrk script") }

        // One wrk run: requests/s ("%.0f"), p99 (ms), refusals, requests, and the server's CPU per
        // request (user + system time from /proc over the run, divided by the requests).
        struct Run { var rps: String, p99: String, bad: Int, total: Int, cpu: String }
        func runWrk(_ path: String, _ requests: String, _ round: Int) -> Run {
            let before = cpuMicroseconds([server])
            let report = wrk(["-t1", "-c\(connections)", "-d\(seconds)s", "--latency", "-s", folder + "/signed.lua",
                              "http://127.0.0.1:\(port)\(path)", "--", requests, path, String(round * slice), String(slice)], seconds: seconds)
            let cpu = cpuMicroseconds([server]) - before
            let total = report.total ?? 0
            return Run(rps: format("%.0f", report.requestsPerSecond ?? 0), p99: report.p99Milliseconds, bad: report.bad ?? 0,
                       total: total, cpu: format("%.1f", Double(cpu) / Double(max(total, 1))))
        }
        // What invalidates a run: a refusal, or more requests than its slice of distinct signatures.
        var problem = ""
        func check(_ run: Run, _ name: String) {
            if run.bad > 0 {
                problem += " \(name): \(run.bad) requests refused (the run measures nothing);"
            } else if run.total > slice {
                problem += " \(name): \(run.total) requests sent, only \(slice) distinct (replays);"
            }
        }
        // The signature check alone, in process (for the figure the bench printed before it had
        // the /check routes: the signed route beyond the unsigned one and beyond this).
        var verifyMicroseconds: [String: String] = [:]
        for kind in ["ed25519", "p256"] {
            verifyMicroseconds[kind] = format("%.1f", 1e6 / value(verifyRateOf(kind)))
        }
        // Each round: the unsigned route (the hmac route's own signed requests, byte for byte,
        // no middleware), the hmac signed route, and per key type the signature check alone in a
        // route without the middleware (/check/KIND, a new signature each request) then the
        // signed route. Runs of one round follow each other, so a neighbour's load on this
        // shared machine hits both sides of a comparison; the figures are the medians over the rounds.
        var per: [String: [String]] = [:]
        for round in 0..<rounds {
            note("9 http: round \(round + 1)/\(rounds): wrk -t1 -c\(connections) -d\(seconds)s on /plain, /signed (hmac), /check/ed25519, /signed (ed25519), /check/p256, /signed (p256)")
            let plain = runWrk("/plain", folder + "/hmac.txt", round)
            check(plain, "/plain")
            per["plain_rps", default: []].append(plain.rps)
            per["plain_cpu", default: []].append(plain.cpu)
            per["plain_p99", default: []].append(plain.p99)
            let hmac = runWrk("/signed", folder + "/hmac.txt", round)
            check(hmac, "hmac")
            per["hmac_rps", default: []].append(hmac.rps)
            per["hmac_p99", default: []].append(hmac.p99)
            per["hmac_cpu", default: []].append(hmac.cpu)
            per["hmac_ratio", default: []].append(format("%.3f", value(hmac.rps) / value(plain.rps)))
            for kind in ["ed25519", "p256"] {
                let checkRun = runWrk("/check/\(kind)", "\(folder)/\(kind).txt", round)
                check(checkRun, "/check/\(kind)")
                per["\(kind)_check_rps", default: []].append(checkRun.rps)
                per["\(kind)_check_cpu", default: []].append(checkRun.cpu)
                let signed = runWrk("/signed", "\(folder)/\(kind).txt", round)
                check(signed, kind)
                per["\(kind)_rps", default: []].append(signed.rps)
                per["\(kind)_cpu", default: []].append(signed.cpu)
                per["\(kind)_overhead", default: []].append(format("%.1f", value(signed.cpu) - value(checkRun.cpu)))
                per["\(kind)_formula", default: []].append(
                    format("%.1f", value(signed.cpu) - value(plain.cpu) - value(verifyMicroseconds[kind]!)))
            }
        }
        func m(_ key: String) -> String { median(per[key] ?? []) }
        func list(_ key: String) -> String { (per[key] ?? []).map { " " + $0 }.joined() }
        let plainRPS = m("plain_rps")
        row("HTTP GET, the hmac requests, no middleware (baseline)", "\(plainRPS) req/s", "-", "-",
            "p99 \(m("plain_p99")) ms, \(m("plain_cpu")) µs CPU/req")
        let hmacRatio = m("hmac_ratio")
        let failed = "NO (\(problem))"
        var target = problem.isEmpty
            ? "\(meets(hmacRatio, targets["http.hmac-vs-plain"])), p99 \(m("hmac_p99")) ms, \(m("hmac_cpu")) µs CPU/req; rounds:\(list("hmac_ratio"))"
            : failed
        row("HTTP GET, signed (hmac), verified + replay cache vs no middleware", "\(m("hmac_rps")) req/s", "\(plainRPS) req/s",
            format("%.2fx", value(hmacRatio)), target)
        let overheadTarget = targets["http.public-key-overhead-us"]
        for kind in ["ed25519", "p256"] {
            let checkRPS = m("\(kind)_check_rps")
            row("HTTP GET, the \(kind) check alone, no middleware (baseline)", "\(checkRPS) req/s", "-", "-", "\(m("\(kind)_check_cpu")) µs CPU/req")
            let overhead = m("\(kind)_overhead")
            // Server CPU per request beyond the unsigned route and the signature check itself.
            target = problem.isEmpty
                ? "\(yesNo(overheadTarget.isMet(by: value(overhead)))) (overhead \(overhead) µs \(overheadTarget.text) µs); rounds:\(list("\(kind)_overhead")); \(m("\(kind)_cpu")) µs CPU/req; /plain + in-process check (\(verifyMicroseconds[kind]!) µs) formula: \(m("\(kind)_formula")) µs"
                : failed
            row("HTTP GET, signed (\(kind)), verified + replay cache vs the check alone", "\(m("\(kind)_rps")) req/s", "\(checkRPS) req/s",
                ratio(m("\(kind)_rps"), checkRPS), target)
        }
        stopChild(server)
        notes["http"] = "wrk \(wrkVersion()), 1 thread, \(connections) connections, \(seconds) s per run, medians of \(rounds) rounds, against signet-bench http-server (Hummingbird, 127.0.0.1) on the same 2 cores; every signed request distinct (its own nonce)"
    }
}
