import Dispatch

/// Where a vault's blocking work runs: SQLite calls that may wait on another process's lock
/// (up to the busy timeout) and scrypt (a fraction of a second and up to 128 MiB), kept off
/// Swift's cooperative threads so that one slow vault never stalls unrelated tasks.
///
/// Each ``Vault`` runs its actor-isolated methods on a serial dispatch queue of its own (one
/// thread while it works, none while idle); opening and creating a vault run on one too.
final class VaultExecutor: SerialExecutor {
    private let queue = DispatchQueue(label: "signet.vault")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Runs `work` on a queue of its own and returns what it returns, leaving the calling
    /// task suspended (not blocking a thread) meanwhile.
    static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        let result: Result<T, any Error> = await withCheckedContinuation { continuation in
            DispatchQueue(label: "signet.vault.open").async {
                continuation.resume(returning: Result { () throws -> T in try work() })
            }
        }
        return try result.get()
    }
}
