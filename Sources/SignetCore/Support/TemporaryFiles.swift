import Synchronization

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

    /// The paths in progress, forgotten: for the one who removes them.
    package static func takeAll() -> [(path: String, isFolder: Bool)] {
        state.withLock { state in
            defer { state.paths.removeAll() }
            return state.paths.sorted { $0.key < $1.key }.map(\.value)
        }
    }
}
