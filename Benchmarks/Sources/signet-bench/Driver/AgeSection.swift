import Foundation
import Glibc

// 11. age: signet encrypt/decrypt against age on the test file, to /dev/null and to files, their
// peak RSS, and `-p` (passphrase) encryption under a pty, since age reads passphrases only from
// a terminal.

extension Bench {
    func ageSection() {
        guard findInPath("age") != nil, findInPath("age-keygen") != nil else {
            return note("warning: age not found (Debian package age): age rows skipped")
        }
        note("11 age: encrypt and decrypt \(sizeLabel) to one X25519 recipient vs age (best of \(settings.runs))")
        let key = tmp + "/age-key.txt"
        mustRun([signet, "age", "keygen", "-q", "-o", key], "signet age keygen failed")
        let recipientResult = capture([signet, "age", "recipient", key], stderr: .inherit)
        guard recipientResult.status.succeeded else { die("signet age recipient failed") }
        let recipient = recipientResult.output.trimmingCharacters(in: .newlines)
        let bySignet = tmp + "/by-signet.age", byAge = tmp + "/by-age.age"
        // Timed runs write to /dev/null, so the file system (a 1 GiB write dominates both tools on
        // this VM) is not what is measured; untimed runs to files check each tool decrypts the other's output.
        mustRun([signet, "encrypt", "-q", "--force", "-r", recipient, "-o", bySignet, data], "signet encrypt failed")
        guard run(["age", "-r", recipient, "-o", byAge, data], stderr: .inherit).succeeded else { die("age -r failed") }
        mustRun([signet, "decrypt", "-q", "--force", "-i", key, "-o", tmp + "/age-out", byAge], "signet decrypt failed")
        guard run(["age", "-d", "-i", key, "-o", tmp + "/age-out2", bySignet], stderr: .inherit).succeeded else { die("age -d failed") }
        guard sameContents(data, tmp + "/age-out"), sameContents(data, tmp + "/age-out2") else { die("age round trip mismatch") }
        removeFiles(["age-out", "age-out2"])
        let encryptSignet = mibps(bestOf { timed([signet, "encrypt", "-q", "-r", recipient, data], stdout: .null) })
        let encryptAge = mibps(bestOf { timed(["age", "-r", recipient, data], stdout: .null) })
        let decryptSignet = mibps(bestOf { timed([signet, "decrypt", "-q", "-i", key, byAge], stdout: .null) })
        let decryptAge = mibps(bestOf { timed(["age", "-d", "-i", key, bySignet], stdout: .null) })
        var r = ratio(encryptSignet, encryptAge)
        row("age encrypt \(sizeLabel), one X25519 recipient vs age -r", "\(encryptSignet) MiB/s", "\(encryptAge) MiB/s", r, meets(r, targets["age.encrypt-vs-age"]))
        r = ratio(decryptSignet, decryptAge)
        row("age decrypt \(sizeLabel) vs age -d", "\(decryptSignet) MiB/s", "\(decryptAge) MiB/s", r, meets(r, targets["age.decrypt-vs-age"]))
        // To files with -o, as users write them: Signet's output is durable when it exits (fsync
        // before the rename, writeback started as it writes); age does no fsync. age's output is
        // removed before each of its runs (untimed): age will not overwrite a file.
        let fileEncryptSignet = mibps(bestOf { timed([signet, "encrypt", "-q", "--force", "-r", recipient, "-o", tmp + "/file-signet.age", data]) })
        let fileEncryptAge = mibps(bestOf {
            removeFiles(["file-age.age"])
            return timed(["age", "-r", recipient, "-o", tmp + "/file-age.age", data])
        })
        let fileDecryptSignet = mibps(bestOf { timed([signet, "decrypt", "-q", "--force", "-i", key, "-o", tmp + "/file-out", byAge]) })
        let fileDecryptAge = mibps(bestOf {
            removeFiles(["file-out2"])
            return timed(["age", "-d", "-i", key, "-o", tmp + "/file-out2", bySignet])
        })
        r = ratio(fileEncryptSignet, fileEncryptAge)
        row("age encrypt \(sizeLabel) to a file (-o, durable) vs age -r -o (no fsync)", "\(fileEncryptSignet) MiB/s", "\(fileEncryptAge) MiB/s", r,
            meets(r, targets["age.encrypt-file-vs-age"]))
        r = ratio(fileDecryptSignet, fileDecryptAge)
        row("age decrypt \(sizeLabel) to a file (-o, durable) vs age -d -o (no fsync)", "\(fileDecryptSignet) MiB/s", "\(fileDecryptAge) MiB/s", r,
            meets(r, targets["age.decrypt-file-vs-age"]))
        // What durable costs on this disk: its own write of the same bytes with the fsync (dd
        // conv=fsync), the floor under any durable -o; Signet's encrypt -o against it.
        let disk = mibps(bestOf {
            removeFiles(["dd-out"])
            return timed(["dd", "if=\(data)", "of=\(tmp)/dd-out", "bs=8M", "conv=fsync", "status=none"])
        })
        removeFiles(["dd-out"])
        row("age encrypt \(sizeLabel) to a file (-o, durable) vs the disk's own durable write (dd conv=fsync)", "\(fileEncryptSignet) MiB/s", "\(disk) MiB/s",
            ratio(fileEncryptSignet, disk), "-")
        removeFiles(["file-signet.age", "file-age.age", "file-out", "file-out2"])
        let encryptRSS = peakRSS([signet, "encrypt", "-q", "-r", recipient, data])
        let decryptRSS = peakRSS([signet, "decrypt", "-q", "-i", key, byAge])
        let ageRSS = peakRSS(["age", "-r", recipient, data])
        let largest = max(encryptRSS, decryptRSS)
        let rssTarget = targets["age.peak-rss-mib"]
        row("age encrypt/decrypt \(sizeLabel), peak RSS (larger of the two) vs age -r", "\(largest / 1024) MiB", "\(ageRSS / 1024) MiB",
            ratio(String(largest), String(ageRSS)), "\(yesNo(rssTarget.isMet(by: Double(largest) / 1024))) (\(rssTarget.text) MiB)")
        removeFiles(["by-signet.age", "by-age.age"])

        // Passphrases: age -p reads its passphrase only from a terminal, so both tools run under
        // the same pty driver, which types the passphrase at each prompt and reports the child's
        // wall time. Same work factor: 2^18, age's default and signet's -p.
        writeText(tmp + "/age-pass", "correct horse battery staple\n")
        guard let small = FileHandle(forReadingAtPath: data).flatMap({ try? $0.read(upToCount: 1024) }) else { die("could not read \(data)") }
        guard FileManager.default.createFile(atPath: tmp + "/age-small", contents: small) else { die("could not write \(tmp)/age-small") }
        func passphraseBest(_ arguments: [String]) -> Int {
            bestOf {
                removeFiles(["pass.age"])
                guard let us = underTerminal(arguments, typing: "correct horse battery staple") else {
                    die("passphrase run failed: \(arguments.joined(separator: " "))")
                }
                return us
            }
        }
        let passSignet = passphraseBest([signet, "encrypt", "-q", "-p", "--passphrase-file", tmp + "/age-pass", "-o", tmp + "/pass.age", tmp + "/age-small"])
        let passAge = passphraseBest(["age", "-p", "-o", tmp + "/pass.age", tmp + "/age-small"])
        let decrypted = tmp + "/pass.out"
        let status = run([signet, "decrypt", "-q", "--passphrase-file", tmp + "/age-pass", tmp + "/pass.age"], stdout: .file(decrypted), stderr: .inherit)
        guard status.succeeded, sameContents(decrypted, tmp + "/age-small") else { die("signet could not decrypt age -p's file") }
        row("age -p encrypt 1 KiB, scrypt 2^18, wall time (ratio: age time / signet time)", "\(passSignet / 1000) ms", "\(passAge / 1000) ms",
            ratio(String(passAge), String(passSignet)), "-")
        notes["age"] = firstLine(capture(["age", "--version"], stderr: .null).output)
    }

