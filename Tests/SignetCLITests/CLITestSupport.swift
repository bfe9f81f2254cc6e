import Foundation
import Testing

/// The outcome of running a program.
struct RunResult: CustomStringConvertible {
    var status: Int32
    var stdout: Data
    var stderr: String

    var out: String { String(decoding: stdout, as: UTF8.self) }
    var description: String { "exit \(status)\nstdout: \(out)\nstderr: \(stderr)" }
}

/// Runs `signet` and peer tools (openssl, ssh-keygen, sha256sum) inside a scratch folder.
final class Sandbox: @unchecked Sendable {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    /// The path of `name` inside the sandbox.
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// Writes a file into the sandbox and returns its path.
    @discardableResult
    func write(_ name: String, _ content: String) throws -> String {
        try write(name, Data(content.utf8))
    }

    @discardableResult
    func write(_ name: String, _ data: Data) throws -> String {
        try data.write(to: URL(fileURLWithPath: path(name)))
        return path(name)
    }

    func read(_ name: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path(name))) }

    func readText(_ name: String) throws -> String { String(decoding: try read(name), as: UTF8.self) }

    func exists(_ name: String) -> Bool { FileManager.default.fileExists(atPath: path(name)) }

    /// The permission bits of a file.
    func mode(_ name: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path(name))
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    /// Runs the signet binary under test.
    func signet(_ arguments: String..., stdin: Data? = nil, environment: [String: String] = [:]) throws -> RunResult {
        try run(Self.signetBinary, arguments, stdin: stdin, environment: environment)
    }

    func signet(arguments: [String], stdin: Data? = nil, environment: [String: String] = [:]) throws -> RunResult {
        try run(Self.signetBinary, arguments, stdin: stdin, environment: environment)
    }

    /// Runs a peer tool found on PATH.
    func tool(_ name: String, _ arguments: String..., stdin: Data? = nil) throws -> RunResult {
        try run(try #require(Self.which(name), "\(name) is not installed (Scripts/test installs it)"), arguments, stdin: stdin)
    }

    /// Runs a peer tool and requires it to succeed.
    @discardableResult
    func must(_ name: String, _ arguments: String..., stdin: Data? = nil) throws -> RunResult {
        let result = try run(try #require(Self.which(name), "\(name) is not installed"), arguments, stdin: stdin)
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

    func run(_ executable: String, _ arguments: [String], stdin: Data?, environment: [String: String] = [:]) throws -> RunResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = folder
        var env = ProcessInfo.processInfo.environment
        env["SIGNET_PASSPHRASE"] = nil
        env["SIGNET_HMAC_KEY"] = nil
        env["SIGNET_VAULT"] = nil
        // The default vault location must never be the tester's own.
        env["XDG_DATA_HOME"] = folder.appendingPathComponent("xdg-data").path
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let outURL = folder.appendingPathComponent(".out-\(UUID().uuidString)")
        let errURL = folder.appendingPathComponent(".err-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: outURL)
            try? FileManager.default.removeItem(at: errURL)
        }
        let outHandle = try FileHandle(forWritingTo: outURL)
        let errHandle = try FileHandle(forWritingTo: errURL)
        process.standardOutput = outHandle
        process.standardError = errHandle
        var inURL: URL?
        if let stdin {
            let url = folder.appendingPathComponent(".in-\(UUID().uuidString)")
            try stdin.write(to: url)
            process.standardInput = try FileHandle(forReadingFrom: url)
            inURL = url
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        defer { if let inURL { try? FileManager.default.removeItem(at: inURL) } }
        try process.run()
        process.waitUntilExit()
        try outHandle.close()
        try errHandle.close()
        let status = process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        return RunResult(status: status, stdout: try Data(contentsOf: outURL),
                         stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }

    /// The `signet` executable built next to this test bundle (or `SIGNET_BIN`).
    static let signetBinary: String = {
        if let override = ProcessInfo.processInfo.environment["SIGNET_BIN"] { return override }
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        var folder = URL(fileURLWithPath: executable).deletingLastPathComponent()
        // On macOS the test bundle is a folder: walk up to the products folder.
        while !FileManager.default.isExecutableFile(atPath: folder.appendingPathComponent("signet").path), folder.path != "/" {
            folder.deleteLastPathComponent()
        }
        return folder.appendingPathComponent("signet").path
    }()

    static func which(_ name: String) -> String? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}

/// Key types and their default algorithms, as the CLI names them.
enum KeyTypes {
    static let all = ["rsa2048", "p256", "p384", "ed25519"]
}
