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

    /// Runs `ssh-keygen` (Debian package openssh-client) with `arguments`; requires it to succeed.
    @discardableResult
    func sshKeygen(_ arguments: String..., sourceLocation: SourceLocation = #_sourceLocation) throws -> RunResult {
        try sshKeygen(arguments: arguments, sourceLocation: sourceLocation)
    }

    @discardableResult
    func sshKeygen(arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> RunResult {
        let tool = try #require(
            ProcessRunner.which("ssh-keygen"), "ssh-keygen is not installed (Scripts/test installs it: Debian package openssh-client)",
            sourceLocation: sourceLocation)
        let result = try run(tool, arguments, stdin: nil)
        try #require(result.status == 0, "ssh-keygen \(arguments.joined(separator: " ")) failed: \(result)", sourceLocation: sourceLocation)
        return result
    }

    /// `ssh-keygen -t type [-b bits]` without a passphrase: `name` (OpenSSH's own private key
    /// format, openssh-key-v1) and `name.pub`; returns the `.pub` line (comment `name@test`).
    @discardableResult
    func sshKey(_ name: String, type: String, bits: Int? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let size = bits.map { ["-b", String($0)] } ?? []
        try sshKeygen(arguments: ["-q", "-t", type] + size + ["-N", "", "-C", "\(name)@test", "-f", name], sourceLocation: sourceLocation)
        return try readText(name + ".pub").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A copy (mode 0600, as ssh-keygen wants) of the OpenSSH private key `name`, rewritten by
    /// `ssh-keygen -p -m PKCS8` as unencrypted PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
    func pkcs8Copy(of name: String, to copy: String) throws {
        try write(copy, try read(name))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path(copy))
        try sshKeygen("-q", "-p", "-P", "", "-N", "", "-m", "PKCS8", "-f", copy)
        #expect(try readText(copy).hasPrefix("-----BEGIN PRIVATE KEY-----\n"), "\(copy) is not PKCS#8")
    }

    /// The type and key of an OpenSSH public key line, without its comment.
    static func keyFields(_ line: String) -> String {
        line.split(separator: " ").prefix(2).joined(separator: " ")
    }

    /// A well-formed `sk-ssh-ed25519@openssh.com` (FIDO security key) public key line.
    static func securityKeyLine() -> String {
        func string(_ bytes: [UInt8]) -> [UInt8] {
            let count = UInt32(bytes.count)
            let shifts: [UInt32] = [24, 16, 8, 0]
            return shifts.map { UInt8(truncatingIfNeeded: count >> $0) } + bytes
        }
        let type = Array("sk-ssh-ed25519@openssh.com".utf8)
        let blob = string(type) + string((0..<32).map { UInt8($0) }) + string(Array("ssh:".utf8))
        return "sk-ssh-ed25519@openssh.com \(Data(blob).base64EncodedString()) token@test"
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
