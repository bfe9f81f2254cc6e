import Foundation
import Glibc

// `signet-bench run --signet PATH [--root DIR]`: the driver of Scripts/bench. It reads the
// BENCH_* settings, makes the test data in a temporary folder, runs each section's
// measurements (signet and its peers as whole processes, signet-bench's in-process loops as
// child processes of this same binary), prints the report to standard output and progress to
// standard error, and exits 1 naming each missed target. The targets are data:
// Benchmarks/Targets/<Swift version>.json (see Targets.swift), or the file BENCH_TARGETS names.

/// One row of the table.
struct Row {
    var measurement: String
    var signet: String
    var peer: String
    var ratio: String
    var target: String
}

/// The state of one run: settings, paths, the rows so far and what sections share.
final class Bench {
    let settings: Settings
    let targets: Targets
    /// The signet binary measured, and this binary (for its in-process loops).
    let signet: String
    let benchBinary: String
    /// The repository (for Scripts/bench-envelope.py).
    let root: String
    /// The temporary folder, removed at the end.
    let tmp: String
    var rows: [Row] = []
    /// The report's notes, by section (printed in the report's fixed order).
    var notes: [String: String] = [:]
    /// In-process verifications per second by key type, from the ops section (reused by http and server).
    var verifyRate: [String: String] = [:]
    var keysMade: Set<String> = []
    var rssMethod = "time"
    var signetVersion = ""

    var data: String { tmp + "/data.bin" }
    var sizeLabel: String { "\(settings.sizeMiB) MiB" }

    init(settings: Settings, targets: Targets, signet: String, benchBinary: String, root: String, tmp: String) {
        self.settings = settings
        self.targets = targets
        self.signet = signet
        self.benchBinary = benchBinary
        self.root = root
        self.tmp = tmp
    }

    func row(_ measurement: String, _ signet: String, _ peer: String, _ ratio: String, _ target: String) {
        rows.append(Row(measurement: measurement, signet: signet, peer: peer, ratio: ratio, target: target))
    }
}

/// Progress, on standard error.
func note(_ message: String) {
    FileHandle.standardError.write(Data("bench: \(message)\n".utf8))
}

/// Reports an error, stops everything the driver started, removes its files and exits 1.
func die(_ message: String) -> Never {
    FileHandle.standardError.write(Data("bench: error: \(message)\n".utf8))
    registry.shutDown(status: 1)
}

