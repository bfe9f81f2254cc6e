import Foundation

/// The sections of the bench, in the order they run (and must be named in `BENCH_SECTIONS`).
let allSections = [
    "hash", "sign", "ops", "rss", "help", "vault", "minisign", "bundle", "http", "tls", "age", "pkcs11", "server",
    "resources", "envelope",
]

/// The `BENCH_*` settings, read from the environment and checked as Scripts/bench always has:
/// the same names, defaults, ranges and messages (an unset or empty variable takes its default).
struct Settings {
    var sizeMiB = 1024              // BENCH_SIZE_MIB: size of the random test file
    var runs = 3                    // BENCH_RUNS: timed runs per tool; best is kept
    var opsSeconds = 2              // BENCH_OPS_SECONDS: length of each ops/s measurement
    var helpRuns = 20               // BENCH_HELP_RUNS: runs of `signet --help` (median)
    var opsAlgorithms = ["rsa2048", "rsa4096", "p256", "p384", "ed25519"]  // BENCH_ALGS
    var fileAlgorithms = ["rsa2048", "p256"]                                // BENCH_FILE_ALGS
    var rssMethod = "auto"          // BENCH_RSS_METHOD: auto | time | proc
    var sections = allSections      // BENCH_SECTIONS: which parts to run
    var pkcs11Seconds = "3"         // BENCH_PKCS11_SECONDS: token signatures per key type and loop kind
    var tlsSeconds = "3"            // BENCH_TLS_SECONDS: handshake measurement per client kind
    var chainCount = 2000           // BENCH_CHAIN_COUNT: chain validations (and openssl verify certificates)
    var bundleFiles = 10000         // BENCH_BUNDLE_FILES: small files in the many-files bundle
    var httpSeconds = 5             // BENCH_HTTP_SECONDS: length of each wrk run
    var httpConnections = 16        // BENCH_HTTP_CONNECTIONS: wrk connections
    var httpRounds = 3              // BENCH_HTTP_ROUNDS: rounds of HTTP runs; the figures are their medians
    var serverSeconds = 10          // BENCH_SERVER_SECONDS: length of each wrk run against signet serve
    var serverRounds = 5            // BENCH_SERVER_ROUNDS: rounds of health + /v1/me runs; medians
    var resourceMiB = 100           // BENCH_RESOURCE_MIB: size of the published resource (resources section)
    var envelopeSeconds = 5         // BENCH_ENVELOPE_SECONDS: health sampling under each attack
    var envelopeCPUSeconds = 2      // BENCH_ENVELOPE_CPU_SECONDS: sending time per kind of unauthenticated request
    var envelopeResourceMiB = 8     // BENCH_ENVELOPE_RESOURCE_MIB: the resource whose downloads stall
    var envelopeFloodSenders = 48   // BENCH_ENVELOPE_FLOOD_SENDERS: registration flood senders
    var vaultCount = 1000           // BENCH_VAULT_COUNT: vault sets and gets (and SQLite baseline rows)

