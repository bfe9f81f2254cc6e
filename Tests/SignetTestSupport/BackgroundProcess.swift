import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A program left running while a test talks to it (a server), its output in a log file that
/// the test reads; ``stop(signal:)`` ends it (and so does `deinit`, with SIGKILL).
public final class BackgroundProcess: @unchecked Sendable {
    /// The running process.
    public let process: ChildProcess
    /// Where its standard output and error go.
    public let log: URL
    private let lock = NSLock()
    private var stopped = false

    /// Starts `executable` with `arguments` in `directory`, both outputs into `log`.
    public init(_ executable: String, _ arguments: [String], in directory: URL, log: URL, environment: [String: String]? = nil) throws {
        self.log = log
        process = try ChildProcess(executable, arguments, in: directory, environment: environment, stdout: .file(log), stderr: .file(log))
    }

    deinit { stop(signal: SIGKILL) }

    /// Everything it wrote so far.
    public var output: String { String(decoding: (try? Data(contentsOf: log)) ?? Data(), as: UTF8.self) }

    /// The value of the first `name: value` line it wrote (`name` then `separator`), waiting at
    /// most `timeout` (a hang guard); nil when it exits first or the time runs out.
    public func waitForLine(_ name: String, separator: String = ": ", timeout: Duration = TestTimeouts.hangGuard) async throws -> String? {
        let deadline = ContinuousClock.now + timeout
        while true {
            // The output is read before the deadline is judged: a test starved of threads by a
            // loaded suite may wake long after the line came, and must still see it.
            for line in output.split(whereSeparator: \.isNewline) where line.hasPrefix(name + separator) {
                return String(line.dropFirst(name.count + separator.count))
            }
            guard process.isRunning, ContinuousClock.now < deadline else { return nil }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Sends `signal` (SIGTERM: a graceful stop; SIGKILL: a crash) and waits for the end; returns
    /// the exit status (128 + the signal when one ended it).
    @discardableResult
    public func stop(signal: Int32 = SIGTERM) -> Int32 {
        lock.lock()
        let first = !stopped
        stopped = true
        lock.unlock()
        if first { process.send(signal) }
        return process.waitUntilExit()
    }
}
