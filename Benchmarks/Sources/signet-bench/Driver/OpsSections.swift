import Foundation

// The sections that set signet-bench's in-process loops beside their peers: ops, vault, tls, pkcs11.

extension Bench {
    // ------------------------------------------------------------ 3. operations/s --
    func opsSection() {
        for type in settings.opsAlgorithms {
            ensureKey(type)
            let algorithm = signatureAlgorithm(type)!
            let name = speedName(type)
            let seconds = settings.opsSeconds
            note("3/6 ops/s \(type): signet CLI loop (\(seconds) s each) and openssl speed -seconds \(seconds) \(name)")
            mustRun([signet, "sign", "-q", "--key", "\(tmp)/\(type).pem", "-a", algorithm, "-o", "\(tmp)/\(type).tiny.sig", "--force", "\(tmp)/tiny.bin"], "signet sign (\(type)) failed")
            let signCLI = opsRate([signet, "sign", "-q", "--key", "\(tmp)/\(type).pem", "-a", algorithm, "\(tmp)/tiny.bin"])
            let verifyCLI = opsRate([signet, "verify", "-q", "--key", "\(tmp)/\(type).pub", "-a", algorithm, "--signature", "\(tmp)/\(type).tiny.sig", "\(tmp)/tiny.bin"])
            var signOpenSSL = "n/a", verifyOpenSSL = "n/a"
            let speedOut = tmp + "/speed.out", speedErr = tmp + "/speed.err"
            if run(["openssl", "speed", "-elapsed", "-seconds", String(seconds), name], stdout: .file(speedOut), stderr: .file(speedErr)).succeeded {
                let found = parseSpeed(readText(speedOut)).last { $0.name == name }
                if let found, isRate(found.sign), isRate(found.verify) {
                    (signOpenSSL, verifyOpenSSL) = (found.sign, found.verify)
                } else {
                    note("warning: could not parse 'openssl speed \(name)' output:")
                    showIndented(readText(speedOut))
                }
            } else {
                note("warning: 'openssl speed \(name)' failed:")
                showIndented(readText(speedErr))
            }
            let peerSign = signOpenSSL == "n/a" ? "n/a" : "\(signOpenSSL) /s"
            let peerVerify = verifyOpenSSL == "n/a" ? "n/a" : "\(verifyOpenSSL) /s"
            let (signs, verifies) = inProcessRates(type)
            verifyRate[type] = verifies  // reused by the HTTP and server sections' overhead figures
            row("sign/s \(type) (\(algorithm)): SignetCore vs openssl speed", "\(signs) /s", peerSign, ratio(signs, signOpenSSL), "-")
            row("verify/s \(type) (\(algorithm)): SignetCore vs openssl speed", "\(verifies) /s", peerVerify, ratio(verifies, verifyOpenSSL), "-")
            row("sign/s \(type) (\(algorithm)): whole CLI process, one per op", "\(signCLI) /s", "-", "-", "-")
            row("verify/s \(type) (\(algorithm)): whole CLI process, one per op", "\(verifyCLI) /s", "-", "-", "-")
        }
    }

    /// `signet-bench SECONDS TYPE` (a process of its own, as before): sign/s and verify/s.
    func inProcessRates(_ type: String) -> (sign: String, verify: String) {
        let result = capture([benchBinary, String(settings.opsSeconds), type])
        let words = fields(firstLine(result.output))
        guard result.status.succeeded, words.count >= 4 else { failWithStderr("signet-bench \(type) failed") }
        return (words[2], words[3])
    }

    /// In-process verifications per second of `type`, from the ops section or measured now.
    func verifyRateOf(_ type: String) -> String {
        if let rate = verifyRate[type] { return rate }
        let rate = inProcessRates(type).verify
        verifyRate[type] = rate
        return rate
    }