    /// Reads and checks every setting; a bad value is reported as `die` reports it (exit 1).
    init(environment: [String: String]) throws(SettingsError) {
        func value(_ name: String, _ fallback: String) -> String {
            guard let text = environment[name], !text.isEmpty else { return fallback }
            return text
        }
        func positive(_ name: String, _ fallback: Int, upTo limit: Int? = nil) throws(SettingsError) -> Int {
            let text = value(name, String(fallback))
            guard text.allSatisfy(\.isASCIIDigit), let number = Int(text), number > 0, number <= (limit ?? Int.max) else {
                if let limit { throw SettingsError("\(name) must be an integer from 1 to \(limit) (got '\(text)')") }
                throw SettingsError("\(name) must be a positive integer (got '\(text)')")
            }
            return number
        }
        func positiveNumber(_ name: String, _ fallback: String) throws(SettingsError) -> String {
            let text = value(name, fallback)
            guard text.allSatisfy({ $0.isASCIIDigit || $0 == "." }), let number = Double(text), number > 0 else {
                throw SettingsError("\(name) must be a positive number (got '\(text)')")
            }
            return text
        }
        // The order of the checks is the order Scripts/bench has always made them in.
        sizeMiB = try positive("BENCH_SIZE_MIB", sizeMiB)
        runs = try positive("BENCH_RUNS", runs)
        opsSeconds = try positive("BENCH_OPS_SECONDS", opsSeconds)
        vaultCount = try positive("BENCH_VAULT_COUNT", vaultCount)
        httpSeconds = try positive("BENCH_HTTP_SECONDS", httpSeconds)
        httpConnections = try positive("BENCH_HTTP_CONNECTIONS", httpConnections)
        httpRounds = try positive("BENCH_HTTP_ROUNDS", httpRounds, upTo: 9)
        serverSeconds = try positive("BENCH_SERVER_SECONDS", serverSeconds)
        serverRounds = try positive("BENCH_SERVER_ROUNDS", serverRounds, upTo: 15)
        bundleFiles = try positive("BENCH_BUNDLE_FILES", bundleFiles, upTo: 100_000)
        envelopeSeconds = try positive("BENCH_ENVELOPE_SECONDS", envelopeSeconds, upTo: 1000)
        envelopeCPUSeconds = try positive("BENCH_ENVELOPE_CPU_SECONDS", envelopeCPUSeconds, upTo: 1000)
        envelopeResourceMiB = try positive("BENCH_ENVELOPE_RESOURCE_MIB", envelopeResourceMiB, upTo: 1000)
        envelopeFloodSenders = try positive("BENCH_ENVELOPE_FLOOD_SENDERS", envelopeFloodSenders, upTo: 1000)
        sections = words(value("BENCH_SECTIONS", allSections.joined(separator: " ")))
        for section in sections where !allSections.contains(section) {
            throw SettingsError("BENCH_SECTIONS: unknown section '\(section)' (\(allSections.joined(separator: ", ")))")
        }
        helpRuns = try positive("BENCH_HELP_RUNS", helpRuns)
        rssMethod = value("BENCH_RSS_METHOD", rssMethod)
        guard ["auto", "time", "proc"].contains(rssMethod) else { throw SettingsError("BENCH_RSS_METHOD must be auto, time or proc") }
        opsAlgorithms = words(value("BENCH_ALGS", opsAlgorithms.joined(separator: " ")))
        for type in opsAlgorithms where signatureAlgorithm(type) == nil {
            throw SettingsError("BENCH_ALGS: unknown key type '\(type)' (rsa2048, rsa3072, rsa4096, p256, p384, ed25519)")
        }
        fileAlgorithms = words(value("BENCH_FILE_ALGS", fileAlgorithms.joined(separator: " ")))
        for type in fileAlgorithms where !["rsa2048", "rsa3072", "rsa4096", "p256", "p384"].contains(type) {
            throw SettingsError("BENCH_FILE_ALGS: '\(type)' is not a hash-then-sign type (rsa2048, rsa3072, rsa4096, p256, p384)")
        }
        // Checked here for the first time (Scripts/bench passed them on unchecked).
        pkcs11Seconds = try positiveNumber("BENCH_PKCS11_SECONDS", pkcs11Seconds)
        tlsSeconds = try positiveNumber("BENCH_TLS_SECONDS", tlsSeconds)
        chainCount = try positive("BENCH_CHAIN_COUNT", chainCount)
        resourceMiB = try positive("BENCH_RESOURCE_MIB", resourceMiB)
    }

    /// Whether `section` is to run.
    func wants(_ section: String) -> Bool { sections.contains(section) }
}

struct SettingsError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

/// The words of `text`, split at blanks, tabs and line breaks (as the shell split them).
func words(_ text: String) -> [String] {
    text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).map(String.init)
}

/// The signature algorithm `signet sign -a` takes for a key type.
func signatureAlgorithm(_ type: String) -> String? {
    switch type {
    case "rsa2048", "rsa3072", "rsa4096": "rsa-v1_5-sha256"
    case "p256": "ecdsa-p256-sha256"
    case "p384": "ecdsa-p384-sha384"
    case "ed25519": "ed25519"
    default: nil
    }
}

/// The `openssl dgst` digest flag matching `signatureAlgorithm`.
func digestFlag(_ type: String) -> String { type == "p384" ? "-sha384" : "-sha256" }

/// The `openssl speed` name of a key type.
func speedName(_ type: String) -> String {
    switch type {
    case "p256": "ecdsap256"
    case "p384": "ecdsap384"
    default: type
    }
}

extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
