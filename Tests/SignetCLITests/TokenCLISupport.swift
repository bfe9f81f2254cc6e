import Foundation
import SignetTestSupport
import Testing

/// A SoftHSM2 token store of one test's own, inside its sandbox (`softhsm2.conf` and `tokens/`),
/// and `signet`, `pkcs11-tool` and `softhsm2-util` run on it. Every program is given
/// `SOFTHSM2_CONF`; signet also `SIGNET_PKCS11_MODULE` and, unless a test asks otherwise,
/// `SIGNET_PKCS11_PIN`. Scripts/test installs the Debian packages softhsm2 and opensc
/// (pkcs11-tool); a missing one fails the test, saying so.
struct SoftHSM: Sendable {
    /// Debian's SoftHSM2 module (package softhsm2).
    static let module = "/usr/lib/softhsm/libsofthsm2.so"
    /// The user PIN of every token made here.
    static let pin = "1234"
    static let soPIN = "5678"

    let box: Sandbox

    /// The store's configuration file.
    var conf: String { box.path("softhsm2.conf") }

    /// Writes the store's configuration and initialises a token for each of `labels` (user PIN
    /// ``pin``).
    init(_ box: Sandbox, tokens labels: String..., sourceLocation: SourceLocation = #_sourceLocation) throws {
        try #require(
            FileManager.default.fileExists(atPath: Self.module),
            "SoftHSM2's PKCS#11 module \(Self.module) is missing: install the Debian package softhsm2", sourceLocation: sourceLocation)
        let utility = try #require(
            ProcessRunner.which("softhsm2-util"), "softhsm2-util is missing: install the Debian package softhsm2",
            sourceLocation: sourceLocation)
        self.box = box
        try FileManager.default.createDirectory(atPath: box.path("tokens"), withIntermediateDirectories: true)
        try box.write("softhsm2.conf", "directories.tokendir = \(box.path("tokens"))\nobjectstore.backend = file\nlog.level = ERROR\n")
        for label in labels {
            let made = try box.run(
                utility, ["--init-token", "--free", "--label", label, "--pin", Self.pin, "--so-pin", Self.soPIN], stdin: nil,
                environment: ["SOFTHSM2_CONF": conf])
            try #require(made.status == 0, "softhsm2-util could not make the token \(label): \(made)", sourceLocation: sourceLocation)
        }
    }

    /// The environment signet runs in: the store, its module, and `pin` as SIGNET_PKCS11_PIN.
    func environment(pin: String?) -> [String: String] {
        var environment = ["SOFTHSM2_CONF": conf, "SIGNET_PKCS11_MODULE": Self.module]
        if let pin { environment["SIGNET_PKCS11_PIN"] = pin }
        return environment
    }

    /// Runs signet on the store (not required to succeed). With `pin` nil signet has no PIN
    /// source: a SIGNET_PKCS11_PIN the tester's own environment has is removed as well, and its
    /// standard error is a file, not a terminal.
    func signet(_ arguments: String..., pin: String? = SoftHSM.pin, environment: [String: String] = [:]) throws -> RunResult {
        try signet(arguments: arguments, pin: pin, environment: environment)
    }

    func signet(arguments: [String], pin: String? = SoftHSM.pin, environment: [String: String] = [:]) throws -> RunResult {
        let merged = self.environment(pin: pin).merging(environment) { $1 }
        if merged["SIGNET_PKCS11_PIN"] == nil {
            return try box.run("/usr/bin/env", ["-u", "SIGNET_PKCS11_PIN", SignetBinary.path] + arguments, stdin: nil, environment: merged)
        }
        return try box.run(SignetBinary.path, arguments, stdin: nil, environment: merged)
    }

    /// Runs signet on the store and requires exit 0.
    @discardableResult
    func signetOK(
        _ arguments: String..., pin: String? = SoftHSM.pin, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> RunResult {
        let result = try signet(arguments: arguments, pin: pin)
        try #require(result.status == 0, "signet \(arguments.joined(separator: " ")) failed: \(result)", sourceLocation: sourceLocation)
        return result
    }

    /// `signet token generate URI -t TYPE`; returns the one URI it printed.
    @discardableResult
    func generate(_ uri: String, type: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let result = try signetOK("token", "generate", uri, "-t", type, sourceLocation: sourceLocation)
        let lines = result.out.split(separator: "\n")
        try #require(lines.count == 1 && result.out.hasSuffix("\n"), "not one URI line: \(result)", sourceLocation: sourceLocation)
        return String(lines[0])
    }

    /// `signet token public URI --format FORMAT -o name`, without a PIN (a URI without
    /// type=private names the public key object, which needs no login).
    func exportPublic(_ uri: String, to name: String, format: String = "pem", sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try signetOK("token", "public", uri, "--format", format, "-o", box.path(name), pin: nil, sourceLocation: sourceLocation)
        #expect(result.out.isEmpty, "\(result)", sourceLocation: sourceLocation)
    }

    /// `signet key fingerprint URI`'s `sha256/…`.
    func fingerprint(_ uri: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        try signetOK("key", "fingerprint", uri, sourceLocation: sourceLocation).out.trimmingCharacters(in: .newlines)
    }

    /// `pkcs11-tool --module SOFTHSM ARGS` on the store (not required to succeed).
    func pkcs11Tool(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> RunResult {
        let tool = try #require(
            ProcessRunner.which("pkcs11-tool"), "pkcs11-tool is missing: install the Debian package opensc", sourceLocation: sourceLocation)
        return try box.run(tool, ["--module", Self.module] + arguments, stdin: nil, environment: ["SOFTHSM2_CONF": conf])
    }

    /// `pkcs11-tool` logged in to the token `label` with ``pin``; requires it to succeed.
    @discardableResult
    func pkcs11ToolOK(token label: String, _ arguments: String..., sourceLocation: SourceLocation = #_sourceLocation) throws -> RunResult {
        let all = ["--token-label", label, "--login", "--pin", Self.pin] + arguments
        let result = try pkcs11Tool(all, sourceLocation: sourceLocation)
        try #require(result.status == 0, "pkcs11-tool \(all.joined(separator: " ")) failed: \(result)", sourceLocation: sourceLocation)
        return result
    }

    /// The JSON of a `--json` listing.
    static func json(_ result: RunResult, sourceLocation: SourceLocation = #_sourceLocation) throws -> Any {
        try #require(try? JSONSerialization.jsonObject(with: result.stdout), "not JSON: \(result)", sourceLocation: sourceLocation)
    }

    /// The `"keys"` of `signet token keys URI --login --json`.
    func keys(_ uri: String = "pkcs11:", login: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) throws -> [[String: Any]] {
        let result = try signet(
            arguments: ["token", "keys", uri, "--json"] + (login ? ["--login"] : []), pin: login ? Self.pin : nil)
        try #require(result.status == 0, "token keys failed: \(result)", sourceLocation: sourceLocation)
        return try #require(try Self.json(result, sourceLocation: sourceLocation) as? [[String: Any]], "not a list of keys: \(result)",
                            sourceLocation: sourceLocation)
    }
}