    // ------------------------------------------------------------------- 6. vault --
    func vaultSection() {
        let folder = tmp + "/vault"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let fileSystem = fileSystemType(folder)
        let count = settings.vaultCount
        note("6/6 vault: \(count) durable sets and gets vs plain SQLite in \(tmp) (\(fileSystem)); open; password hashing")
        let result = capture([benchBinary, "vault", folder, String(count)])
        let figures = fields(firstLine(result.output))
        guard result.status.succeeded, figures.count >= 8 else { failWithStderr("signet-bench vault failed") }
        let (sets, gets, inserts, selects, open, scrypt, pbkdf2) = (figures[1], figures[2], figures[3], figures[4], figures[5], figures[6], figures[7])
        // The same key derivations in Python's hashlib (OpenSSL underneath), best of 3.
        var pythonScrypt = "n/a", pythonPBKDF2 = "n/a"
        if findInPath("python3") != nil {
            let python = capture(["python3", "-c", pythonKeyDerivations], stderr: .inherit)
            let words = fields(firstLine(python.output))
            if python.status.succeeded, words.count == 2 { (pythonScrypt, pythonPBKDF2) = (words[0], words[1]) }
        }
        row("vault durable sets/s (\(fileSystem)) vs plain SQLite inserts", "\(sets) /s", "\(inserts) /s", ratio(sets, inserts), "-")
        row("vault gets/s vs plain SQLite selects", "\(gets) /s", "\(selects) /s", ratio(gets, selects), "-")
        row("vault open = scrypt N=2^17 unlock vs python hashlib.scrypt", "\(open) ms", "\(pythonScrypt) ms", ratio(open, pythonScrypt), "-")
        row("password hash, scrypt N=2^17 r=8 p=1 vs python hashlib.scrypt", "\(scrypt) ms", "\(pythonScrypt) ms", ratio(scrypt, pythonScrypt), "-")
        row("password hash, PBKDF2-SHA256 600k vs python pbkdf2_hmac", "\(pbkdf2) ms", "\(pythonPBKDF2) ms", ratio(pbkdf2, pythonPBKDF2), "-")
    }

    // ---------------------------------------------------------------------- 10. TLS --
    func tlsSection() {
        let seconds = settings.tlsSeconds
        note("10 tls: handshakes/s on loopback, alternating rounds for \(seconds) s each: no pins, pins, BoringSSL's own verification")
        let handshakes = capture([benchBinary, "tls", seconds])
        let rates = fields(firstLine(handshakes.output))
        guard handshakes.status.succeeded, rates.count >= 3 else { failWithStderr("signet-bench tls failed") }
        let (plain, pinned, boring) = (rates[0], rates[1], rates[2])
        let r = ratio(pinned, plain)
        row("TLS handshakes on loopback, chain + hostname + pins vs the same client without pins", "\(pinned) /s", "\(plain) /s", r, meets(r, targets["tls.pins-vs-no-pins"]))
        row("TLS handshakes, Signet's verification (chain, hostname) vs BoringSSL's own", "\(plain) /s", "\(boring) /s", ratio(plain, boring), "-")
        let chain = tmp + "/chain"
        try? FileManager.default.createDirectory(atPath: chain, withIntermediateDirectories: true)
        let count = settings.chainCount
        note("10 tls: \(count) chain validations in-process vs openssl verify of \(count) certificates in one process")
        let validations = capture([benchBinary, "chain-verify", chain, String(count)])
        guard validations.status.succeeded else { failWithStderr("signet-bench chain-verify failed") }
        let chainRate = firstLine(validations.output)
        let leaves = [String](repeating: chain + "/leaf.pem", count: count)
        let best = bestOf {
            timed(["openssl", "verify", "-CAfile", chain + "/root.pem", "-untrusted", chain + "/intermediate.pem"] + leaves, stdout: .null)
        }
        let opensslRate = format("%.0f", Double(count) / (Double(best) / 1e6))
        row("chain validation (root, intermediate, leaf; P-256) vs openssl verify", "\(chainRate) /s", "\(opensslRate) /s", ratio(chainRate, opensslRate), "-")
        notes["tls"] = "signet-bench tls: an in-process SwiftNIO SSL server and client on 127.0.0.1 sharing the 2 cores; a full handshake per connection (no resumption), P-256 chain of three; pins checked on the validated chain; chain validation = ChainVerifier (RFC 5280 + hostname) in-process vs one openssl verify process checking \(count) copies of the leaf"
    }

