import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A program started with `posix_spawn` that inherits nothing but its three standard streams,
/// and is waited for with `waitpid` — not Foundation's `Process`.
///
/// Foundation's `Process` on Linux learns that a child ended when a socket the child inherited
/// reaches end-of-file. That socket is made without close-on-exec, so a program another test
/// starts at the same moment can inherit it too: the first child's end is then noticed only
/// when the second one ends. A server started beside a short command kept the command
/// "running" for minutes, and a test that froze its child with SIGSTOP could wait on a zombie
/// until its hang guard ran out (CI, 2026-12-07). Here every child's descriptors from 3 up are
/// closed at spawn, ours are close-on-exec, and the end is read from the kernel.
public final class ChildProcess: @unchecked Sendable {
    /// Where a standard stream comes from or goes to.
    public enum Stream: Sendable {
        /// /dev/null.
        case null
        /// A file: read from for standard input; created or emptied and written for the outputs
        /// (one file named for both outputs is opened once, so they interleave).
        case file(URL)
        /// Standard input only: a pipe whose writing end is ``input``.
        case pipe
    }

    /// The child's process ID.
    public let processIdentifier: Int32
    /// The writing end of the child's standard input when it was `.pipe`.
    public let input: FileHandle?

    private let lock = NSLock()
    private var status: Int32?
    private var signal: Int32?

    /// The signal that ended the child, nil while it runs or when it exited by itself (then
    /// ``exitStatus`` is the code it chose: a program that catches SIGTERM and exits with 143
    /// is told apart from one SIGTERM killed).
    public var terminationSignal: Int32? {
        lock.lock()
        defer { lock.unlock() }
        reapLocked(blocking: false)
        return signal
    }

    /// A write to a pipe whose reader has gone fails with EPIPE instead of killing the test
    /// process; children get the default action back (``spawn``).
    private static let ignoreBrokenPipes: Void = { _ = Glibc.signal(SIGPIPE, SIG_IGN) }()

    /// Starts `executable` with `arguments` in `directory` (this process's when nil), with
    /// `environment` (this process's when nil) and the three streams.
    public init(
        _ executable: String, _ arguments: [String], in directory: URL? = nil, environment: [String: String]? = nil,
        stdin: Stream = .null, stdout: Stream = .null, stderr: Stream = .null
    ) throws {
        Self.ignoreBrokenPipes
        var opened: [Int32] = []
        var writer: Int32? = nil
        defer { for descriptor in opened { close(descriptor) } }
        // Until the child has it, the pipe's writing end is ours to close on any failure.
        var spawned = false
        defer { if !spawned, let writer { close(writer) } }
        func open(_ path: String, _ flags: Int32) throws -> Int32 {
            let descriptor = Glibc.open(path, flags | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { throw ChildProcessError(description: "\(path): \(String(cString: strerror(errno)))") }
            opened.append(descriptor)
            return descriptor
        }
        let inputDescriptor: Int32
        switch stdin {
        case .null: inputDescriptor = try open("/dev/null", O_RDONLY)
        case .file(let url): inputDescriptor = try open(url.path, O_RDONLY)
        case .pipe:
            var ends: [Int32] = [-1, -1]
            guard GNU.pipe2(&ends, O_CLOEXEC) == 0 else { throw ChildProcessError(description: "pipe: \(String(cString: strerror(errno)))") }
            opened.append(ends[0])
            writer = ends[1]
            inputDescriptor = ends[0]
        }
        func output(_ stream: Stream) throws -> Int32 {
            switch stream {
            case .pipe: throw ChildProcessError(description: "a pipe is for standard input only")
            case .null: return try open("/dev/null", O_WRONLY)
            case .file(let url): return try open(url.path, O_WRONLY | O_CREAT | O_TRUNC)
            }
        }
        let outputDescriptor = try output(stdout)
        let errorDescriptor: Int32
        if case .file(let a) = stdout, case .file(let b) = stderr, a.standardizedFileURL == b.standardizedFileURL {
            errorDescriptor = outputDescriptor
        } else {
            errorDescriptor = try output(stderr)
        }
        processIdentifier = try Self.spawn(
            executable, arguments, in: directory, environment: environment ?? ProcessInfo.processInfo.environment,
            streams: (inputDescriptor, outputDescriptor, errorDescriptor))
        spawned = true
        input = writer.map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
    }

    deinit {
        // Never leave a zombie behind: a child still running is killed and reaped.
        if isRunning {
            send(SIGKILL)
            _ = waitUntilExit()
        }
    }

    private static func spawn(
        _ executable: String, _ arguments: [String], in directory: URL?, environment: [String: String], streams: (Int32, Int32, Int32)
    ) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, streams.0, 0)
        posix_spawn_file_actions_adddup2(&actions, streams.1, 1)
        posix_spawn_file_actions_adddup2(&actions, streams.2, 2)
        guard GNU.addclosefrom(&actions, 3) == 0, directory.map({ GNU.addchdir(&actions, $0.path) == 0 }) ?? true else {
            throw ChildProcessError(description: "posix_spawn file actions for \(executable) could not be set")
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // A process group of its own, as Foundation gives: a ^C meant for the tests is not its.
        posix_spawnattr_setpgroup(&attributes, 0)
        // No signal blocked, and the ones a test process may ignore back to their defaults: the
        // spawning thread may be one of Swift's, which block nearly every signal, and the
        // interrupt tests need the child to receive its SIGTERM.
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        // The child changes folder before it runs the program: a relative path is made whole first.
        let executable = executable.hasPrefix("/") ? executable : FileManager.default.currentDirectoryPath + "/" + executable
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard result == 0 else { throw ChildProcessError(description: "\(executable): \(String(cString: strerror(result)))") }
        return pid
    }