extension SoftHSM {
    /// `signet verify --key KEY --signature sig file` with no PIN (a public key needs none):
    /// must exit 0 and report `algorithm`.
    func expectVerifies(key: String, reporting algorithm: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let verified = try signet("verify", "--key", key, "--signature", "sig", "file", pin: nil)
        #expect(verified.status == 0, "\(verified)", sourceLocation: sourceLocation)
        #expect(verified.stderr.contains("signature OK (\(algorithm)"), "\(verified)", sourceLocation: sourceLocation)
    }
}

/// A signature `signet sign` makes with a token key, and openssl's command that verifies it.
struct TokenSignCase: CustomTestStringConvertible, Sendable {
    /// The key type `signet token generate -t` makes.
    var type: String
    /// `-a ALGORITHM` given to sign and verify, or none for the key's default.
    var algorithm: String?
    /// What `signet verify` reports: `signature OK (…`.
    var reported: String
    /// openssl dgst's digest, or nil for Ed25519 (openssl pkeyutl -rawin).
    var digest: String?
    var sigopts: [String] = []

    var testDescription: String { "\(type) \(reported)" }

    var algorithmArguments: [String] { algorithm.map { ["-a", $0] } ?? [] }

    static let all: [TokenSignCase] = [
        TokenSignCase(type: "p256", reported: "ecdsa-p256-sha256", digest: "sha256"),
        TokenSignCase(type: "p384", reported: "ecdsa-p384-sha384", digest: "sha384"),
        TokenSignCase(type: "rsa2048", reported: "rsa-v1_5-sha256", digest: "sha256"),
        TokenSignCase(
            type: "rsa2048", algorithm: "rsa-pss-sha256", reported: "rsa-pss-sha256", digest: "sha256",
            sigopts: ["-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:32"]),
        TokenSignCase(type: "ed25519", reported: "ed25519", digest: nil),
    ]

    /// openssl's verdict on `signature` over `file` with the public key `publicKey` (not required to succeed).
    func opensslVerify(_ box: Sandbox, publicKey: String, signature: String, file: String) throws -> RunResult {
        if let digest {
            return try box.run(
                try Self.openssl(), ["dgst", "-\(digest)", "-verify", publicKey, "-signature", signature] + sigopts + [file], stdin: nil)
        }
        return try box.run(
            try Self.openssl(), ["pkeyutl", "-verify", "-pubin", "-inkey", publicKey, "-rawin", "-in", file, "-sigfile", signature],
            stdin: nil)
    }

    static func openssl(sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        try #require(ProcessRunner.which("openssl"), "openssl is missing: install the Debian package openssl", sourceLocation: sourceLocation)
    }
}
