import Foundation
import SignetTestSupport

/// A failure to make the corpus (openssl missing or failing).
public struct OpenSSLCorpusError: Error, Sendable, CustomStringConvertible {
    public let description: String

    public init(description: String) { self.description = description }
}

/// The `openssl` command, run in the corpus folder with its output in a file (read only when
/// it fails).
struct OpenSSLTool: Sendable {
    let executable: String
    let folder: URL

    /// The first `openssl` on `PATH`.
    static func locate() throws -> String {
        guard let path = ProcessRunner.which("openssl") else {
            throw OpenSSLCorpusError(description: "openssl is not installed (Scripts/test installs it)")
        }
        return path
    }

    /// Runs every command, at most `concurrency` at a time; throws the first failure.
    func runAll(_ commands: [[String]], concurrency: Int) async throws {
        guard !commands.isEmpty else { return }
        let tool = self
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = 0
            while next < min(max(concurrency, 1), commands.count) {
                let arguments = commands[next]
                next += 1
                group.addTask { try await tool.run(arguments) }
            }
            while try await group.next() != nil {
                if next < commands.count {
                    let arguments = commands[next]
                    next += 1
                    group.addTask { try await tool.run(arguments) }
                }
            }
        }
    }

    /// Runs `openssl arguments…` in the folder; throws with its output when it fails.
    func run(_ arguments: [String]) async throws {
        let result = try await ProcessRunner.runAsync(executable, arguments, in: folder)
        guard result.status == 0 else {
            throw OpenSSLCorpusError(description: "openssl \(arguments.joined(separator: " ")) exited with \(result.status): \(result.stderr)\(result.out)")
        }
    }
}
