import Foundation

/// The Swift version signet-bench was built with, as `major.minor`: the targets file it reads
/// by default is `Benchmarks/Targets/<this>.json`, or the newest one not newer than it.
let compilerVersion: String = {
    #if compiler(>=7.0)
    "7.0"
    #elseif compiler(>=6.5)
    "6.5"
    #elseif compiler(>=6.4)
    "6.4"
    #elseif compiler(>=6.3)
    "6.3"
    #elseif compiler(>=6.2)
    "6.2"
    #else
    "6.1"
    #endif
}()

/// One stated target: a bound on a figure. Which figure, and its unit, is the row's; the
/// bound and which side of it is met come from the targets file.
struct Target: Decodable {
    var atLeast: Double?   // met when figure >= bound
    var atMost: Double?    // met when figure <= bound
    var below: Double?     // met when figure < bound
    var above: Double?     // met when figure > bound
    var about: String?

    /// The bound, and how it is compared, as the table prints it (">= 0.95").
    var bound: Double { atLeast ?? atMost ?? below ?? above ?? .nan }
    var symbol: String { atLeast != nil ? ">=" : atMost != nil ? "<=" : below != nil ? "<" : ">" }
    var text: String { "\(symbol) \(formatBound(bound))" }

    /// Whether `figure` meets the target.
    func isMet(by figure: Double) -> Bool {
        if let atLeast { return figure >= atLeast }
        if let atMost { return figure <= atMost }
        if let below { return figure < below }
        if let above { return figure > above }
        return false
    }

    var boundCount: Int { [atLeast, atMost, below, above].compactMap { $0 }.count }
}

/// A bound as the table shows it: 64, not 64.0; 0.95 as written.
func formatBound(_ value: Double) -> String {
    value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : "\(value)"
}

/// The targets of the bench, read from `Benchmarks/Targets/<Swift version>.json` (or the file
/// `BENCH_TARGETS` names). Every name the sections ask for must be there, and nothing else.
struct Targets {
    /// Every target the sections use, with the section that uses it.
    static let names = [
        "hash.vs-openssl-dgst", "sign.vs-openssl-dgst", "verify.vs-openssl-dgst", "rss.hash-peak-mib", "help.median-ms",
        "bundle.verify-vs-baseline", "http.hmac-vs-plain", "http.public-key-overhead-us", "tls.pins-vs-no-pins",
        "age.encrypt-vs-age", "age.decrypt-vs-age", "age.encrypt-file-vs-age", "age.decrypt-file-vs-age", "age.peak-rss-mib",
        "pkcs11.signer-vs-raw", "server.sqlite.me-vs-health", "server.sqlite.me-p99-ms", "server.sqlite.me-overhead-us",
        "server.postgres.me-vs-health", "server.postgres.me-p99-ms", "server.postgres.me-overhead-us",
        "server.sign-ins-vs-scrypt-bound", "resources.fetch-vs-curl", "envelope.health-p99-ms",
        "envelope.worst-request-cpu-us",
    ]

    let path: String
    let targets: [String: Target]

    subscript(name: String) -> Target {
        guard let target = targets[name] else { preconditionFailure("no target '\(name)' (Targets.names lists it?)") }
        return target
    }

    private struct File: Decodable {
        var targets: [String: Target]
    }

    /// Reads the targets file: `override` (BENCH_TARGETS) if given, else the one for
    /// `compilerVersion` in `folder`, falling back to the newest not newer than it.
    init(folder: String, override: String?) throws(SettingsError) {
        if let override, !override.isEmpty {
            path = override
        } else {
            path = try Targets.pick(folder: folder, version: compilerVersion)
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SettingsError("cannot read the targets file \(path)")
        }
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: data)
        } catch {
            throw SettingsError("\(path) is not a targets file: \(error)")
        }
        for name in Targets.names where file.targets[name] == nil {
            throw SettingsError("\(path) has no target '\(name)'")
        }
        for (name, target) in file.targets.sorted(by: { $0.key < $1.key }) {
            guard Targets.names.contains(name) else { throw SettingsError("\(path): unknown target '\(name)'") }
            guard target.boundCount == 1, target.bound.isFinite else {
                throw SettingsError("\(path): target '\(name)' needs exactly one of atLeast, atMost, below, above (a number)")
            }
        }
        targets = file.targets
    }

    /// `folder/<version>.json`, or the newest `<major>.<minor>.json` there not newer than `version`.
    static func pick(folder: String, version: String) throws(SettingsError) -> String {
        func parse(_ text: String) -> (Int, Int)? {
            let parts = text.split(separator: ".")
            guard parts.count == 2, let major = Int(parts[0]), let minor = Int(parts[1]) else { return nil }
            return (major, minor)
        }
        guard let wanted = parse(version) else { throw SettingsError("bad Swift version '\(version)'") }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        let candidates = names.compactMap { name -> ((Int, Int), String)? in
            guard name.hasSuffix(".json"), let found = parse(String(name.dropLast(5))), found <= wanted else { return nil }
            return (found, name)
        }
        guard let best = candidates.max(by: { $0.0 < $1.0 }) else {
            throw SettingsError("no targets file for Swift \(version) or older in \(folder) (set BENCH_TARGETS to one)")
        }
        return folder + "/" + best.1
    }
}
