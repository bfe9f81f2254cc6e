import Foundation

/// The `signet` executable under test, and running it cut off from the tester's own secrets and vault.
public enum SignetBinary {
    /// The `signet` executable built next to the test bundle (`.build/debug/signet`), or `SIGNET_BIN` when set.
    public static let path: String = {
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

    /// This process's environment without `SIGNET_PASSPHRASE`, `SIGNET_HMAC_KEY` and `SIGNET_VAULT`, with `XDG_DATA_HOME` inside `folder`, then `extra`.
    public static func isolatedEnvironment(in folder: URL, adding extra: [String: String] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["SIGNET_PASSPHRASE"] = nil
        environment["SIGNET_HMAC_KEY"] = nil
        environment["SIGNET_VAULT"] = nil
        // The default vault location must never be the tester's own, nor its connection profiles.
        environment["XDG_DATA_HOME"] = folder.appendingPathComponent("xdg-data").path
        environment["XDG_CONFIG_HOME"] = folder.appendingPathComponent("xdg-config").path
        environment["SIGNET_PROFILE"] = nil
        for (key, value) in extra { environment[key] = value }
        return environment
    }

    /// Runs signet with `arguments` in `folder`, in ``isolatedEnvironment(in:adding:)`` plus `environment`.
    public static func run(
        _ arguments: [String], in folder: URL, stdin: Data? = nil, environment: [String: String] = [:]
    ) throws -> RunResult {
        try ProcessRunner.run(
            path, arguments, stdin: stdin, in: folder, environment: isolatedEnvironment(in: folder, adding: environment))
    }

    /// ``run(_:in:stdin:environment:)`` without blocking a thread while signet runs (for a server in this process).
    public static func runAsync(
        _ arguments: [String], in folder: URL, stdin: Data? = nil, environment: [String: String] = [:]
    ) async throws -> RunResult {
        try await ProcessRunner.runAsync(
            path, arguments, stdin: stdin, in: folder, environment: isolatedEnvironment(in: folder, adding: environment))
    }
}