/// The entry point of `signet-bench run`.
func runDriver(_ arguments: [String]) -> Never {
    var signetPath: String?
    var rootPath: String?
    var index = 0
    while index < arguments.count {
        switch (arguments[index], index + 1 < arguments.count ? arguments[index + 1] : nil) {
        case ("--signet", let value?): signetPath = value
        case ("--root", let value?): rootPath = value
        default:
            FileHandle.standardError.write(Data("usage: signet-bench run --signet PATH [--root DIR]   (settings: BENCH_* variables; Scripts/bench)\n".utf8))
            exit(2)
        }
        index += 2
    }
    guard let signetPath else { die("signet-bench run: --signet PATH is required (Scripts/bench passes it)") }
    registry.handleSignals()
    setenv("LC_ALL", "C", 1)

    let environment = ProcessInfo.processInfo.environment
    let settings: Settings
    do {
        settings = try Settings(environment: environment)
    } catch {
        die(error.message)
    }
    // The repository: --root, else where this source file was when signet-bench was built.
    let root = rootPath.map(absolutePath) ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    let targets: Targets
    do {
        targets = try Targets(folder: root + "/Benchmarks/Targets", override: environment["BENCH_TARGETS"])
    } catch {
        die(error.message)
    }
    for tool in ["openssl", "sha256sum"] where findInPath(tool) == nil {
        die("required tool '\(tool)' not found in PATH (install it and retry)")
    }

    var template = Array(((environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp") + "/signet-bench.XXXXXX").utf8CString)
    guard mkdtemp(&template) != nil else { die("cannot make a temporary folder in \(environment["TMPDIR"] ?? "/tmp")") }
    let tmp = String(decoding: template.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    registry.state.withLock { $0.temporaryFolder = tmp }

    let signet = absolutePath(signetPath)
    guard FileManager.default.isExecutableFile(atPath: signet) else { die("SIGNET_BIN='\(signetPath)' is not an executable file") }
    let bench = Bench(
        settings: settings, targets: targets, signet: signet, benchBinary: selfPath(), root: root, tmp: tmp)
    guard bench.capture(["openssl", "version"]).status.succeeded else { die("'openssl version' failed; is openssl working?") }
    let version = bench.capture([signet, "--version"])
    guard version.status.succeeded else { die("'\(signet) --version' failed; is SIGNET_BIN a signet binary?") }
    bench.signetVersion = version.output.trimmingCharacters(in: .newlines)
    note("targets: \(targets.path) (signet-bench built with Swift \(compilerVersion))")
    bench.pickRSSMethod()
    bench.runSections()
    bench.printReport()

    // A stated target that was missed fails the run, naming it (rows without a target say "-").
    let missed = bench.rows.filter { $0.target.hasPrefix("NO") }.map { row in
        "\(row.measurement): \(row.ratio), target \(row.target.hasPrefix("NO ") ? String(row.target.dropFirst(3)) : row.target)"
    }
    if !missed.isEmpty {
        FileHandle.standardError.write(Data(("\nbench: \(missed.count) target(s) missed:\n" + missed.map { "  - \($0)\n" }.joined()).utf8))
        registry.shutDown(status: 1)
    }
    registry.shutDown(status: 0)
}

extension Bench {
    /// Every wanted section, in the fixed order.
    func runSections() {
        let wanted = settings.wants
        if wanted("hash") || wanted("sign") || wanted("rss") || wanted("minisign") || wanted("bundle") || wanted("age") {
            makeTestData()
        }
        writeRandom(tmp + "/tiny.bin", bytes: 32)
        if wanted("hash") { hashSection() }
        if wanted("sign") { signSection() }
        if wanted("ops") { opsSection() }
        if wanted("rss") { rssSection() }
        if wanted("help") { helpSection() }
        if wanted("vault") { vaultSection() }
        if wanted("minisign") { minisignSection() }
        if wanted("bundle") { bundleSection() }
        if wanted("http") { httpSection() }
        if wanted("tls") { tlsSection() }
        if wanted("age") { ageSection() }
        if wanted("pkcs11") { pkcs11Section() }
        if wanted("server") { serverSection() }
        if wanted("resources") { resourcesSection() }
        if wanted("envelope") { envelopeSection() }
    }

    /// The test file, from /dev/urandom, then read once untimed so the page cache is warm.
    func makeTestData() {
        let needKiB = settings.sizeMiB * 1024 + 65536
        var volume = statvfs()
        if statvfs(tmp, &volume) == 0 {
            let freeKiB = Int(volume.f_bavail) * Int(volume.f_frsize) / 1024
            if freeKiB < needKiB {
                die("not enough space in \(tmp) for a \(settings.sizeMiB) MiB file (free: \(freeKiB / 1024) MiB); set TMPDIR or BENCH_SIZE_MIB")
            }
        }
        note("creating \(settings.sizeMiB) MiB of random data in \(tmp)")
        writeRandom(data, bytes: settings.sizeMiB * 1024 * 1024)
        note("warming the page cache (one untimed read)")
        guard let file = FileHandle(forReadingAtPath: data) else { die("could not read \(data)") }
        while let chunk = try? file.read(upToCount: 1 << 20), !chunk.isEmpty {}
        try? file.close()
    }

    /// `path` with `bytes` bytes of /dev/urandom.
    func writeRandom(_ path: String, bytes: Int) {
        guard let source = FileHandle(forReadingAtPath: "/dev/urandom"),
            FileManager.default.createFile(atPath: path, contents: nil), let sink = FileHandle(forWritingAtPath: path)
        else { die("could not write \(path)") }
        var left = bytes
        while left > 0 {
            guard let chunk = try? source.read(upToCount: min(left, 1 << 20)), !chunk.isEmpty else { die("could not read /dev/urandom") }
            do { try sink.write(contentsOf: chunk) } catch { die("could not write \(path)") }
            left -= chunk.count
        }
        try? sink.close()
        try? source.close()
    }

    /// `tmp/TYPE.pem` (private, made by signet) and `TYPE.pub`, made once.
    func ensureKey(_ type: String) {
        guard !keysMade.contains(type) else { return }
        note("generating \(type) key with signet")
        mustRun([signet, "key", "generate", "-q", "-t", type, "-o", "\(tmp)/\(type).pem"], "signet key generate -t \(type) failed")
        mustRun([signet, "key", "public", "\(tmp)/\(type).pem", "-o", "\(tmp)/\(type).pub"], "signet key public (\(type)) failed")
        keysMade.insert(type)
    }
}

/// `path` made absolute against the current folder.
func absolutePath(_ path: String) -> String {
    path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
}

/// This executable's path.
func selfPath() -> String {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? absolutePath(CommandLine.arguments[0])
}

/// Where `tool` is found in PATH, if it is.
func findInPath(_ tool: String) -> String? {
    if tool.hasPrefix("/") { return FileManager.default.isExecutableFile(atPath: tool) ? tool : nil }
    for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
        let candidate = "\(folder)/\(tool)"
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return nil
}
