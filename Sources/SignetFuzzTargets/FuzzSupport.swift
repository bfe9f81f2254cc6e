import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A list of targets as each group declares it.
typealias TargetList = [(name: String, run: FuzzTargets.Run)]

/// Small helpers shared by the targets.
enum Fuzz {
    /// The input as text, as a parser that takes a `String` sees a file (invalid UTF-8
    /// replaced).
    static func text(_ bytes: [UInt8]) -> String {
        String(decoding: bytes, as: UTF8.self)
    }

    /// Fails the run (a finding) when an invariant does not hold.
    static func require(_ condition: Bool, _ target: String, _ message: @autoclosure () -> String) {
        if !condition {
            preconditionFailure("\(target): invariant broken: \(message())")
        }
    }

    /// The input split at every `separator` byte into at most `limit` parts (the last part
    /// keeps any further separators).
    static func parts(_ bytes: [UInt8], separator: UInt8, limit: Int) -> [[UInt8]] {
        bytes.split(separator: separator, maxSplits: max(0, limit - 1), omittingEmptySubsequences: false).map(Array.init)
    }
}

/// One scratch file per process and target, for parsers that read a path (the zip reader
/// uses `pread`): in `/dev/shm` when it is writable, else in `TMPDIR` or `/tmp`. The files are
/// removed when the process exits normally.
enum ScratchFile {
    private static let lock = Mutex(())

    private static let folder: String = {
        if access("/dev/shm", W_OK) == 0 { return "/dev/shm" }
        let temporary = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        return temporary.hasSuffix("/") ? String(temporary.dropLast()) : temporary
    }()

    /// The names in use, so that the exit handler can remove them.
    static let names = ["zip", "bundle"]

    private static func path(_ name: String) -> String {
        "\(folder)/signet-fuzz-\(getpid())-\(name).zip"
    }

    private static let removeAtExit: Void = {
        _ = atexit {
            for name in ScratchFile.names { _ = unlink(ScratchFile.path(name)) }
        }
    }()

    /// Writes `contents` to the scratch file `name` (one of ``names``) and runs `body` with
    /// its path, one caller at a time.
    static func with(_ name: String, contents: [UInt8], _ body: (String) -> Void) {
        _ = removeAtExit
        lock.withLock { _ in
            let file = Self.path(name)
            guard store(contents, to: file) else {
                preconditionFailure("signet-fuzz: cannot write the scratch file \(file) (errno \(errno))")
            }
            body(file)
        }
    }

    private static func store(_ bytes: [UInt8], to path: String) -> Bool {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var done = 0
        while done < bytes.count {
            let count = bytes[done...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return false
            }
            done += count
        }
        return true
    }
}

/// Runs async work to completion from synchronous code (libFuzzer's callback, a replay
/// loop): the public verifiers are async.
enum Blocking {
    private final class Box<Value>: @unchecked Sendable {
        var value: Value?
    }

    static func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> Result<T, any Error> {
        let semaphore = DispatchSemaphore(value: 0)
        let box = Box<Result<T, any Error>>()
        Task.detached {
            do {
                box.value = .success(try await body())
            } catch {
                box.value = .failure(error)
            }
            semaphore.signal()
        }
        semaphore.wait()
        return box.value!
    }
}
