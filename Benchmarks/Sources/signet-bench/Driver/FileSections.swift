import Foundation
import Glibc

// The sections on the test file and on process start-up: hash, sign, rss, help, minisign, bundle.

extension Bench {
    // ---------------------------------------------------------------- 1. hash --
    func hashSection() {
        note("1/6 hash: signet hash, sha256sum, openssl dgst -sha256 (best of \(settings.runs))")
        func digest(_ arguments: [String], last: Bool) -> (us: Int, digest: String) {
            let us = bestOf { timed(arguments) }
            let words = fields(firstLine(readText(stdoutFile)))
            return (us, (last ? words.last : words.first) ?? "")
        }
        let ours = digest([signet, "hash", "-q", data], last: false)
        let sum = digest(["sha256sum", data], last: false)
        let openssl = digest(["openssl", "dgst", "-sha256", data], last: true)
        guard ours.digest == sum.digest && ours.digest == openssl.digest else {
            die("digests differ: signet=\(ours.digest) sha256sum=\(sum.digest) openssl=\(openssl.digest)")
        }
        let (hashSignet, hashSum, hashOpenSSL) = (mibps(ours.us), mibps(sum.us), mibps(openssl.us))
        let r = ratio(hashSignet, hashOpenSSL)
        row("hash sha256 \(sizeLabel) vs openssl dgst -sha256", "\(hashSignet) MiB/s", "\(hashOpenSSL) MiB/s", r, meets(r, targets["hash.vs-openssl-dgst"]))
        row("hash sha256 \(sizeLabel) vs sha256sum", "\(hashSignet) MiB/s", "\(hashSum) MiB/s", ratio(hashSignet, hashSum), "-")
    }

    // ------------------------------------------------- 2. sign/verify a big file --
    func signSection() {
        for type in settings.fileAlgorithms {
            ensureKey(type)
            let algorithm = signatureAlgorithm(type)!
            let digest = digestFlag(type)
            let key = "\(tmp)/\(type)"
            note("2/6 sign/verify \(sizeLabel) with \(type): signet vs openssl dgst (best of \(settings.runs))")
            // Each tool's signature is verified by the other tool: an interop check for free.
            let signSignet = mibps(bestOf { timed([signet, "sign", "-q", "--key", "\(key).pem", "-a", algorithm, "--force", "-o", "\(key).signet.sig", data]) })
            let signOpenSSL = mibps(bestOf { timed(["openssl", "dgst", digest, "-sign", "\(key).pem", "-out", "\(key).openssl.sig", data]) })
            let verifySignet = mibps(bestOf { timed([signet, "verify", "-q", "--key", "\(key).pub", "-a", algorithm, "--signature", "\(key).openssl.sig", data]) })
            let verifyOpenSSL = mibps(bestOf { timed(["openssl", "dgst", digest, "-verify", "\(key).pub", "-signature", "\(key).signet.sig", data]) })
            var r = ratio(signSignet, signOpenSSL)
            row("sign \(type) (\(algorithm)) \(sizeLabel) vs openssl dgst", "\(signSignet) MiB/s", "\(signOpenSSL) MiB/s", r, meets(r, targets["sign.vs-openssl-dgst"]))
            r = ratio(verifySignet, verifyOpenSSL)
            row("verify \(type) (\(algorithm)) \(sizeLabel) vs openssl dgst", "\(verifySignet) MiB/s", "\(verifyOpenSSL) MiB/s", r, meets(r, targets["verify.vs-openssl-dgst"]))
        }
    }

    // ------------------------------------------------------------ 4. peak RSS --
    func rssSection() {
        note("4/6 peak RSS of signet hash on \(sizeLabel) (method: \(rssMethod))")
        let ours = peakRSS([signet, "hash", "-q", data])
        let openssl = peakRSS(["openssl", "dgst", "-sha256", data])
        let oursMiB = format("%.1f", Double(ours) / 1024)
        let opensslMiB = format("%.1f", Double(openssl) / 1024)
        let target = targets["rss.hash-peak-mib"]
        let met = "\(yesNo(target.isMet(by: Double(ours) / 1024))) (\(target.text) MiB)"
        row("peak RSS, hash \(sizeLabel) vs openssl dgst", "\(oursMiB) MiB", "\(opensslMiB) MiB", ratio(oursMiB, opensslMiB), met)
    }

    // ------------------------------------------------------ 5. --help latency --
    func helpSection() {
        note("5/6 signet --help wall time (median of \(settings.helpRuns)) vs openssl version")
        let ours = medianMilliseconds([signet, "--help"])
        let openssl = medianMilliseconds(["openssl", "version"])
        let target = targets["help.median-ms"]
        let met = "\(yesNo(target.isMet(by: value(ours)))) (\(target.text) ms)"
        row("--help wall time, median of \(settings.helpRuns) vs openssl version", "\(ours) ms", "\(openssl) ms", ratio(ours, openssl), met)
    }

