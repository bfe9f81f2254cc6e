import Foundation
import Glibc

// The report: a few lines on what was measured and how, then one Markdown table, its columns
// padded so that it reads the same pasted into an issue or in a terminal.

extension Bench {
    func printReport() {
        var text = "signet benchmark, \(utcNow())\n\n"
        let buildNote = signet.contains("/debug/") ? " (DEBUG build: numbers are not representative)" : ""
        text += "- signet \(signetVersion): \(signet)\(buildNote)\n"
        let sha256sumVersion = firstLine(capture(["sha256sum", "--version"]).output)
        text += "- peers: \(firstLine(capture(["openssl", "version"]).output)); \(sha256sumVersion)\n"
        text += "- host: \(cpuModel() ?? "unknown CPU"), \(processorCount()) cores, \(systemName())\n"
        text += "- file: \(sizeLabel) from /dev/urandom, page cache warm; best of \(settings.runs) runs per tool\n"
        let ops = settings.opsSeconds
        text += "- ops/s: SignetCore = signet-bench, in-process sign/verify of a 32-byte message through the Signer/Verifier seam for \(ops) s; peer = openssl speed -elapsed -seconds \(ops) (both primitive only, one core); whole CLI process = `signet sign|verify` of a 32-byte file run back to back (process start-up and key parsing included)\n"
        if settings.wants("vault") {
            let count = settings.vaultCount
            text += "- vault: signet-bench, in-process, \(count) Vault.set calls (each one durable transaction: WAL, synchronous=FULL) and \(count) Vault.secret calls, against the same count of single-row INSERT/SELECT on a plain SQLite file with the same settings and row sizes; open and hash times are the best of 3 (lower is better there: ratio > 1 means slower than python)\n"
        }
        if let version = notes["minisign"] {
            text += "- minisign: \(version), prehashed signatures (BLAKE2b-512, its default) with an unencrypted key, so no scrypt is timed; each tool verifies the other's signature\n"
        }
        for section in ["http", "pkcs11"] {
            if let line = notes[section] { text += "- \(section): \(line)\n" }
        }
        if let version = notes["age"] {
            text += "- age: age \(version); signet encrypt/decrypt and age -r/-d of the same file to the same recipient, output to /dev/null (timed) and to files (untimed, each tool decrypting the other's)\n"
        }
        for section in ["tls", "server", "resources", "envelope"] {
            if let line = notes[section] { text += "- \(section): \(line)\n" }
        }
        if settings.wants("bundle") {
            text += "- bundles: one P-256 signature; times in seconds (lower is better, ratio = signet / baseline); the baseline does by hand what a bundle does: SHA-256 of every file (sha256sum), one signature over the list (openssl dgst), one archive (tar) or the check of both; page cache warm\n"
        }
        text += "- peak RSS via \(rssMethod == "time" ? "/usr/bin/time -f %M" : "polling VmHWM in /proc/PID/status"); ratio = signet / peer\n"
        text += "- targets: \(targets.path) (signet-bench built with Swift \(compilerVersion))\n\n"
        text += table(rows)
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

/// The rows as an aligned Markdown table (widths in characters, so µ and − count once).
func table(_ rows: [Row]) -> String {
    let head = Row(measurement: "measurement", signet: "signet", peer: "peer", ratio: "ratio", target: "target met?")
    func cells(_ row: Row) -> [String] { [row.measurement, row.signet, row.peer, row.ratio, row.target] }
    var widths = cells(head).map(\.count)
    for row in rows {
        for (column, cell) in cells(row).enumerated() { widths[column] = max(widths[column], cell.count) }
    }
    func pad(_ text: String, _ width: Int, right: Bool) -> String {
        let fill = String(repeating: " ", count: max(0, width - text.count))
        return right ? fill + text : text + fill
    }
    func line(_ row: Row) -> String {
        let parts = cells(row).enumerated().map { column, cell in pad(cell, widths[column], right: (1...3).contains(column)) }
        return "| " + parts.joined(separator: " | ") + " |\n"
    }
    let dashes = widths.map { String(repeating: "-", count: $0) }
    var text = line(head)
    text += "|-\(dashes[0])-|-\(dashes[1]):|-\(dashes[2]):|-\(dashes[3]):|-\(dashes[4])-|\n"
    for row in rows { text += line(row) }
    return text
}

/// Now, as `date -u +%Y-%m-%dT%H:%M:%SZ`.
func utcNow() -> String {
    var now = time(nil)
    var parts = tm()
    gmtime_r(&now, &parts)
    return format("%04d-%02d-%02dT%02d:%02d:%02dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec)
}

/// The CPU's model name, from /proc/cpuinfo.
func cpuModel() -> String? {
    for line in readText("/proc/cpuinfo").split(separator: "\n") where line.hasPrefix("model name") {
        guard let colon = line.firstIndex(of: ":") else { continue }
        return String(line[line.index(after: colon)...].drop(while: { $0 == " " || $0 == "\t" }))
    }
    return nil
}

/// `uname -sr`.
func systemName() -> String {
    var names = utsname()
    uname(&names)
    func text<T>(_ field: T) -> String {
        withUnsafeBytes(of: field) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
    }
    return "\(text(names.sysname)) \(text(names.release))"
}
