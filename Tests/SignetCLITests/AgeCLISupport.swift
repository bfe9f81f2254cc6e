import Foundation
import SignetTestSupport
import Testing

/// The age CLI (Debian package age) and pyrage (PyPI), run in a sandbox against `signet
/// encrypt|decrypt|age`. Scripts/test installs both; a missing one fails the test, saying so.
extension Sandbox {
    /// The path of an age tool (`age`, `age-keygen`); records an issue when it is missing.
    func ageTool(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        try #require(
            ProcessRunner.which(name), "\(name) is not installed (Scripts/test installs it: Debian package age)",
            sourceLocation: sourceLocation)
    }

    /// Runs `age` with `arguments` (not required to succeed).
    func age(_ arguments: String..., stdin: Data? = nil) throws -> RunResult {
        try run(try ageTool("age"), arguments, stdin: stdin)
    }

    /// Runs `age-keygen` with `arguments` (not required to succeed).
    func ageKeygen(_ arguments: String...) throws -> RunResult {
        try run(try ageTool("age-keygen"), arguments, stdin: nil)
    }

    /// `signet age keygen -o name`; returns the recipient it announced on standard error.
    func signetAgeKey(_ name: String) throws -> String {
        let result = try signet("age", "keygen", "-o", name)
        try #require(result.status == 0, "signet age keygen failed: \(result)")
        return try Self.announcedRecipient(result)
    }

    /// `age-keygen -o name`; returns the recipient it announced on standard error.
    func ageToolKey(_ name: String) throws -> String {
        let result = try ageKeygen("-o", name)
        try #require(result.status == 0, "age-keygen failed: \(result)")
        return try Self.announcedRecipient(result)
    }

    /// The `age1…` of a `Public key: age1…` line on standard error.
    static func announcedRecipient(_ result: RunResult) throws -> String {
        let announced = result.stderr.split(separator: "\n").first(where: { $0.hasPrefix("Public key: age1") })
        let line = try #require(announced, "no public key line: \(result)")
        return String(line.dropFirst("Public key: ".count))
    }

    /// The `AGE-SECRET-KEY-1…` line of a key file.
    func ageSecretKey(in name: String) throws -> String {
        let found = try readText(name).split(separator: "\n").first(where: { $0.hasPrefix("AGE-SECRET-KEY-1") })
        let line = try #require(found, "no secret key in \(name)")
        return String(line)
    }

    /// `size` seeded pseudo-random bytes written to `name`.
    @discardableResult
    func writeRandom(_ name: String, size: Int, seed: UInt64 = 0xA9E) throws -> Data {
        var generator = SplitMix64(seed: seed &+ UInt64(size))
        let data = Data((0..<size).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
        try write(name, data)
        return data
    }

    /// Runs `command` on a pseudo-terminal (python3's `pty`), typing the first line of
    /// `passphraseFile` at every passphrase prompt: how `age -p` and `age -d` are driven, as
    /// they read passphrases only from the terminal. What the terminal showed comes back as
    /// standard error.
    func throughTerminal(passphraseFile: String, _ command: [String]) throws -> RunResult {
        try write("terminal.py", AgeCLITests.terminalDriver)
        return try run(try Python.executable(), [path("terminal.py"), path(passphraseFile)] + command, stdin: nil)
    }

    /// Requires pyrage for the python3 on PATH.
    func requirePyrage(sourceLocation: SourceLocation = #_sourceLocation) throws {
        let probe = try Python.run("import pyrage", sourceLocation: sourceLocation)
        try #require(
            probe.status == 0, "pyrage is not installed for python3 (Scripts/test installs it with pip): \(probe)",
            sourceLocation: sourceLocation)
    }

    /// The names in the sandbox that are leftover temporary files of an atomic write.
    func temporaryLeftovers() throws -> [String] {
        try temporary.contents().filter { $0.contains(".signet-") }
    }

    /// `name`'s bytes with the character at `offset` replaced by another base64 letter (in the
    /// middle of a base64 string, so the text stays canonical and only the value changes).
    func replaceLetter(_ name: String, at offset: Int, to copy: String) throws {
        var bytes = Array(try read(name))
        bytes[offset] = bytes[offset] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        try write(copy, Data(bytes))
    }
}