    private func removeFiles(_ names: [String]) {
        for name in names { try? FileManager.default.removeItem(atPath: "\(tmp)/\(name)") }
    }

    /// Runs `arguments` with a new pty as its controlling terminal, typing `passphrase` (and a
    /// line feed) 20 ms after each passphrase prompt it prints; its wall time in µs, or nil when it failed.
    func underTerminal(_ arguments: [String], typing passphrase: String) -> Int? {
        guard let terminal = openTerminal() else { die("cannot open a pseudo-terminal") }
        defer { close(terminal.master) }
        let prompt = try! NSRegularExpression(pattern: "[Pp]assphrase[^\\n:]*:")
        let start = monotonicMicroseconds()
        let pid = spawn(arguments, stdin: .terminal(terminal.slave), stdout: .terminal(terminal.slave), stderr: .terminal(terminal.slave))
        var seen: [UInt8] = []
        var answered = 0
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            var ready = pollfd(fd: terminal.master, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 60_000) > 0 else { break }
            let count = read(terminal.master, &buffer, buffer.count)
            if count <= 0 { break }
            seen += buffer[0..<count]
            let text = String(decoding: seen, as: UTF8.self)
            let prompts = prompt.numberOfMatches(in: text, range: NSRange(text.startIndex..., in: text))
            while answered < prompts {
                usleep(20_000)
                let line = Array((passphrase + "\n").utf8)
                _ = line.withUnsafeBytes { write(terminal.master, $0.baseAddress, $0.count) }
                answered += 1
            }
        }
        guard let status = waitForChild(pid, timeout: 120) else { die("passphrase run did not finish in 120 s: \(arguments.joined(separator: " "))") }
        let elapsed = monotonicMicroseconds() - start
        return status.succeeded ? elapsed : nil
    }
}

