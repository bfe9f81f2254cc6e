import Dispatch
import Foundation
import Glibc
import Synchronization

// Child processes for the driver: posix_spawn with the streams redirected, each child in a
// process group of its own (so that a server's whole tree can be stopped), no signal blocked
// and every disposition the default (the driver ignores SIGINT and SIGTERM itself, and an
// ignored disposition would be inherited). Every child is registered until it is reaped:
// on Ctrl-C, SIGTERM, an error or the end of the run, `Registry.shutDown` ends them all, stops
// the temporary PostgreSQL and removes the temporary folder, as Scripts/bench's trap did.

/// Where a child's standard stream goes.
enum Redirect {
    case null
    case inherit
    case file(String)        // created or truncated
    case sameAsStdout        // stderr only: 2>&1
    case terminal(String)    // the slave side of a pty, which becomes the child's controlling terminal
}

/// How a child ended.
struct ExitStatus {
    let raw: Int32
    /// The shell's `$?`: the exit code, or 128 + the signal that killed it.
    var code: Int32 { raw & 0x7f == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f) }
    var succeeded: Bool { raw == 0 }
}

/// The temporary PostgreSQL, for the shutdown.
struct PostgresCluster: Sendable {
    let binaries: String
    let data: String
    let pid: pid_t
}

/// Everything the driver has started and must stop, shared with the signal handlers.
final class Registry: Sendable {
    struct State {
        var children: [pid_t: String] = [:]
        var timedOut: Set<pid_t> = []
        var temporaryFolder: String?
        var postgres: PostgresCluster?
        var shuttingDown = false
    }
    let state = Mutex(State())

    /// Takes SIGINT and SIGTERM: both end every child, clean up and exit 130 or 143.
    func handleSignals() {
        for (signalNumber, status) in [(SIGINT, Int32(130)), (SIGTERM, Int32(143))] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { [self] in
                FileHandle.standardError.write(Data("bench: \(signalNumber == SIGINT ? "interrupted" : "terminated"): stopping\n".utf8))
                shutDown(status: status)
            }
            source.resume()
            signalSources.append(source)
        }
    }

    /// Ends every child (their process groups), stops PostgreSQL, removes the temporary
    /// folder and exits with `status`. A second caller (another thread) waits for the first.
    func shutDown(status: Int32) -> Never {
        let first = state.withLock { state in
            defer { state.shuttingDown = true }
            return !state.shuttingDown
        }
        guard first else { parkForever() }
        let (children, postgres, folder) = state.withLock { ($0.children, $0.postgres, $0.temporaryFolder) }
        // The servers first (they may be connected to PostgreSQL), then PostgreSQL, then the files.
        let others = children.keys.filter { $0 != postgres?.pid }
        for pid in others { killpg(pid, SIGTERM) }
        for pid in others { reap(pid, within: 5) }
        if let postgres {
            stopPostgres(postgres)
        }
        if let folder { try? FileManager.default.removeItem(atPath: folder) }
        exit(status)
    }

    /// Stops the temporary PostgreSQL: `pg_ctl stop -m fast`, else a SIGTERM to its group.
    func stopPostgres(_ cluster: PostgresCluster) {
        var stop = ["\(cluster.binaries)/pg_ctl", "-D", cluster.data, "-m", "fast", "-w", "stop"]
        if geteuid() == 0 { stop = ["runuser", "-u", "postgres", "--"] + stop }
        if let pid = try? rawSpawn(stop, stdin: .null, stdout: .null, stderr: .null, directory: "/", duringShutdown: true) {
            reap(pid, within: 60)
        }
        killpg(cluster.pid, SIGTERM)
        reap(cluster.pid, within: 10)
        state.withLock { $0.postgres = nil }
    }

    /// Waits up to `seconds` for `pid` to end (if this thread may still reap it), then kills its
    /// group; unregisters it.
    private func reap(_ pid: pid_t, within seconds: Double) {
        defer { remove(pid) }
        let deadline = monotonicMicroseconds() + Int(seconds * 1e6)
        var status: Int32 = 0
        while monotonicMicroseconds() < deadline {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid || (result < 0 && errno == ECHILD) { return }
            usleep(10_000)
        }
        killpg(pid, SIGKILL)
        _ = waitpid(pid, &status, 0)
    }

    func add(_ pid: pid_t, _ command: String) { state.withLock { $0.children[pid] = command } }
    func remove(_ pid: pid_t) { state.withLock { $0.children[pid] = nil } }

    /// Called by a child's hang guard: kills the child's group if it is still running.
    func timeOut(_ pid: pid_t) {
        state.withLock { state in
            guard state.children[pid] != nil else { return }
            state.timedOut.insert(pid)
            killpg(pid, SIGKILL)
        }
    }

    func wasTimedOut(_ pid: pid_t) -> Bool { state.withLock { $0.timedOut.remove(pid) != nil } }
    var isShuttingDown: Bool { state.withLock { $0.shuttingDown } }
}

