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
        let launch = try Launch(executable, arguments, stdin: stdin, directory: directory, environment: environment)
        defer { launch.cleanUp() }
        try launch.process.run()
        launch.process.waitUntilExit()
        return try launch.result()
    }

    /// ``run(_:_:stdin:in:environment:)`` without blocking a thread while the program runs (for programs that talk to a server in this process).
    public static func runAsync(
        _ executable: String, _ arguments: [String], stdin: Data? = nil, in directory: URL? = nil,
        environment: [String: String]? = nil
    ) async throws -> RunResult {
        let launch = try Launch(executable, arguments, stdin: stdin, directory: directory, environment: environment)
        defer { launch.cleanUp() }
        let process = launch.process
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            process.terminationHandler = { _ in continuation.resume() }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        return try launch.result()
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

/// One configured, not yet started process and the files that carry its standard streams.
private final class Launch {
    let process: Process
    let outURL: URL
    let errURL: URL
    let inURL: URL?
    let outHandle: FileHandle
    let errHandle: FileHandle
    private var handlesClosed = false

    init(_ executable: String, _ arguments: [String], stdin: Data?, directory: URL?, environment: [String: String]?) throws {
        // Files, not pipes: a pipe that is not read while the program runs can fill up and stall it.
        // They live in the system's temporary folder, never in the program's working directory.
        let folder = FileManager.default.temporaryDirectory
        let outURL = folder.appendingPathComponent(".out-\(UUID().uuidString)")
        let errURL = folder.appendingPathComponent(".err-\(UUID().uuidString)")
        var inURL: URL? = nil
        let outHandle: FileHandle
        let errHandle: FileHandle
        let input: FileHandle
        do {
            _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
            _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
            if let stdin {
                let url = folder.appendingPathComponent(".in-\(UUID().uuidString)")
                inURL = url
                try stdin.write(to: url)
                input = try FileHandle(forReadingFrom: url)
            } else {
                input = FileHandle.nullDevice
            }
            outHandle = try FileHandle(forWritingTo: outURL)
            errHandle = try FileHandle(forWritingTo: errURL)
        } catch {
            Launch.remove([outURL, errURL, inURL])
            throw error
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        if let environment { process.environment = environment }
        process.standardOutput = outHandle
        process.standardError = errHandle
        process.standardInput = input
        self.process = process
        self.outURL = outURL
        self.errURL = errURL
        self.inURL = inURL
        self.outHandle = outHandle
        self.errHandle = errHandle
    }

    /// Closes the output files and reads them; call once the process has ended.
    func result() throws -> RunResult {
        try closeHandles()
        let status = process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        return RunResult(
            status: status, stdout: try Data(contentsOf: outURL),
            stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }

    /// Closes what is still open and removes the files.
    func cleanUp() {
        try? closeHandles()
        Launch.remove([outURL, errURL, inURL])
    }

    private func closeHandles() throws {
        guard !handlesClosed else { return }
        handlesClosed = true
        try outHandle.close()
        try errHandle.close()
    }

    private static func remove(_ urls: [URL?]) {
        for case let url? in urls { try? FileManager.default.removeItem(at: url) }
    }
}
