import Foundation
import SignetTestSupport
import Testing

/// Helpers for the `signet cert` suites (CertCLITests, CertP12CLITests).
extension Sandbox {
    /// Runs signet with `arguments` and requires exit 0.
    @discardableResult
    func certOK(_ arguments: [String]) throws -> RunResult {
        let result = try signet(arguments: arguments)
        try #require(result.status == 0, "signet \(arguments.joined(separator: " ")) failed: \(result)")
        return result
    }

    /// `signet key generate -t type -o name`.
    func certKey(_ name: String, type: String) throws {
        try certOK(["key", "generate", "-t", type, "-o", name, "-q"])
    }

    /// A self-signed CA made by signet: `name.key` and `name.pem`.
    func certCA(_ name: String, type: String = "p256", subject: String = "CN=Signet Test CA,O=Signet Tests", days: Int = 30) throws {
        try certKey(name + ".key", type: type)
        try certOK(["cert", "self-signed", "--key", name + ".key", "--subject", subject, "--days", String(days), "--ca", "-o", name + ".pem", "-q"])
    }

    /// A new key `name.key`, its CSR `name.csr`, and `name.pem` issued for it by the CA `ca`
    /// (`ca.pem`, `ca.key`) with `profile` (--server, --client or --ca).
    func certIssued(
        _ name: String, by ca: String, type: String = "p256", subject: String, san: String?, profile: String = "--server", days: Int = 2
    ) throws {
        try certKey(name + ".key", type: type)
        try certOK(["cert", "csr", "--key", name + ".key", "--subject", subject, "-o", name + ".csr"] + (san.map { ["--san", $0] } ?? []))
        try certOK([
            "cert", "issue", "--ca-cert", ca + ".pem", "--ca-key", ca + ".key", name + ".csr", profile, "--days", String(days), "-o", name + ".pem",
        ])
    }

    /// Runs openssl with `arguments` and requires exit 0.
    @discardableResult
    func opensslOK(_ arguments: [String]) throws -> RunResult {
        let result = try run(try #require(ProcessRunner.which("openssl"), "openssl is not installed (Scripts/test installs it)"), arguments, stdin: nil)
        try #require(result.status == 0, "openssl \(arguments.joined(separator: " ")) failed: \(result)")
        return result
    }

    /// openssl's pin recipe: `<public key PEM> | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`.
    private func pinRecipe(_ publicKeyCommand: String) throws -> String {
        let result = try shell(publicKeyCommand + " | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64")
        let pin = "sha256/" + result.out.trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(pin.utf8.count == 51, "openssl's pin recipe failed: \(result)")
        return pin
    }

    func opensslPin(certificate file: String) throws -> String { try pinRecipe("openssl x509 -in '\(file)' -pubkey -noout") }
    func opensslPin(csr file: String) throws -> String { try pinRecipe("openssl req -in '\(file)' -pubkey -noout") }
    func opensslPin(key file: String) throws -> String { try pinRecipe("openssl pkey -in '\(file)' -pubout") }

    /// The DER of the (first) certificate in `file`, as openssl reads it.
    func certDER(_ file: String) throws -> Data { try opensslOK(["x509", "-in", file, "-outform", "DER"]).stdout }

    /// The public key of the key file `file`, as openssl writes it (SPKI PEM).
    func publicKeyPEM(_ file: String) throws -> String { try opensslOK(["pkey", "-in", file, "-pubout"]).out }
}

enum CertCLI {
    /// Checks a refusal: the exit status, and every fragment on standard error.
    static func expectRefused(
        _ result: RunResult, status: Int32, mentioning fragments: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(result.status == status, "\(result)", sourceLocation: sourceLocation)
        for fragment in fragments {
            #expect(result.stderr.contains(fragment), "stderr does not mention \"\(fragment)\": \(result.stderr)", sourceLocation: sourceLocation)
        }
    }

    /// The `sha256/…` of the `pin sha256/…` note on standard error.
    static func printedPin(_ stderr: String) -> String? {
        guard let range = stderr.range(of: "pin sha256/") else { return nil }
        return String(stderr[range.lowerBound...].dropFirst(4).prefix(while: { !$0.isWhitespace }))
    }

    /// The DER of every CERTIFICATE block in PEM text (other text and blocks are skipped).
    static func pemCertificates(_ text: String) -> [Data] {
        var found: [Data] = []
        var body: String?
        for line in text.split(whereSeparator: \.isNewline) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed == "-----BEGIN CERTIFICATE-----" {
                body = ""
            } else if trimmed == "-----END CERTIFICATE-----" {
                if let base64 = body, let der = Data(base64Encoded: base64) { found.append(der) }
                body = nil
            } else if let partial = body {
                body = partial + trimmed
            }
        }
        return found
    }

    /// A hex value compared across tools: lowercase, without colons or leading zeros.
    static func normalizedHex(_ text: String?) -> String? {
        guard let text else { return nil }
        return String(text.lowercased().filter { $0 != ":" }.drop(while: { $0 == "0" }))
    }

    /// What follows `=` in openssl's `name=value` output line.
    static func opensslValue(_ output: String) -> String {
        let line = output.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let equals = line.firstIndex(of: "=") else { return line }
        return String(line[line.index(after: equals)...])
    }
}