/// A new pseudo-terminal: the master's descriptor and the slave's path. posix_openpt, grantpt,
/// unlockpt and ptsname_r are hidden from Swift's Glibc module, so they are looked up.
private func openTerminal() -> (master: Int32, slave: String)? {
    typealias OpenPT = @convention(c) (Int32) -> Int32
    typealias Grant = @convention(c) (Int32) -> Int32
    typealias Name = @convention(c) (Int32, UnsafeMutablePointer<CChar>?, Int) -> Int32
    guard let openpt = dlsym(nil, "posix_openpt").map({ unsafeBitCast($0, to: OpenPT.self) }),
        let grant = dlsym(nil, "grantpt").map({ unsafeBitCast($0, to: Grant.self) }),
        let unlock = dlsym(nil, "unlockpt").map({ unsafeBitCast($0, to: Grant.self) }),
        let name = dlsym(nil, "ptsname_r").map({ unsafeBitCast($0, to: Name.self) })
    else { return nil }
    let master = openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)
    guard master >= 0 else { return nil }
    var path = [CChar](repeating: 0, count: 256)
    guard grant(master) == 0, unlock(master) == 0, name(master, &path, path.count) == 0 else {
        close(master)
        return nil
    }
    return (master, String(decoding: path.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self))
}

/// Whether two files have the same bytes (cmp -s).
func sameContents(_ a: String, _ b: String) -> Bool {
    guard let first = FileHandle(forReadingAtPath: a), let second = FileHandle(forReadingAtPath: b) else { return false }
    defer {
        try? first.close()
        try? second.close()
    }
    while true {
        let x = ((try? first.read(upToCount: 1 << 20)) ?? nil) ?? Data()
        let y = ((try? second.read(upToCount: 1 << 20)) ?? nil) ?? Data()
        if x != y { return false }
        if x.isEmpty { return true }
    }
}
