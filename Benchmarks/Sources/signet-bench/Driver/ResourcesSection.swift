import Foundation

// 14. resources: a published resource, downloaded, verified and extracted with `signet client
// fetch` against the tutorial's way (curl, sha256sum -c, openssl dgst -verify) on the same bytes
// from the same server over the same pinned TLS; then 304 answers under wrk.

extension Bench {
    func resourcesSection() {
        guard findInPath("wrk") != nil, findInPath("curl") != nil else {
            return note("warning: the resources rows need signet-bench, wrk and curl: skipped")
        }
        let res = tmp + "/resources"
        let mib = settings.resourceMiB
        try? FileManager.default.createDirectory(atPath: res + "/site", withIntermediateDirectories: true)
        note("14 resources: a \(mib) MiB file from /dev/urandom, tarred and published")
        writeRandom(res + "/site/payload.bin", bytes: mib * 1_048_576)
        mustRun(["tar", "-C", res + "/site", "-cf", res + "/site.tar", "."], "tar of the resource failed")
        mustRun([signet, "key", "generate", "-q", "-t", "ed25519", "-o", res + "/admin.pem"], "signet key generate (admin) failed")
        mustRun([signet, "key", "generate", "-q", "-t", "ed25519", "-o", res + "/app.pem"], "signet key generate (app) failed")
        mustRun([signet, "key", "public", res + "/app.pem", "-o", res + "/app.pub"], "signet key public (app) failed")
        mustRun([signet, "server", "init", "--data", res + "/data", "--admin-key", res + "/admin.pem"], "signet server init failed")
        let server = spawn([signet, "serve", "--data", res + "/data", "--port", "0", "--log-level", "error"],
                           stdout: .file(res + "/serve.out"), stderr: .file(res + "/serve.err"))
        let printed = waitForLine("trust-root: ", in: res + "/serve.out", of: server, errors: res + "/serve.err", name: "signet serve")
        func field(_ name: String) -> String {
            printed.split(separator: "\n").map(fields).first { $0.first == name }.flatMap { $0.count > 1 ? $0[1] : nil } ?? ""
        }
        let url = field("url:"), pin = field("pin:"), backup = field("backup-pin:")
        let trust = ["--server", url, "--pin", pin, "--pin", backup]
        let admin = trust + ["--admin-key", res + "/admin.pem", "--server-key", res + "/data/response-key.pem"]
        mustRun([signet, "server", "app", "add", "bench", "--key", res + "/app.pub"] + admin, "signet server app add failed")
        let publish = timed([signet, "server", "resource", "publish", "big", res + "/site.tar"] + admin)
        let digest = readText(stdoutFile).split(separator: "\n").map { line -> String in
            let words = fields(line)
            guard words.count >= 4 else { return "" }
            return words[3].hasPrefix("sha256:") ? String(words[3].dropFirst(7)) : words[3]
        }.joined(separator: "\n")
        guard digest.count == 64, digest.allSatisfy({ $0.isASCIIDigit || ("a"..."f").contains($0) }) else {
            die("the publish printed no digest: \(readText(stdoutFile).trimmingCharacters(in: .newlines))")
        }
        row("resource publish, \(mib) MiB tar: upload, bundle, sign, verify, store (SQLite)", "\(secondsText(publish)) s", "-", "-", "-")

        // The baseline: the same bytes from the same server with curl (pinned to the same key, the
        // request signed beforehand: the server takes signed requests only), then the tutorial's
        // checks: sha256sum -c of a published checksum, openssl dgst -verify of a published
        // signature. Each run gets its own pre-signed request (a nonce is used once).
        let curlPin = "sha256//" + (pin.hasPrefix("sha256/") ? String(pin.dropFirst(7)) : pin)
        mustRun([signet, "key", "generate", "-q", "-t", "p256", "-o", res + "/publisher.pem"], "signet key generate (p256) failed")
        mustRun(["openssl", "pkey", "-in", res + "/publisher.pem", "-pubout", "-out", res + "/publisher.pub"], "openssl pkey failed")
        let resourceURL = url + "/v1/resources/big"
        for index in 1...(settings.runs + 1) {
            let signed = capture([signet, "request", "sign", "--url", resourceURL, "--key", res + "/app.pem"])
            guard signed.status.succeeded else { failWithStderr("signet request sign failed") }
            var output = signed.output.split(separator: "\n", omittingEmptySubsequences: false)
            if output.last == "" { output.removeLast() }
            let lines = output.map { "header = \"" + $0.replacingOccurrences(of: "\"", with: "\\\"") + "\"\n" }
            writeText("\(res)/headers.\(index)", lines.joined())
        }
        func curl(_ index: Int) -> [String] {
            ["curl", "-sS", "--fail", "--cacert", res + "/data/tls-certificate.pem", "--pinnedpubkey", curlPin, "-K", "\(res)/headers.\(index)",
             "-o", res + "/curl.bundle", resourceURL]
        }
        // The published checksum and signature, made from the served bytes before timing.
        mustRun(curl(settings.runs + 1), "curl of the resource failed")
        writeText(res + "/curl.sha256", "\(digest)  \(res)/curl.bundle\n")
        mustRun(["openssl", "dgst", "-sha256", "-sign", res + "/publisher.pem", "-out", res + "/curl.sig", res + "/curl.bundle"], "openssl dgst -sign failed")
        note("14 resources: signet client fetch (download + verify + extract) vs curl + sha256sum -c + openssl dgst -verify, best of \(settings.runs)")
        // Ours: a fresh destination and state every run (a first fetch: nothing to skip); emptying
        // them, and removing curl's last download, is not timed.
        let ours = bestOf {
            for folder in ["dest", "state"] { try? FileManager.default.removeItem(atPath: "\(res)/\(folder)") }
            return timed([signet, "client", "fetch", "big", res + "/dest", "--trust", res + "/data/trust.json", "--state", res + "/state"] + trust
                         + ["--app-key", res + "/app.pem", "--server-key", res + "/data/response-key.pem"])
        }
        var signedIndex = 0
        let baseline = bestOf {
            signedIndex += 1
            try? FileManager.default.removeItem(atPath: res + "/curl.bundle")
            return timedAll([
                curl(signedIndex), ["sha256sum", "-c", "--quiet", res + "/curl.sha256"],
                ["openssl", "dgst", "-sha256", "-verify", res + "/publisher.pub", "-signature", res + "/curl.sig", res + "/curl.bundle"],
            ])
        }
        let r = ratio(secondsText(ours), secondsText(baseline))
        row("resource fetch \(mib) MiB: download + verify + extract vs curl + sha256sum -c + openssl dgst -verify",
            "\(secondsText(ours)) s", "\(secondsText(baseline)) s", r, meets(r, targets["resources.fetch-vs-curl"]))

        // 304s: what a fleet of apps checking for updates costs the server.
        let count = settings.serverSeconds * 20_000
        note("14 resources: pre-signing \(count) GET /v1/resources/big with If-None-Match")
        let authority = url.hasPrefix("https://") ? String(url.dropFirst(8)) : url
        mustRun([benchBinary, "server-requests", "resource", res + "/app.pem", authority, String(count), res + "/requests.txt", "big", "\"\(digest)\""],
                "signet-bench server-requests resource failed")
        writeText(res + "/requests.lua", requestsLua)
        let report = wrk(["-t1", "-c16", "-d\(settings.serverSeconds)s", "--timeout", "10s", "--latency", "-s", res + "/requests.lua", resourceURL,
                          "--", res + "/requests.txt"], seconds: settings.serverSeconds)
        let refused = report.bad ?? 0
        let target = refused != 0 ? "NO (\(refused) refused: the run measures nothing)" : "- (p99 \(report.p99Text))"
        row("resource update checks, GET with If-None-Match answered 304, signed (wrk -c16)", "\(format("%.1f", report.requestsPerSecond ?? 0)) req/s", "-", "-", target)
        stopChild(server)
        notes["resources"] = "signet serve over TLS on 127.0.0.1 (SQLite); \(mib) MiB of random bytes in one file, tarred, published once; fetch = signet client fetch into a fresh folder and state, checking the response signature; baseline = curl --pinnedpubkey of the same URL (request signed beforehand), sha256sum -c and openssl dgst -sha256 -verify (P-256) of the downloaded file; page cache warm, best of \(settings.runs); 304 rows: wrk 1 thread, 16 connections, \(settings.serverSeconds) s, each request signed once beforehand"
    }
}
