import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The temporary files this process is writing (``AtomicFileWriter``'s, a bundle's staging
/// folder), so that a program stopped by a signal can remove them before it exits: an
/// interrupted `decrypt -o` must not leave decrypted data behind under a hidden name.
package enum TemporaryFiles {
    private struct State {
        var next = 0
        var paths: [Int: (path: String, isFolder: Bool)] = [:]
    }

    private static let state = Mutex(State())

    /// Records `path` as in progress; the token given back unregisters it.
    package static func register(_ path: String, isFolder: Bool = false) -> Int {
        state.withLock { state in
            state.next += 1
            state.paths[state.next] = (path, isFolder)
            return state.next
        }
    }

    /// Forgets the path registered under `token` (committed, or removed by its owner).
    package static func unregister(_ token: Int) {
        _ = state.withLock { $0.paths.removeValue(forKey: token) }
    }

    /// Runs `body`, a step that creates or moves what is registered here (a temporary file or
    /// a staging folder, an entry inside one, the swap of a finished tree into place), so that
    /// a signal's cleanup (``takeAllForExit()``) finds it before the step or after it, never
    /// halfway. Once the cleanup has begun, no such step starts: the thread waits for the
    /// process to exit.
    package static func uninterrupted<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        gate.enter()
        defer { gate.leave() }
        return try body()
    }

    /// For a signal's cleanup: waits for a step under way (``uninterrupted(_:)``), lets no other
    /// begin, and takes the paths in progress. The caller removes them and exits.
    package static func takeAllForExit() -> [(path: String, isFolder: Bool)] {
        gate.close()
        return takeAll()
    }

    private static let gate = Gate()

    /// A lock that, once closed, is never given again.
    private final class Gate: @unchecked Sendable {
        private var mutex = pthread_mutex_t()
        private var closed = false

        init() { pthread_mutex_init(&mutex, nil) }

        func enter() {
            pthread_mutex_lock(&mutex)
            // The process is exiting on a signal: wait for it, holding the lock.
            while closed { pause() }
        }

        func leave() { pthread_mutex_unlock(&mutex) }

        func close() {
            pthread_mutex_lock(&mutex)
            closed = true
            pthread_mutex_unlock(&mutex)
        }
    }

    /// The paths in progress, forgotten: for the one who removes them.
    package static func takeAll() -> [(path: String, isFolder: Bool)] {
        state.withLock { state in
            defer { state.paths.removeAll() }
            return state.paths.sorted { $0.key < $1.key }.map(\.value)
        }
    }
}
