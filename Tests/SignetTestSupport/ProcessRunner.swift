import Foundation

/// What a finished program did: its exit status and what it wrote.
public struct RunResult: Sendable, CustomStringConvertible {
    /// The exit status; 128 + the signal number when a signal ended the program.
    public var status: Int32
    /// Everything the program wrote to standard output.
    public var stdout: Data
    /// Everything the program wrote to standard error, decoded as UTF-8.
    public var stderr: String

    /// A result made of its parts.
    public init(status: Int32, stdout: Data, stderr: String) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
    }

    /// Standard output decoded as UTF-8.
    public var out: String { String(decoding: stdout, as: UTF8.self) }

    /// The status and both outputs, for failure messages.
    public var description: String { "exit \(status)\nstdout: \(out)\nstderr: \(stderr)" }
}

/// Runs a program to its end with standard input from a file (or /dev/null) and its two outputs captured in temporary files.
public enum ProcessRunner {
    /// Runs `executable` with `arguments` in `directory` (the current one when nil) and waits for it; `environment` replaces the inherited one when given.
    public static func run(
        _ executable: String, _ arguments: [String], stdin: Data? = nil, in directory: URL? = nil,
        environment: [String: String]? = nil
    ) throws -> RunResult {
        let launch = try Launch(stdin: stdin)
        defer { launch.cleanUp() }
        let child = try launch.start(executable, arguments, in: directory, environment: environment)
        return try launch.result(status: child.waitUntilExit())
    }

    /// ``run(_:_:stdin:in:environment:)`` without blocking a thread while the program runs (for programs that talk to a server in this process).
    public static func runAsync(
        _ executable: String, _ arguments: [String], stdin: Data? = nil, in directory: URL? = nil,
        environment: [String: String]? = nil
    ) async throws -> RunResult {
        let launch = try Launch(stdin: stdin)
        defer { launch.cleanUp() }
        let child = try launch.start(executable, arguments, in: directory, environment: environment)
        // No hang guard here, as with `run`: the callers' programs end by themselves.
        guard let status = try await child.exit(before: .now + .seconds(86_400)) else {
            throw ChildProcessError(description: "\(executable) ran for a day")
        }
        return try launch.result(status: status)
    }

    /// The first executable called `name` in the folders of `PATH`, or nil when there is none.
    public static func which(_ name: String) -> String? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}

/// The files that carry one run's standard streams, in the system's temporary folder (files,
/// not pipes: a pipe that is not read while the program runs can fill up and stall it).
private final class Launch {
    let outURL: URL
    let errURL: URL
    let inURL: URL?

    init(stdin: Data?) throws {
        let folder = FileManager.default.temporaryDirectory
        outURL = folder.appendingPathComponent(".out-\(UUID().uuidString)")
        errURL = folder.appendingPathComponent(".err-\(UUID().uuidString)")
        if let stdin {
            let url = folder.appendingPathComponent(".in-\(UUID().uuidString)")
            inURL = url
            try stdin.write(to: url)
        } else {
            inURL = nil
        }
    }

    func start(_ executable: String, _ arguments: [String], in directory: URL?, environment: [String: String]?) throws -> ChildProcess {
        try ChildProcess(
            executable, arguments, in: directory, environment: environment, stdin: inURL.map { .file($0) } ?? .null,
            stdout: .file(outURL), stderr: .file(errURL))
    }

    /// Reads the outputs; call once the process has ended with `status`.
    func result(status: Int32) throws -> RunResult {
        RunResult(
            status: status, stdout: try Data(contentsOf: outURL),
            stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }

    /// Removes the files.
    func cleanUp() {
        for case let url? in [outURL, errURL, inURL] { try? FileManager.default.removeItem(at: url) }
    }
}
