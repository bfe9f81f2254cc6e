import Foundation
import SignetTestSupport
import Testing

/// Runs `signet` and peer tools (openssl, ssh-keygen, sha256sum) inside a scratch folder, with
/// the environment ``SignetBinary/isolatedEnvironment(in:adding:)`` gives (no SIGNET_* secrets,
/// the default vault location inside the folder).
final class Sandbox: Sendable {
    /// The scratch folder (removed when the sandbox goes away).
    let temporary: TemporaryFolder

    /// The scratch folder, where every program runs.
    var folder: URL { temporary.url }

    init() throws {
        temporary = try TemporaryFolder(prefix: "signet-cli")
    }

    /// The path of `name` inside the sandbox.
    func path(_ name: String) -> String { temporary.file(name) }

    /// Writes a file into the sandbox and returns its path.
    @discardableResult
    func write(_ name: String, _ content: String) throws -> String { try temporary.write(name, content) }

    @discardableResult
    func write(_ name: String, _ data: Data) throws -> String { try temporary.write(name, data) }

    func read(_ name: String) throws -> Data { try temporary.readData(name) }

    func readText(_ name: String) throws -> String { try temporary.readText(name) }

    func exists(_ name: String) -> Bool { temporary.exists(name) }

    /// The permission bits of a file.
    func mode(_ name: String) throws -> Int { try temporary.permissions(name) }

    /// Runs the signet binary under test.
    func signet(_ arguments: String..., stdin: Data? = nil, environment: [String: String] = [:]) throws -> RunResult {
        try run(SignetBinary.path, arguments, stdin: stdin, environment: environment)
    }

    func signet(arguments: [String], stdin: Data? = nil, environment: [String: String] = [:]) throws -> RunResult {
        try run(SignetBinary.path, arguments, stdin: stdin, environment: environment)
    }

    /// Runs a peer tool found on PATH.
    func tool(_ name: String, _ arguments: String..., stdin: Data? = nil) throws -> RunResult {
        try run(try #require(ProcessRunner.which(name), "\(name) is not installed (Scripts/test installs it)"), arguments, stdin: stdin)
    }

    /// Runs a peer tool and requires it to succeed.
    @discardableResult
    func must(_ name: String, _ arguments: String..., stdin: Data? = nil) throws -> RunResult {
        let result = try run(try #require(ProcessRunner.which(name), "\(name) is not installed"), arguments, stdin: stdin)
        try #require(result.status == 0, "\(name) \(arguments.joined(separator: " ")) failed: \(result)")
        return result
    }

    /// Runs a shell pipeline in the sandbox and requires it to succeed.
    @discardableResult
    func shell(_ script: String) throws -> RunResult {
        let result = try run("/bin/sh", ["-c", script], stdin: nil)
        try #require(result.status == 0, "sh -c \(script) failed: \(result)")
        return result
    }

    /// Runs `executable` in the sandbox folder, in the sandbox's environment plus `environment`.
    func run(_ executable: String, _ arguments: [String], stdin: Data?, environment: [String: String] = [:]) throws -> RunResult {
        try ProcessRunner.run(
            executable, arguments, stdin: stdin, in: folder,
            environment: SignetBinary.isolatedEnvironment(in: folder, adding: environment))
    }
}

/// Key types and their default algorithms, as the CLI names them.
enum KeyTypes {
    static let all = ["rsa2048", "p256", "p384", "ed25519"]
}