    // ------------------------------------------------------------------- 12. pkcs11 --
    func pkcs11Section() {
        let module = "/usr/lib/softhsm/libsofthsm2.so"
        guard findInPath("softhsm2-util") != nil, FileManager.default.fileExists(atPath: module) else {
            return note("warning: PKCS#11 rows need signet-bench and SoftHSM2 (Debian package softhsm2): skipped")
        }
        let seconds = settings.pkcs11Seconds
        note("12 pkcs11: token signatures/s on a SoftHSM2 token, PKCS11Signer vs a raw C_Sign loop, \(seconds) s each")
        let folder = tmp + "/softhsm"
        try? FileManager.default.createDirectory(atPath: folder + "/tokens", withIntermediateDirectories: true)
        let configuration = "directories.tokendir = \(folder)/tokens\nobjectstore.backend = file\nlog.level = ERROR\n"
        guard FileManager.default.createFile(atPath: folder + "/softhsm2.conf", contents: Data(configuration.utf8)),
            FileManager.default.createFile(atPath: folder + "/pin", contents: Data("1234\n".utf8))
        else { die("could not write the SoftHSM2 configuration") }
        let environment = ["SOFTHSM2_CONF": folder + "/softhsm2.conf"]
        let initialize = ["softhsm2-util", "--init-token", "--free", "--label", "bench", "--pin", "1234", "--so-pin", "5678"]
        guard run(initialize, stdout: .null, stderr: .inherit, environment: environment).succeeded else { die("softhsm2-util --init-token failed") }
        for kind in ["p256", "rsa2048"] {
            mustRun([signet, "token", "generate", "pkcs11:token=bench;object=\(kind)", "-t", kind, "--module", module, "--pin-file", folder + "/pin"],
                    "signet token generate \(kind) failed", environment: environment)
            let result = capture([benchBinary, "pkcs11", module, "pkcs11:token=bench;object=\(kind)", folder + "/pin", seconds], environment: environment)
            let words = fields(firstLine(result.output))
            guard result.status.succeeded, words.count >= 4 else { failWithStderr("signet-bench pkcs11 failed") }
            let r = ratio(words[1], words[3])
            row("PKCS#11 \(kind) signatures on SoftHSM2, PKCS11Signer vs raw C_Sign loop", "\(words[1]) /s", "\(words[3]) /s", r, meets(r, targets["pkcs11.signer-vs-raw"]))
        }
        let version = firstLine(capture(["softhsm2-util", "--version"], stderr: .null).output)
        notes["pkcs11"] = "SoftHSM2 \(version), file object store in the bench's temporary folder; signet-bench signs a SHA-256 digest through PKCS11Signer (as every command does) and, as the baseline, calls C_SignInit and C_Sign on one logged-in session with the same key and input; \(seconds) s each"
    }
}

/// `openssl speed` (OpenSSL 1.1.1/3.x human format): a header line names the columns ("sign
/// verify sign/s verify/s"; 3.2+ adds encrypt/decrypt columns), and a data line is a label
/// followed by one value per header column, so values are taken counting from the end.
func parseSpeed(_ text: String) -> [(name: String, sign: String, verify: String)] {
    var headerCount = 0, signIndex = 0, verifyIndex = 0
    var found: [(String, String, String)] = []
    for line in text.split(separator: "\n") {
        let words = fields(line)
        if line.contains("sign/s") && line.contains("verify/s") {
            headerCount = words.count
            signIndex = (words.lastIndex(of: "sign/s") ?? -1) + 1
            verifyIndex = (words.lastIndex(of: "verify/s") ?? -1) + 1
            continue
        }
        guard headerCount > 0, signIndex > 0, verifyIndex > 0 else { continue }
        var name = ""
        if words.count >= 3, words[0] == "rsa", words[2] == "bits" { name = "rsa" + words[1] }
        if let range = line.range(of: #"ecdsa \(nistp[0-9]+\)"#, options: .regularExpression) {
            name = "ecdsap" + line[range].dropFirst("ecdsa (nistp".count).dropLast()
        }
        if line.contains("EdDSA (Ed25519)") { name = "ed25519" }
        if line.contains("EdDSA (Ed448)") { name = "ed448" }
        if !name.isEmpty, words.count > headerCount {
            found.append((name, words[words.count - 1 - (headerCount - signIndex)], words[words.count - 1 - (headerCount - verifyIndex)]))
        }
    }
    return found
}

/// `^[0-9]+(\.[0-9]+)?$`
func isRate(_ text: String) -> Bool {
    text.range(of: #"^[0-9]+(\.[0-9]+)?$"#, options: .regularExpression) != nil
}

/// `text` on standard error, each line indented with "    | ".
func showIndented(_ text: String) {
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    let shown = (lines.last == "" ? lines.dropLast() : lines[...]).map { "    | \($0)\n" }.joined()
    FileHandle.standardError.write(Data(shown.utf8))
}

/// The type of the file system holding `path` (`df -PT`), or "unknown".
extension Bench {
    func fileSystemType(_ path: String) -> String {
        let result = capture(["df", "-PT", path], stderr: .null)
        let lines = result.output.split(separator: "\n")
        guard lines.count >= 2 else { return "unknown" }
        let words = fields(lines[1])
        return words.count >= 2 ? words[1] : "unknown"
    }
}

/// Python's hashlib (OpenSSL underneath): the vault's key derivations, best of 3, in ms.
let pythonKeyDerivations = """
    import hashlib, os, time
    def best(f):
        times = []
        for _ in range(3):
            t = time.perf_counter(); f(); times.append(time.perf_counter() - t)
        return min(times) * 1000
    salt = os.urandom(16)
    s = best(lambda: hashlib.scrypt(b"benchmark passphrase", salt=salt, n=1 << 17, r=8, p=1, maxmem=256 << 20, dklen=32))
    p = best(lambda: hashlib.pbkdf2_hmac("sha256", b"benchmark passphrase", salt, 600000, 32))
    print(f"{s:.1f} {p:.1f}")
    """