    // ------------------------------------------------------------ 7. minisign --
    func minisignSection() {
        guard findInPath("minisign") != nil else {
            return note("warning: minisign not found (Debian package minisign): minisign rows skipped")
        }
        note("7 minisign: signet minisign sign/verify vs minisign -S/-V on \(sizeLabel) (best of \(settings.runs))")
        mustRun([signet, "minisign", "generate", "-q", "-W", "-p", "\(tmp)/minisign.pub", "-s", "\(tmp)/minisign.key"], "signet minisign generate -W failed")
        // Prehashed (BLAKE2b-512) signatures, the default of both tools; each tool verifies the
        // other's signature, so a mismatch stops the run.
        let signSignet = mibps(bestOf { timed([signet, "minisign", "sign", "-q", "-f", "-s", "\(tmp)/minisign.key", "-m", data, "-x", "\(tmp)/by-signet.minisig", "-t", "bench"]) })
        let signPeer = mibps(bestOf { timed(["minisign", "-S", "-s", "\(tmp)/minisign.key", "-m", data, "-x", "\(tmp)/by-minisign.minisig", "-t", "bench"]) })
        let verifySignet = mibps(bestOf { timed([signet, "minisign", "verify", "-q", "-p", "\(tmp)/minisign.pub", "-m", data, "-x", "\(tmp)/by-minisign.minisig"]) })
        let verifyPeer = mibps(bestOf { timed(["minisign", "-V", "-q", "-p", "\(tmp)/minisign.pub", "-m", data, "-x", "\(tmp)/by-signet.minisig"]) })
        row("minisign sign \(sizeLabel) (BLAKE2b-512 + Ed25519) vs minisign -S", "\(signSignet) MiB/s", "\(signPeer) MiB/s", ratio(signSignet, signPeer), "-")
        row("minisign verify \(sizeLabel) vs minisign -V", "\(verifySignet) MiB/s", "\(verifyPeer) MiB/s", ratio(verifySignet, verifyPeer), "-")
        notes["minisign"] = firstLine(capture(["minisign", "-v"], stderr: .null).output)
    }

    // ------------------------------------------------------------- 8. bundles --
    func bundleSection() {
        ensureKey("p256")
        mustRun([signet, "bundle", "trust", "init", "-q", "--key", "\(tmp)/p256.pub", "-o", "\(tmp)/trust.json"], "signet bundle trust init failed")
        note("8 bundle: making \(settings.bundleFiles) files of 1 KiB")
        let many = tmp + "/many", one = tmp + "/one"
        for folder in [many, one] { try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        writeRandom(tmp + "/small.bin", bytes: settings.bundleFiles * 1024)
        guard let bytes = FileManager.default.contents(atPath: tmp + "/small.bin") else { die("could not make the small files") }
        for index in 0..<settings.bundleFiles {
            let piece = bytes[(index * 1024)..<((index + 1) * 1024)]
            guard FileManager.default.createFile(atPath: many + format("/f%06d", index), contents: Data(piece)) else {
                die("could not make the small files")
            }
        }
        try? FileManager.default.removeItem(atPath: tmp + "/small.bin")
        if link(data, one + "/data.bin") != 0 {
            do { try FileManager.default.copyItem(atPath: data, toPath: one + "/data.bin") } catch { die("could not copy \(data): \(error)") }
        }
        // Signet: one command each way. Baseline: the same guarantees by hand with standard tools:
        // sha256sum over the files, the list signed by openssl dgst, packed by tar (create);
        // sha256sum -c over the files plus one openssl dgst -verify of the list (verify).
        let baselineCreate = """
            cd "$1" && find . -type f ! -name SUMS -print0 | sort -z | xargs -0 sha256sum >"$2.SUMS" \
            && openssl dgst -sha256 -sign "$3" -out "$2.SUMS.sig" "$2.SUMS" && tar -C "$1" -cf "$2.tar" .
            """
        let baselineVerify = """
            cd "$1" && sha256sum -c --quiet "$2.SUMS" && openssl dgst -sha256 -verify "$3" -signature "$2.SUMS.sig" "$2.SUMS"
            """
        for set in ["many", "one"] {
            let label = set == "many" ? "\(settings.bundleFiles) files of 1 KiB" : "one \(sizeLabel) file"
            let folder = "\(tmp)/\(set)", bundle = "\(tmp)/\(set).bundle"
            note("8 bundle: create and verify a bundle of \(label) vs sha256sum + openssl dgst (best of \(settings.runs))")
            let createSignet = bestOf {
                timed([signet, "bundle", "create", "-q", "--force", "--key", "\(tmp)/p256.pem", "--name", "bench", "--version", "1", "-o", bundle, folder])
            }
            let createBaseline = bestOf { timed(["sh", "-c", baselineCreate, "sh", folder, "\(tmp)/\(set)", "\(tmp)/p256.pem"]) }
            // Each verify starts from an empty state folder (a second verify of the same version is
            // a rollback); emptying it is not timed.
            let verifySignet = bestOf {
                try? FileManager.default.removeItem(atPath: tmp + "/bstate")
                return timed([signet, "bundle", "verify", "-q", "--trust", "\(tmp)/trust.json", "--state", "\(tmp)/bstate", bundle])
            }
            let verifyBaseline = bestOf { timed(["sh", "-c", baselineVerify, "sh", folder, "\(tmp)/\(set)", "\(tmp)/p256.pub"]) }
            var r = ratio(secondsText(createSignet), secondsText(createBaseline))
            row("bundle create, \(label) vs sha256sum + openssl dgst -sign + tar", "\(secondsText(createSignet)) s", "\(secondsText(createBaseline)) s", r, "-")
            r = ratio(secondsText(verifySignet), secondsText(verifyBaseline))
            row("bundle verify, \(label) vs sha256sum -c + openssl dgst -verify", "\(secondsText(verifySignet)) s", "\(secondsText(verifyBaseline)) s", r, meets(r, targets["bundle.verify-vs-baseline"]))
        }
        for path in [many, one, "\(tmp)/many.bundle", "\(tmp)/one.bundle", "\(tmp)/many.tar", "\(tmp)/one.tar"] {
            try? FileManager.default.removeItem(atPath: path)
        }
    }
}