/// The one registry of this process.
let registry = Registry()

/// The signal sources, kept for the life of the process (set once, on the main thread, before
/// anything else runs).
nonisolated(unsafe) private var signalSources: [any DispatchSourceSignal] = []

/// Blocks this thread for good: another thread is shutting the process down.
func parkForever() -> Never {
    while true { sleep(1000) }
}

/// Microseconds on the monotonic clock.
func monotonicMicroseconds() -> Int {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return now.tv_sec * 1_000_000 + now.tv_nsec / 1000
}

struct SpawnError: Error, CustomStringConvertible {
    var description: String
}

/// `posix_spawn_file_actions_addchdir_np` (glibc 2.29), which Swift's Glibc module does not show.
private typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, UnsafePointer<CChar>?) -> Int32
private let addChdir: AddChdir? = dlsym(nil, "posix_spawn_file_actions_addchdir_np").map {
    unsafeBitCast($0, to: AddChdir.self)
}

/// Starts `arguments` (looked up in PATH), registered, in a process group of its own, or in a
/// session of its own with `terminal` as its controlling terminal when a stream is `.terminal`.
/// `environment` adds to (or replaces in) the driver's own. Once the process is shutting down,
/// only the shutdown itself may start anything (any other caller waits for the exit).
func rawSpawn(
    _ arguments: [String], stdin: Redirect, stdout: Redirect, stderr: Redirect,
    environment: [String: String] = [:], directory: String? = nil, duringShutdown: Bool = false
) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }

    var ownsTerminal = false
    for (fd, redirect) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
        switch redirect {
        case .inherit: break
        case .null: posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
        case .file(let path): posix_spawn_file_actions_addopen(&actions, fd, path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        case .sameAsStdout: posix_spawn_file_actions_adddup2(&actions, 1, fd)
        case .terminal(let path):
            ownsTerminal = true
            if fd == 0 { posix_spawn_file_actions_addopen(&actions, 0, path, O_RDWR, 0) } else { posix_spawn_file_actions_adddup2(&actions, 0, fd) }
        }
    }
    if let directory, let addChdir { _ = addChdir(&actions, directory) }

    var none = sigset_t()
    sigemptyset(&none)
    posix_spawnattr_setsigmask(&attributes, &none)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for number in 1..<32 where number != SIGKILL && number != SIGSTOP { sigaddset(&defaults, Int32(number)) }
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    // POSIX_SPAWN_SETSID (0x80, glibc 2.26) is hidden from Swift like addchdir: setsid() runs before
    // the file actions, so opening the terminal then makes it the controlling one.
    let group = ownsTerminal ? Int32(0x80) : Int32(POSIX_SPAWN_SETPGROUP)
    posix_spawnattr_setflags(&attributes, Int16(group | Int32(POSIX_SPAWN_SETSIGMASK) | Int32(POSIX_SPAWN_SETSIGDEF)))
    posix_spawnattr_setpgroup(&attributes, 0)

    var merged = ProcessInfo.processInfo.environment
    for (name, value) in environment { merged[name] = value }
    let argv = arguments.map { strdup($0) } + [nil]
    let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
        for pointer in argv { free(pointer) }
        for pointer in envp { free(pointer) }
    }
    if registry.isShuttingDown && !duringShutdown { parkForever() }
    var pid: pid_t = 0
    let result = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp)
    guard result == 0 else {
        throw SpawnError(description: "cannot run \(arguments[0]): \(String(cString: strerror(result)))")
    }
    registry.add(pid, arguments.joined(separator: " "))
    return pid
}

/// Waits for `pid` to end, killing its group after `timeout` seconds (a hang guard), and
/// unregisters it. Returns nil when the hang guard fired.
func waitForChild(_ pid: pid_t, timeout: Double) -> ExitStatus? {
    let guardItem = DispatchWorkItem { registry.timeOut(pid) }
    DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: guardItem)
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
        if errno == EINTR { continue }
        if registry.isShuttingDown { parkForever() }
        status = 0x7f  // reaped elsewhere: report as killed
        break
    }
    guardItem.cancel()
    if registry.isShuttingDown { parkForever() }
    registry.remove(pid)
    return registry.wasTimedOut(pid) ? nil : ExitStatus(raw: status)
}

/// Whether the child `pid` still runs; if it has ended it is reaped and unregistered.
func childIsRunning(_ pid: pid_t) -> Bool {
    var status: Int32 = 0
    let result = waitpid(pid, &status, WNOHANG)
    if result == 0 { return true }
    registry.remove(pid)
    return false
}

/// Stops a background child: SIGTERM to the process (as `kill PID` did), a SIGKILL to its group
/// after `grace` seconds, and waits for it.
func stopChild(_ pid: pid_t, grace: Double = 30) {
    kill(pid, SIGTERM)
    _ = waitForChild(pid, timeout: grace)
    killpg(pid, SIGKILL)  // anything of its group left behind
}