    /// Reaps the child if it has ended; the lock is held.
    private func reapLocked(blocking: Bool) {
        guard status == nil else { return }
        var raw: Int32 = 0
        var result: pid_t
        repeat { result = waitpid(processIdentifier, &raw, blocking ? 0 : WNOHANG) } while result == -1 && errno == EINTR
        if result == -1, errno == ECHILD {
            // Reaped by somebody else: ended, with a status nobody can know any more.
            status = -1
            return
        }
        guard result == processIdentifier else { return }
        // WIFSIGNALED / WEXITSTATUS, which Swift does not import.
        let number = raw & 0x7f
        status = number == 0 ? (raw >> 8) & 0xff : 128 + number
        signal = number == 0 ? nil : number
    }

    /// Whether the child has not ended yet (a child that has ended is reaped now).
    public var isRunning: Bool { exitStatus == nil }

    /// The exit status once the child has ended — 128 + the signal's number when a signal ended
    /// it — or nil while it runs.
    public var exitStatus: Int32? {
        lock.lock()
        defer { lock.unlock() }
        reapLocked(blocking: false)
        return status
    }

    /// Sends `signal`, unless the child has been reaped (its ID may belong to another process by then).
    public func send(_ signal: Int32) {
        lock.lock()
        defer { lock.unlock() }
        if status == nil { kill(processIdentifier, signal) }
    }

    /// Blocks this thread until the child ends; returns its exit status.
    @discardableResult
    public func waitUntilExit() -> Int32 {
        // Reaped already: its ID may be another child's by now.
        if let status = exitStatus { return status }
        // Wait without reaping, so that the reaping happens under the lock, once.
        var info = siginfo_t()
        var result: Int32
        repeat { result = waitid(P_PID, id_t(processIdentifier), &info, WEXITED | WNOWAIT) } while result == -1 && errno == EINTR
        lock.lock()
        defer { lock.unlock() }
        reapLocked(blocking: true)
        return status ?? -1
    }

    /// Blocks this thread until the child ends or `deadline` passes (a hang guard); returns the
    /// exit status, or nil when the deadline came first.
    public func waitUntilExit(before deadline: ContinuousClock.Instant) -> Int32? {
        var pause: UInt32 = 1000
        while true {
            if let status = exitStatus { return status }
            guard ContinuousClock.now < deadline else { return nil }
            usleep(pause)
            pause = min(pause * 2, 50_000)
        }
    }

    /// Waits without blocking a thread until the child ends or `deadline` passes (a hang
    /// guard); returns the exit status, or nil when the deadline came first.
    public func exit(before deadline: ContinuousClock.Instant = TestTimeouts.deadline) async throws -> Int32? {
        var pause = Duration.milliseconds(2)
        while true {
            if let status = exitStatus { return status }
            guard ContinuousClock.now < deadline else { return nil }
            try await Task.sleep(for: pause)
            pause = min(pause * 2, .milliseconds(50))
        }
    }
}

/// glibc's GNU extensions, which Swift's Glibc module does not declare (they need _GNU_SOURCE):
/// looked up once by name (glibc 2.34 or later has all three).
private enum GNU {
    typealias Actions = UnsafeMutablePointer<posix_spawn_file_actions_t>
    static let pipe2 = function("pipe2", as: (@convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32).self)
    static let addclosefrom = function("posix_spawn_file_actions_addclosefrom_np", as: (@convention(c) (Actions, Int32) -> Int32).self)
    static let addchdir = function("posix_spawn_file_actions_addchdir_np", as: (@convention(c) (Actions, UnsafePointer<CChar>) -> Int32).self)

    static func function<F>(_ name: String, as type: F.Type) -> F {
        guard let symbol = dlsym(nil, name) else { fatalError("\(name) is missing from this C library (glibc 2.34 or later has it)") }
        return unsafeBitCast(symbol, to: type)
    }
}

/// A program could not be started.
public struct ChildProcessError: Error, CustomStringConvertible {
    /// What went wrong, naming the file.
    public var description: String
}
