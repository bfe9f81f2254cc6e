import Foundation
import Testing

/// Runs python3 (from `PATH`; Scripts/test installs it with `cryptography`) as an independent implementation to check against.
public enum Python {
    /// The path of python3; records an issue and throws when it is not installed.
    public static func executable(sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        try #require(
            ProcessRunner.which("python3"), "python3 is not installed (Scripts/test installs it)", sourceLocation: sourceLocation)
    }

    /// Runs `python3 -c program arguments…` and returns what it did, whatever its exit status.
    public static func run(
        _ program: String, _ arguments: [String] = [], stdin: Data? = nil, in directory: URL? = nil,
        environment: [String: String]? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> RunResult {
        try ProcessRunner.run(
            try executable(sourceLocation: sourceLocation), ["-c", program] + arguments, stdin: stdin, in: directory,
            environment: environment)
    }

    /// Runs `python3 -c program arguments…` and requires it to exit 0.
    @discardableResult
    public static func runOK(
        _ program: String, _ arguments: [String] = [], stdin: Data? = nil, in directory: URL? = nil,
        environment: [String: String]? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> RunResult {
        let result = try run(
            program, arguments, stdin: stdin, in: directory, environment: environment, sourceLocation: sourceLocation)
        try #require(result.status == 0, "python3 failed: \(result)", sourceLocation: sourceLocation)
        return result
    }

    /// Runs the python3 script file `script` with `arguments` and returns what it did, whatever its exit status.
    public static func runScript(
        _ script: URL, _ arguments: [String] = [], in directory: URL? = nil, environment: [String: String]? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> RunResult {
        try ProcessRunner.run(
            try executable(sourceLocation: sourceLocation), [script.path] + arguments, in: directory, environment: environment)
    }
}
