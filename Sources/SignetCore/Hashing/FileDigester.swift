/// Hashes files and standard input in constant memory, one or many at a time.
public enum FileDigester {
    /// Called with the number of bytes just processed; used for progress bars.
    public typealias Progress = @Sendable (Int) -> Void

    /// Hashes the file at `path` (`-` for standard input) in chunks.
    public static func digest(
        path: String, algorithm: DigestAlgorithm, progress: Progress? = nil
    ) throws -> MessageDigest {
        try digest(input: FileInput(path: path), algorithm: algorithm, progress: progress)
    }

    /// Hashes everything `input` yields.
    public static func digest(
        input: FileInput, algorithm: DigestAlgorithm, progress: Progress? = nil
    ) throws -> MessageDigest {
        var hasher = algorithm.makeHasher()
        try input.stream(progress: progress) { hasher.update(bufferPointer: $0) }
        return hasher.finalize()
    }

    /// Hashes several files concurrently (up to `concurrency` at once, by default one per
    /// core) and hands each result to `onResult` in the order of `paths`, as soon as it and
    /// all results before it are known.
    public static func digest(
        paths: [String],
        algorithm: DigestAlgorithm,
        concurrency: Int = SystemInfo.activeProcessorCount,
        progress: Progress? = nil,
        onResult: (Int, Result<MessageDigest, any Error>) -> Void
    ) async {
        await digest(jobs: paths.map { ($0, algorithm) }, concurrency: concurrency, progress: progress, onResult: onResult)
    }

    /// Hashes each file with its own algorithm, concurrently, reporting results in order
    /// (as ``digest(paths:algorithm:concurrency:progress:onResult:)``).
    public static func digest(
        jobs: [(path: String, algorithm: DigestAlgorithm)],
        concurrency: Int = SystemInfo.activeProcessorCount,
        progress: Progress? = nil,
        onResult: (Int, Result<MessageDigest, any Error>) -> Void
    ) async {
        let width = max(1, concurrency)
        await withTaskGroup(of: (Int, Result<MessageDigest, any Error>).self) { group in
            var next = 0
            var pending: [Int: Result<MessageDigest, any Error>] = [:]
            var emitted = 0
            func launch(_ index: Int) {
                let (path, algorithm) = jobs[index]
                group.addTask {
                    do {
                        return (index, .success(try digest(path: path, algorithm: algorithm, progress: progress)))
                    } catch {
                        return (index, .failure(error))
                    }
                }
            }
            while next < jobs.count, next < width {
                launch(next)
                next += 1
            }
            for await (index, result) in group {
                pending[index] = result
                while let ready = pending.removeValue(forKey: emitted) {
                    onResult(emitted, ready)
                    emitted += 1
                }
                if next < jobs.count {
                    launch(next)
                    next += 1
                }
            }
        }
    }
}

/// Facts about the machine that sizing decisions need.
public enum SystemInfo {
    /// The number of cores available to this process.
    public static var activeProcessorCount: Int {
        #if canImport(Glibc)
        return max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        #else
        return max(1, ProcessInfo.processInfo.activeProcessorCount)
        #endif
    }
}

#if canImport(Glibc)
import Glibc
#else
import Foundation
#endif
